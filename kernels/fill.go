package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

//go:embed fill.cl
var fillCL string

//go:embed fill.ptx
var fillPTX string

// Fill sets x[i] = v for i in [0, n). Parameters: n int64, v float32, x a
// float32 buffer of at least n elements. One-dimensional iteration space of
// n.
var Fill = &device.Kernel{
	Name:   "fill",
	Params: []device.Param{int64Param("n"), float32Param("v"), bufParam("x", "n")},
	Dims:   1,
	Images: images("fill", fillCL, fillPTX, fillHost),
	Sample: fillSample,
}

func fillHost(a *device.HostArgs, r device.Range, team, teams int) {
	lo, hi := clampRange(r, 0, a.Int(0))
	v := a.Float32(1)
	x := a.F32(2)[lo:hi]
	for i := range x {
		x[i] = v
	}
}

func fillSample(n int, seed int64) device.Sample {
	n = max(n, 1)
	r := sampleRand("fill", n, seed)
	v := 1 + r.Float32()
	return device.Sample{
		Shape: shape1(n),
		Bufs:  [][]byte{nil, nil, randFloats(r, n, -2, -1)},
		Args:  []device.Arg{int64Arg(n), float32Arg(v), {}},
	}
}
