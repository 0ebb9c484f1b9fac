package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

//go:embed matmul.cl
var matmulCL string

//go:embed matmul.ptx
var matmulPTX string

// Matmul computes C = A*B for row-major float32 matrices: A is m x k, B is
// k x n, C is m x n. Parameters: m, n, k int64, then buffers A, B, C. The
// iteration space is two-dimensional, Size = [n, m]: dimension 0 is the
// column of C (fastest), dimension 1 the row.
var Matmul = &device.Kernel{
	Name: "matmul",
	Params: []device.Param{
		int64Param("m"), int64Param("n"), int64Param("k"),
		bufParam("A", "m*k"), bufParam("B", "k*n"), bufParam("C", "m*n"),
	},
	Dims:   2,
	Images: images("matmul", matmulCL, matmulPTX, matmulHost),
	Sample: matmulSample,
}

// matmulHost computes the rows and columns of C in r, row by row, adding
// A[i][p]*B[p][j:] for p in order so each element sums in the device's order.
func matmulHost(a *device.HostArgs, r device.Range, team, teams int) {
	m, n, k := a.Int(0), a.Int(1), a.Int(2)
	j0, j1 := clampRange(r, 0, n)
	i0, i1 := clampRange(r, 1, m)
	A, B, C := a.F32(3), a.F32(4), a.F32(5)
	for i := i0; i < i1; i++ {
		c := C[i*n+j0 : i*n+j1]
		clear(c)
		for p, av := range A[i*k : i*k+k] {
			b := B[p*n+j0 : p*n+j1]
			b = b[:len(c)]
			for j, bv := range b {
				c[j] += av * bv
			}
		}
	}
}

func matmulSample(n int, seed int64) device.Sample {
	n = max(n, 1)
	side := isqrt(n)
	rows := max(side*3/4, 1)
	cols := max((n+rows-1)/rows, 1)
	inner := min(max(side/2, 1), 96) | 1
	r := sampleRand("matmul", n, seed)
	return device.Sample{
		Shape: device.Shape{Size: [3]int{cols, rows, 1}},
		Bufs: [][]byte{nil, nil, nil,
			randFloats(r, rows*inner, 0, 1), randFloats(r, inner*cols, 0, 1), randFloats(r, rows*cols, -9, -8)},
		Args: []device.Arg{int64Arg(rows), int64Arg(cols), int64Arg(inner), {}, {}, {}},
		Tol:  1e-4,
	}
}
