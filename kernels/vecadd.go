package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

//go:embed vecadd.cl
var vecaddCL string

//go:embed vecadd.ptx
var vecaddPTX string

// VecAdd computes c[i] = a[i] + b[i] for i in [0, n). Parameters: n int64,
// a, b and c float32 buffers of at least n elements. One-dimensional
// iteration space of n.
var VecAdd = &device.Kernel{
	Name:   "vecadd",
	Params: []device.Param{int64Param("n"), bufParam("a", "n"), bufParam("b", "n"), bufParam("c", "n")},
	Dims:   1,
	Images: images("vecadd", vecaddCL, vecaddPTX, vecaddHost),
	Sample: vecaddSample,
}

func vecaddHost(a *device.HostArgs, r device.Range, team, teams int) {
	lo, hi := clampRange(r, 0, a.Int(0))
	x := a.F32(1)[lo:hi]
	y := a.F32(2)[lo:hi]
	z := a.F32(3)[lo:hi]
	y, z = y[:len(x)], z[:len(x)]
	for i, xv := range x {
		z[i] = xv + y[i]
	}
}

func vecaddSample(n int, seed int64) device.Sample {
	n = max(n, 1)
	r := sampleRand("vecadd", n, seed)
	return device.Sample{
		Shape: shape1(n),
		Bufs:  [][]byte{nil, randFloats(r, n, 0.5, 1.5), randFloats(r, n, 0.5, 1.5), randFloats(r, n, -9, -8)},
		Args:  []device.Arg{int64Arg(n), {}, {}, {}},
		Tol:   1e-5,
	}
}
