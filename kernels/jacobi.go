package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

//go:embed jacobi.cl
var jacobiCL string

//go:embed jacobi.ptx
var jacobiPTX string

// Jacobi computes one 5-point Jacobi step on an nx x ny row-major grid:
// out[y][x] = 0.25*(in[y-1][x] + in[y+1][x] + in[y][x-1] + in[y][x+1]) for
// interior points, out = in on the boundary. Parameters: nx, ny int64,
// buffers in and out of nx*ny elements. The iteration space is
// two-dimensional, Size = [nx, ny] (x fastest).
var Jacobi = &device.Kernel{
	Name:   "jacobi",
	Params: []device.Param{int64Param("nx"), int64Param("ny"), bufParam("in", "nx*ny"), bufParam("out", "nx*ny")},
	Dims:   2,
	Images: images("jacobi", jacobiCL, jacobiPTX, jacobiHost),
	Sample: jacobiSample,
}

func jacobiHost(a *device.HostArgs, r device.Range, team, teams int) {
	nx, ny := a.Int(0), a.Int(1)
	x0, x1 := clampRange(r, 0, nx)
	y0, y1 := clampRange(r, 1, ny)
	if x0 == x1 {
		return
	}
	in, out := a.F32(2), a.F32(3)
	for y := y0; y < y1; y++ {
		row := y * nx
		if y == 0 || y == ny-1 {
			copy(out[row+x0:row+x1], in[row+x0:row+x1])
			continue
		}
		lo, hi := x0, x1
		if lo == 0 {
			out[row] = in[row]
			lo = 1
		}
		if hi == nx {
			out[row+nx-1] = in[row+nx-1]
			hi = nx - 1
		}
		if lo >= hi {
			continue
		}
		o := out[row+lo : row+hi]
		up := in[row-nx+lo : row-nx+hi]
		down := in[row+nx+lo : row+nx+hi]
		left := in[row+lo-1 : row+hi-1]
		right := in[row+lo+1 : row+hi+1]
		up, down, left, right = up[:len(o)], down[:len(o)], left[:len(o)], right[:len(o)]
		for i := range o {
			o[i] = 0.25 * (up[i] + down[i] + left[i] + right[i])
		}
	}
}

func jacobiSample(n int, seed int64) device.Sample {
	n = max(n, 1)
	nx := max(isqrt(n)+3, 3)
	ny := max(n/nx, 3)
	r := sampleRand("jacobi", n, seed)
	return device.Sample{
		Shape: device.Shape{Size: [3]int{nx, ny, 1}},
		Bufs:  [][]byte{nil, nil, randFloats(r, nx*ny, 0, 1), randFloats(r, nx*ny, -9, -8)},
		Args:  []device.Arg{int64Arg(nx), int64Arg(ny), {}, {}},
		Tol:   1e-6,
	}
}
