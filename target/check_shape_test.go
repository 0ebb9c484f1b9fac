package target

import (
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A launch shape that is not one (a zero or negative size, negative teams
// or threads) is refused before any device work, naming the kernel, on
// an offload device and on the initial device; the kernel does not run.
func TestBadShapeRefused(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	for _, dev := range []int{0, len(r.devs)} {
		for _, c := range []struct {
			name  string
			shape Shape
			want  string
		}{
			{"size 0", Shape{Size: [3]int{0, 1, 1}}, "dimension 0 must be at least 1"},
			{"negative size", Shape{Size: [3]int{-4, 1, 1}}, "dimension 0 must be at least 1"},
			{"negative second size", Shape{Size: [3]int{8, -1, 1}}, "dimension 1 is negative"},
			{"negative teams", Shape{Size: [3]int{8, 1, 1}, Teams: -1}, "must be 0 (runtime picks) or positive"},
			{"negative threads", Shape{Size: [3]int{8, 1, 1}, Threads: -2}, "must be 0 (runtime picks) or positive"},
			{"two dimensions, the first of size 1", Shape{Size: [3]int{1, 8, 1}}, "uses 2 dimensions; the kernel iterates over 1"},
			{"three dimensions, the first of size 1", Shape{Size: [3]int{1, 1, 8}}, "uses 3 dimensions; the kernel iterates over 1"},
		} {
			x, y := vecs(8)
			reg := saxpyRegion(dev, 8, 2, x, y, To(x), ToFrom(y))
			reg.Shape = c.shape
			err := Target(reg)
			require.ErrorContains(t, err, "target: kernel saxpy: launch shape", "device %d: %s", dev, c.name)
			require.ErrorContains(t, err, c.want, "device %d: %s", dev, c.name)
			for i := range y {
				require.Equal(t, float32(2*i), y[i], "device %d: %s: y[%d] after the refused region", dev, c.name, i)
			}
		}
	}
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the refused regions")
}

// A device allocation that fails while a construct maps its items is the
// construct's error, with the device's reason (out of memory), not some
// other; what the construct had mapped before it is unmapped and freed.
func TestAllocFailureIsTheConstructsError(t *testing.T) {
	r := faultRuntime(t)
	noLeak(t, r)
	for n := 1; n <= 2; n++ {
		x, y := vecs(16)
		faultPlan.FailNth(faulty.Alloc, n, device.CodeOutOfResources)
		err := Target(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y)))
		faultPlan.Reset()
		require.True(t, isInjected(err, faulty.Alloc), "alloc %d failing: Target returned %v; want the alloc failure", n, err)
		assert.Equal(t, device.CodeOutOfResources, device.CodeOf(err), "alloc %d failing: the error's code", n)
		assert.Empty(t, mappingEntries(0), "alloc %d failing: the present table after the failed construct", n)
		for i := range y {
			require.Equal(t, float32(2*i), y[i], "alloc %d failing: y[%d] after the failed construct", n, i)
		}
	}
}

// A region given fewer or more arguments than its kernel has parameters
// is refused before any device work, saying how many the kernel takes,
// on an offload device and on the initial device.
func TestWrongArgumentCountRefused(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	for _, dev := range []int{0, len(r.devs)} {
		x, y := vecs(8)
		for _, args := range [][]Arg{
			{Int(8), Float32(2), Slice(x)},
			{Int(8), Float32(2), Slice(x), Slice(y), Int(1)},
			nil,
		} {
			err := Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(8), Maps: []Map{To(x), ToFrom(y)}, Args: args})
			require.ErrorContains(t, err, fmt.Sprintf("target: kernel saxpy takes 4 arguments, got %d", len(args)), "device %d: %d arguments", dev, len(args))
			for i := range y {
				require.Equal(t, float32(2*i), y[i], "device %d: %d arguments: y[%d] after the refused region", dev, len(args), i)
			}
		}
	}
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the refused regions")
}

// A device pointer argument whose allocation holds less than one element
// from the pointer to its end is refused when the kernel needs one
// element (n = 1), on an offload device and on the initial device: a
// kernel must not read past the allocation.
func TestPointerShortOfOneElementRefused(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	for _, dev := range []int{0, len(r.devs)} {
		p, err := AllocMem(64, dev)
		require.NoError(t, err, "device %d: AllocMem", dev)
		x := []float32{1}
		for _, c := range []struct {
			off  int
			want string
		}{{62, "of 0 float32 elements, but the kernel needs 1"}, {60, ""}} {
			err := Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(1),
				Args: []Arg{Int(1), Float32(2), Slice(x), Ptr(p + DevicePtr(c.off))}})
			if c.want == "" {
				require.NoError(t, err, "device %d: y one float32 before the allocation's end", dev)
				continue
			}
			require.ErrorContains(t, err, c.want, "device %d: y %d bytes before the allocation's end", dev, 64-c.off)
		}
		require.NoError(t, FreeMem(p, dev))
	}
}

// On the initial device, a device pointer argument that is not initial
// device memory is refused for a buffer parameter without a length (the
// kernel would get no memory), naming the argument; the kernel does not
// run.
func TestInitialDeviceUnknownPointerRefused(t *testing.T) {
	r := hostRuntime(t)
	b := []byte{7}
	err := Target(Region{Device: Dev(len(r.devs)), Kernel: tgtPoke, Shape: N(1), Args: []Arg{Ptr(DevicePtr(0x10))}})
	require.ErrorContains(t, err, "target: kernel tgt_poke argument 0:", "a pointer the initial device did not allocate")
	x, y := vecs(4)
	err = Target(Region{Device: Dev(len(r.devs)), Kernel: kernels.Saxpy, Shape: N(4), Args: []Arg{Int(4), Float32(2), Slice(x), Ptr(DevicePtr(0x10))}})
	require.ErrorContains(t, err, "target: kernel saxpy argument 3 (y):", "a pointer the initial device did not allocate, for a parameter with a length")
	assert.Equal(t, float32(2), y[1], "y after the refused region")
	p, err := AllocMem(8, len(r.devs))
	require.NoError(t, err)
	defer FreeMem(p, len(r.devs))
	require.NoError(t, Target(Region{Device: Dev(len(r.devs)), Kernel: tgtPoke, Shape: N(1), Args: []Arg{Ptr(p)}}), "initial device memory")
	require.NoError(t, Memcpy(Host(b), On(len(r.devs), p), 1))
	assert.Equal(t, byte(42), b[0], "the kernel's write to initial device memory")
}

// A slice argument that a map clause maps only in part (map(to: x[:8])
// for a kernel given all of x) has no device copy the kernel could use:
// the construct fails naming the argument, and the kernel does not run.
func TestArgumentMappedInPartRefused(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(16)
	err := Target(saxpyRegion(0, 16, 2, x, y, To(x[:8])))
	require.ErrorContains(t, err, "target: kernel saxpy argument 2 (x):", "x mapped in part")
	for i := range y {
		require.Equal(t, float32(2*i), y[i], "y[%d] after the failed construct", i)
	}
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the failed construct")
}

// tgtIota sets x[i] = i over its shape: a kernel whose only parameter is
// a buffer, whose length is the shape's size.
var tgtIota = &device.Kernel{
	Name:   "tgt_iota",
	Params: []device.Param{device.BufferParam("x", device.ParamFloat32, "Shape.Size[0]")},
	Dims:   1,
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) {
		x := a.F32(0)
		for i := r.Lo[0]; i < r.Hi[0]; i++ {
			x[i] = float32(i)
		}
	}}},
}

// A kernel with only buffer parameters still has their lengths checked:
// a slice shorter than the shape asks for is refused, on an offload
// device and on the initial device; one long enough is filled.
func TestBufferOnlyKernelLengthChecked(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	for _, dev := range []int{0, len(r.devs)} {
		short := make([]float32, 4)
		err := Target(Region{Device: Dev(dev), Kernel: tgtIota, Shape: N(8), Args: []Arg{Slice(short)}})
		require.ErrorContains(t, err, "target: kernel tgt_iota argument 0 (x): slice of 4 float32 elements, but the kernel needs 8", "device %d: a slice of 4 for 8 iterations", dev)
		x := make([]float32, 8)
		require.NoError(t, Target(Region{Device: Dev(dev), Kernel: tgtIota, Shape: N(8), Args: []Arg{Slice(x)}}), "device %d: a slice of 8", dev)
		assert.Equal(t, float32(7), x[7], "device %d: x[7]", dev)
	}
}
