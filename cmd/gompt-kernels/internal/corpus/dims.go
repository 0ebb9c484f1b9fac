package corpus

// Stencil2D is a 2-D five-point stencil: dimension 0 (x) varies fastest.
// out is written at the point's own index on every path: it maps from.
//
//gompt:kernel dims=nx,ny
func Stencil2D(x, y int, nx, ny int, w float32, in, out []float32) {
	i := y*nx + x
	if x == 0 || y == 0 || x == nx-1 || y == ny-1 {
		out[i] = in[i]
		return
	}
	out[i] = in[i] + w*(in[i-1]+in[i+1]+in[i-nx]+in[i+nx]-4*in[i])
}

// Box3D averages a 3-D neighbourhood, indexing in[(z*ny+y)*nx+x].
//
//gompt:kernel dims=nx,ny,nz
func Box3D(x, y, z int, nx, ny, nz int, in, out []float64) {
	var s float64
	cnt := 0
	for dz := -1; dz <= 1; dz++ {
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				u, v, t := x+dx, y+dy, z+dz
				if u < 0 || v < 0 || t < 0 || u >= nx || v >= ny || t >= nz {
					continue
				}
				s += in[(t*ny+v)*nx+u]
				cnt++
			}
		}
	}
	out[z*nx*ny+y*nx+x] = s / float64(cnt)
}

// MatMul is C = A*B over the points (j, i) of C: the inner product's
// indices are proven in range (no bounds test on a device).
//
//gompt:kernel dims=n,m len(A)=m*k len(B)=k*n len(C)=m*n
func MatMul(j, i int, m, n, k int, A, B, C []float32) {
	var acc float32
	for p := 0; p < k; p++ {
		acc += A[i*k+p] * B[p*n+j]
	}
	C[i*n+j] = acc
}

// Partial writes only some points' elements: out maps tofrom, so that
// the others keep their values.
//
//gompt:kernel dims=n
func Partial(i int, n int, in []int64, out []int64) {
	if in[i]%3 == 0 {
		out[i] = in[i] * 2
	}
}

// Transpose writes out at a point's transposed index: not its own linear
// index, so out maps tofrom.
//
//gompt:kernel dims=nx,ny
func Transpose(x, y int, nx, ny int, in, out []uint8) {
	out[x*ny+y] = in[y*nx+x] + 1
}

// OutOfRange reads and writes outside its slices, which panics in Go and
// fails the launch on every device (its test checks the message).
//
//gompt:kernel dims=n
func OutOfRange(i int, n int, in, out []int32) {
	out[i] = in[i+1] + in[i-1]
	out[i+n] = 5
}

// SplitForms tests whether its point is on the boundary with every
// comparison of x a split knows (<, <=, >, >=, == 0, == nx-1) and with
// tests of no x, which hold on whole rows (y == ny-1) or everywhere
// (ny == 3). Its then branch changes a value the rest of the body reads and
// leaves early at one column only; the statements before the test run on
// both sides. a and b move the interior's ends anywhere: below 0, past nx,
// crossing each other, at the ends of int.
//
//gompt:kernel dims=nx,ny len(in)=nx*ny len(out)=nx*ny
func SplitForms(x, y int, nx, ny, a, b int, in, out []float32) {
	i := y*nx + x
	v := in[i]
	if x <= a || x < 2 || x > nx-b || x >= nx-2 || y == ny-1 || ny == 3 || x == nx-1 {
		v = 2 * v
		if x == 1 {
			out[i] = v
			return
		}
	} else {
		v = in[i-1] + 3*in[i+1]
	}
	out[i] = v + 1
}
