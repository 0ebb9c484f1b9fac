package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

//go:embed saxpy.cl
var saxpyCL string

//go:embed saxpy.ptx
var saxpyPTX string

// Saxpy computes y[i] = a*x[i] + y[i] for i in [0, n). Parameters: n int64,
// a float32, x and y float32 buffers of at least n elements. One-dimensional
// iteration space of n. It uses only what package device exports, so a
// kernel of your own can start as a copy of it (see the package comment).
var Saxpy = &device.Kernel{
	Name:   "saxpy",
	Params: saxpyParams(),
	Dims:   1,
	Images: device.Images("saxpy", saxpyHost, saxpyCL, saxpyPTX),
	Sample: saxpySample("saxpy"),
}

func saxpyParams() []device.Param {
	return []device.Param{
		device.ScalarParam("n", device.ParamInt64),
		device.ScalarParam("a", device.ParamFloat32),
		device.BufferParam("x", device.ParamFloat32, "n"),
		device.BufferParam("y", device.ParamFloat32, "n"),
	}
}

func saxpyHost(a *device.HostArgs, r device.Range, team, teams int) {
	lo, hi := r.Clamp(0, device.Value[int](a, "n"))
	alpha := device.Value[float32](a, "a")
	x := device.Slice[float32](a, "x")[lo:hi]
	y := device.Slice[float32](a, "y")[lo:hi]
	y = y[:len(x)]
	for i, xv := range x {
		y[i] = alpha*xv + y[i]
	}
}

func saxpySample(name string) func(n int, seed int64) device.Sample {
	return func(n int, seed int64) device.Sample {
		n = max(n, 1)
		r := sampleRand(name, n, seed)
		alpha := 0.5 + 1.5*r.Float32()
		return device.Sample{
			Shape: shape1(n),
			Bufs:  [][]byte{nil, nil, randFloats(r, n, 0.5, 1.5), randFloats(r, n, 0.5, 1.5)},
			Args:  []device.Arg{int64Arg(n), float32Arg(alpha), {}, {}},
			Tol:   1e-5,
		}
	}
}
