package target

import (
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Types defined on the kernel element types: a slice of one is a slice of
// its underlying type to a typed buffer parameter (kernels/doc.go: "a type
// defined on one of them").
type (
	datMeters float64
	datCount  int32
	datTicks  int64
	datFlags  uint32
)

// datDouble64 doubles n elements of a float64 buffer (in) into another (out).
var datDouble64 = &device.Kernel{
	Name: "dat_double64",
	Params: []device.Param{
		{Name: "n", Kind: device.ParamInt64},
		{Name: "in", Kind: device.ParamBuffer, Elem: device.ParamFloat64, Len: "n"},
		{Name: "out", Kind: device.ParamBuffer, Elem: device.ParamFloat64, Len: "n"},
	},
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) {
		in, out := a.F64(1), a.F64(2)
		for i := r.Lo[0]; i < r.Hi[0] && i < a.Int(0); i++ {
			out[i] = 2 * in[i]
		}
	}}},
}

// datInPlace is a kernel, name, that calls at for each of the first n
// elements (its index i) of its buffer v of elem.
func datInPlace(name string, elem device.ParamKind, at func(a *device.HostArgs, i int)) *device.Kernel {
	return &device.Kernel{
		Name: name,
		Params: []device.Param{
			{Name: "n", Kind: device.ParamInt64},
			{Name: "v", Kind: device.ParamBuffer, Elem: elem, Len: "n"},
		},
		Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) {
			for i := r.Lo[0]; i < r.Hi[0] && i < a.Int(0); i++ {
				at(a, i)
			}
		}}},
	}
}

// datNegate64 negates n elements of an int64 buffer in place.
var datNegate64 = datInPlace("dat_negate64", device.ParamInt64, func(a *device.HostArgs, i int) {
	b := a.Bytes(1)
	v := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
	v[i] = -v[i]
})

// datTopBit sets the top bit of n elements of a uint32 buffer in place.
var datTopBit = datInPlace("dat_top_bit", device.ParamUint32, func(a *device.HostArgs, i int) {
	a.U32(1)[i] |= 1 << 31
})

// A kernel with float64, int32, uint32 or int64 buffers takes slices of types
// defined on them ([]datMeters for a float64 buffer), on an offload device
// and on the initial device, and computes on their values; a slice of
// another element type is still refused.
func TestDefinedElementTypesFitTypedBuffers(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 64
	for _, dev := range []int{0, InitialDevice} {
		in, out := make([]datMeters, n), make([]datMeters, n)
		for i := range in {
			in[i] = datMeters(i) + 0.5
		}
		require.NoError(t, Target(Region{Device: Dev(dev), Kernel: datDouble64, Shape: N(n),
			Args: []Arg{Int(n), Slice(in), Slice(out)}}), "device %d: []datMeters (float64) for float64 buffers", dev)
		for i := range out {
			require.Equal(t, 2*in[i], out[i], "device %d: out[%d]", dev, i)
		}

		src, dst := make([]datCount, n), make([]datCount, n)
		for i := range src {
			src[i] = datCount(-7 * i)
		}
		require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Copy32, Shape: N(n),
			Args: []Arg{Int(n), Slice(src), Slice(dst)}}), "device %d: []datCount (int32) for int32 buffers", dev)
		assert.Equal(t, src, dst, "device %d: copy32 of []datCount", dev)

		v := make([]datTicks, n)
		for i := range v {
			v[i] = datTicks(i) << 40
		}
		require.NoError(t, Target(Region{Device: Dev(dev), Kernel: datNegate64, Shape: N(n),
			Args: []Arg{Int(n), Slice(v)}}), "device %d: []datTicks (int64) for an int64 buffer", dev)
		for i := range v {
			require.Equal(t, -(datTicks(i) << 40), v[i], "device %d: v[%d]", dev, i)
		}

		f := make([]datFlags, n)
		for i := range f {
			f[i] = datFlags(i)
		}
		require.NoError(t, Target(Region{Device: Dev(dev), Kernel: datTopBit, Shape: N(n),
			Args: []Arg{Int(n), Slice(f)}}), "device %d: []datFlags (uint32) for a uint32 buffer", dev)
		for i := range f {
			require.Equal(t, datFlags(i)|1<<31, f[i], "device %d: f[%d]", dev, i)
		}

		// The element type still has to fit: int64 values are not float64.
		err := Target(Region{Device: Dev(dev), Kernel: datDouble64, Shape: N(n), Args: []Arg{Int(n), Slice(v), Slice(out)}})
		require.ErrorContains(t, err, "want a slice of float64", "device %d: []datTicks for a float64 buffer", dev)
		require.ErrorContains(t, err, "got []target.datTicks", "device %d: []datTicks for a float64 buffer", dev)
	}
}
