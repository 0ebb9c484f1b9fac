package main

//go:generate go run github.com/gompt/gompt/cmd/gompt-kernels

// heat is one explicit step of the 2-D heat equation on an nx x ny grid:
// each interior point moves toward the mean of its four neighbours by
// alpha (at most 0.25 for a stable step); the boundary keeps its
// temperature.
//
//gompt:kernel dims=nx,ny
func heat(x, y int, nx, ny int, alpha float32, in, out []float32) {
	i := y*nx + x
	if x == 0 || y == 0 || x == nx-1 || y == ny-1 {
		out[i] = in[i]
		return
	}
	c := in[i]
	out[i] = c + alpha*(in[i-1]+in[i+1]+in[i-nx]+in[i+nx]-4*c)
}
