package kernels

import "github.com/gompt/gompt/kernelrt"

// The library's kernels, each one Go function that gompt-kernels
// translates (gompt_kernels.go, gompt_*.cl, gompt_*.ptx; launchers in
// kernels/launch). var= keeps the exported names they had when they were
// written by hand, name= their kernel names.
//go:generate go run github.com/gompt/gompt/cmd/gompt-kernels -launchers launch

// empty does no work. Launch-overhead benchmarks use Empty.
//
//gompt:kernel dims=n var=Empty name=empty
func empty(i int, n int) {}

// saxpy computes y[i] = a*x[i] + y[i] (Saxpy).
//
//gompt:kernel dims=n var=Saxpy name=saxpy
func saxpy(i int, n int, a float32, x, y []float32) {
	y[i] = a*x[i] + y[i]
}

// vecadd computes c[i] = a[i] + b[i] (VecAdd).
//
//gompt:kernel dims=n var=VecAdd name=vecadd
func vecadd(i int, n int, a, b, c []float32) {
	c[i] = a[i] + b[i]
}

// fill sets x[i] = v (Fill).
//
//gompt:kernel dims=n var=Fill name=fill
func fill(i int, n int, v float32, x []float32) {
	x[i] = v
}

// copy32 copies 32-bit words: dst[i] = src[i] (Copy32).
//
//gompt:kernel dims=n var=Copy32 name=copy32
func copy32(i int, n int, src, dst []int32) {
	dst[i] = src[i]
}

// jacobi is one 5-point Jacobi step on an nx x ny row-major grid: interior
// points get the mean of their four neighbours, boundary points are copied
// (Jacobi).
//
//gompt:kernel dims=nx,ny var=Jacobi name=jacobi
func jacobi(x, y int, nx, ny int, in, out []float32) {
	i := y*nx + x
	if x == 0 || y == 0 || x == nx-1 || y == ny-1 {
		out[i] = in[i]
		return
	}
	out[i] = 0.25 * (in[i-nx] + in[i+nx] + in[i-1] + in[i+1])
}

// matmul computes element (i, j) of C = A*B for row-major m x k A and
// k x n B: the point (j, i), dimension 0 the column (Matmul).
//
//gompt:kernel dims=n,m len(A)=m*k len(B)=k*n len(C)=m*n var=Matmul name=matmul
func matmul(j, i int, m, n, k int, A, B, C []float32) {
	var acc float32
	for p := 0; p < k; p++ {
		acc += A[i*k+p] * B[p*n+j]
	}
	C[i*n+j] = acc
}

// dot is x[i]*y[i], summed over [0, n) by the reduction Dot.
//
//gompt:kernel dims=n reduce=+ var=Dot name=dot_partial
func dot(i int, n int, x, y []float32) float32 {
	return x[i] * y[i]
}

// matmulTiled computes C = A*B as matmul does, bit for bit, in 16x16
// tiles: team t computes the tile of C at tile row t/tilesX and tile column
// t%tilesX (tilesX = ceil(n/16)), its 256 threads one element each, staging
// 16x16 tiles of A and B through team arrays between barriers
// (MatmulTiled; MatmulTiledTeams gives the number of teams).
//
//gompt:kernel team=256 dims=teams len(A)=m*k len(B)=k*n len(C)=m*n var=MatmulTiled name=matmul_tiled
func matmulTiled(t, th int, teams int, m, n, k int, A, B, C []float32) {
	var tA [256]float32
	var tB [256]float32
	tilesX := max((n+15)/16, 1)
	row := t / tilesX * 16
	col := t % tilesX * 16
	ly, lx := th/16, th%16
	i, j := row+ly, col+lx
	var acc float32
	for p0 := 0; p0 < k; p0 += 16 {
		if i < m && p0+lx < k {
			tA[th] = A[i*k+p0+lx]
		} else {
			tA[th] = 0
		}
		if p0+ly < k && j < n {
			tB[th] = B[(p0+ly)*n+j]
		} else {
			tB[th] = 0
		}
		kernelrt.Barrier()
		for q := 0; q < 16; q++ {
			acc += tA[ly*16+q] * tB[q*16+lx]
		}
		kernelrt.Barrier()
	}
	if i < m && j < n {
		C[i*n+j] = acc
	}
}

// histogram counts v's values in 256 bins, h[v[i]]++ for i in [0, n): an
// array reduction (reduce(h)=+), each team counting into its own copy of
// the bins and adding it into h once (Histogram). It adds to what h holds.
//
//gompt:kernel dims=n reduce(h)=+ len(h)=256 var=Histogram name=histogram
func histogram(i int, n int, v []uint8, h []uint32) {
	h[v[i]]++
}
