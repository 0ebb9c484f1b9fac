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

// matmulTiled computes C = A*B as matmul does, bit for bit (each element
// sums its products in the order of p), in 64x64 tiles: team t computes
// the tile of C at tile row t/tilesX and tile column t%tilesX (tilesX =
// ceil(n/64)); its 256 threads, a 16x16 grid, stage 64x16 of A and 16x64
// of B through team arrays between barriers, and each computes 4x4
// elements of the tile, 16 apart, so that a thread's four values of B and
// of A serve sixteen products (register blocking, written out: a kernel's
// locals are scalars). On POCL this ran 512x512 in 22-35 ms, where 16x16
// tiles with one element per thread took 35-55 ms and the untiled Matmul
// 95-107 ms (MatmulTiled, matmul's variant: launch.RunMatmul runs it on
// OpenCL and CUDA, where it is faster, and Matmul on host devices).
//
//gompt:kernel team=256 dims=teams len(A)=m*k len(B)=k*n len(C)=m*n arg(teams)=MatmulTiledTeams var=MatmulTiled name=matmul_tiled
//gompt:variant of=matmul device=opencl,cuda
func matmulTiled(t, th int, teams int, m, n, k int, A, B, C []float32) {
	var tA [1024]float32
	var tB [1024]float32
	tilesX := max((n+63)/64, 1)
	row := t / tilesX * 64
	col := t % tilesX * 64
	ly, lx := th/16, th%16
	i0 := row + ly + 0
	i1 := row + ly + 16
	i2 := row + ly + 32
	i3 := row + ly + 48
	j0 := col + lx + 0
	j1 := col + lx + 16
	j2 := col + lx + 32
	j3 := col + lx + 48
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 float32
	for p0 := 0; p0 < k; p0 += 16 {
		if i0 < m && p0+lx < k {
			tA[(ly+0)*16+lx] = A[i0*k+p0+lx]
		} else {
			tA[(ly+0)*16+lx] = 0
		}
		if i1 < m && p0+lx < k {
			tA[(ly+16)*16+lx] = A[i1*k+p0+lx]
		} else {
			tA[(ly+16)*16+lx] = 0
		}
		if i2 < m && p0+lx < k {
			tA[(ly+32)*16+lx] = A[i2*k+p0+lx]
		} else {
			tA[(ly+32)*16+lx] = 0
		}
		if i3 < m && p0+lx < k {
			tA[(ly+48)*16+lx] = A[i3*k+p0+lx]
		} else {
			tA[(ly+48)*16+lx] = 0
		}
		if p0+ly < k && j0 < n {
			tB[ly*64+lx+0] = B[(p0+ly)*n+j0]
		} else {
			tB[ly*64+lx+0] = 0
		}
		if p0+ly < k && j1 < n {
			tB[ly*64+lx+16] = B[(p0+ly)*n+j1]
		} else {
			tB[ly*64+lx+16] = 0
		}
		if p0+ly < k && j2 < n {
			tB[ly*64+lx+32] = B[(p0+ly)*n+j2]
		} else {
			tB[ly*64+lx+32] = 0
		}
		if p0+ly < k && j3 < n {
			tB[ly*64+lx+48] = B[(p0+ly)*n+j3]
		} else {
			tB[ly*64+lx+48] = 0
		}
		kernelrt.Barrier()
		for q := 0; q < 16; q++ {
			a0 := tA[(ly+0)*16+q]
			a1 := tA[(ly+16)*16+q]
			a2 := tA[(ly+32)*16+q]
			a3 := tA[(ly+48)*16+q]
			b0 := tB[q*64+lx+0]
			b1 := tB[q*64+lx+16]
			b2 := tB[q*64+lx+32]
			b3 := tB[q*64+lx+48]
			c00 += a0 * b0
			c01 += a0 * b1
			c02 += a0 * b2
			c03 += a0 * b3
			c10 += a1 * b0
			c11 += a1 * b1
			c12 += a1 * b2
			c13 += a1 * b3
			c20 += a2 * b0
			c21 += a2 * b1
			c22 += a2 * b2
			c23 += a2 * b3
			c30 += a3 * b0
			c31 += a3 * b1
			c32 += a3 * b2
			c33 += a3 * b3
		}
		kernelrt.Barrier()
	}
	if i0 < m && j0 < n {
		C[i0*n+j0] = c00
	}
	if i0 < m && j1 < n {
		C[i0*n+j1] = c01
	}
	if i0 < m && j2 < n {
		C[i0*n+j2] = c02
	}
	if i0 < m && j3 < n {
		C[i0*n+j3] = c03
	}
	if i1 < m && j0 < n {
		C[i1*n+j0] = c10
	}
	if i1 < m && j1 < n {
		C[i1*n+j1] = c11
	}
	if i1 < m && j2 < n {
		C[i1*n+j2] = c12
	}
	if i1 < m && j3 < n {
		C[i1*n+j3] = c13
	}
	if i2 < m && j0 < n {
		C[i2*n+j0] = c20
	}
	if i2 < m && j1 < n {
		C[i2*n+j1] = c21
	}
	if i2 < m && j2 < n {
		C[i2*n+j2] = c22
	}
	if i2 < m && j3 < n {
		C[i2*n+j3] = c23
	}
	if i3 < m && j0 < n {
		C[i3*n+j0] = c30
	}
	if i3 < m && j1 < n {
		C[i3*n+j1] = c31
	}
	if i3 < m && j2 < n {
		C[i3*n+j2] = c32
	}
	if i3 < m && j3 < n {
		C[i3*n+j3] = c33
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
