package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

//go:embed copy32.cl
var copy32CL string

//go:embed copy32.ptx
var copy32PTX string

// Copy32 copies n 32-bit words: dst[i] = src[i] for i in [0, n).
// Parameters: n int64, src and dst int32 buffers of at least n elements.
// One-dimensional iteration space of n. examples/veccopy uses it.
var Copy32 = &device.Kernel{
	Name: "copy32",
	Params: []device.Param{int64Param("n"),
		{Name: "src", Kind: device.ParamBuffer, Elem: device.ParamInt32, Len: "n"},
		{Name: "dst", Kind: device.ParamBuffer, Elem: device.ParamInt32, Len: "n"}},
	Dims:   1,
	Images: images("copy32", copy32CL, copy32PTX, copy32Host),
	Sample: copy32Sample,
}

func copy32Host(a *device.HostArgs, r device.Range, team, teams int) {
	lo, hi := clampRange(r, 0, a.Int(0))
	copy(a.I32(2)[lo:hi], a.I32(1)[lo:hi])
}

func copy32Sample(n int, seed int64) device.Sample {
	n = max(n, 1)
	r := sampleRand("copy32", n, seed)
	src, dst := make([]int32, n), make([]int32, n)
	for i := range src {
		src[i], dst[i] = int32(r.Uint32()), -1
	}
	return device.Sample{
		Shape: shape1(n),
		Bufs:  [][]byte{nil, device.Bytes(src), device.Bytes(dst)},
		Args:  []device.Arg{int64Arg(n), {}, {}},
	}
}
