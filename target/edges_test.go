package target

// Behaviour a program relies on that mutation testing (issue 21,
// ci/mutate) found no test pinning.

import (
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A data region whose maps fail on entry returns that error and does not
// run its body; nothing stays mapped.
func TestDataRegionEntryFailureSkipsBody(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := make([]float32, 64), make([]float32, 64)
	ran := false
	err := Data(0, []Map{To(x), From(y).Present()}, func() error { ran = true; return nil })
	require.Equal(t, device.CodeNotFound, device.CodeOf(err), "data region with map(present: y) of an absent y: %v", err)
	require.False(t, ran, "the body ran although the region's maps failed")
	assert.False(t, IsPresent(x, 0), "a failed data region left x mapped")
	assert.False(t, IsPresent(y, 0), "a failed data region left y mapped")
}

// map(to: a) and map(always, from: a) in one construct are one list item
// that keeps always: a present a is copied back at the region's end,
// where without always it would stay on the device only.
func TestMergedItemKeepsAlways(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(256)
	require.NoError(t, EnterData(0, To(x), To(y)))
	// y present (enter data): only always copies it back.
	require.NoError(t, Target(saxpyRegion(0, len(x), 2, x, y, To(y), From(y).Always())))
	checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
	require.NoError(t, ExitData(0, Delete(x), Delete(y)))
}

// Memcpy from device memory at an offset to the host copies the bytes from
// that offset, on the host device and on the initial device, and the whole
// of an initial-device allocation is usable.
func TestMemcpyFromAnOffset(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	src := make([]byte, 64)
	for i := range src {
		src[i] = byte(i + 1)
	}
	for _, dev := range []int{0, len(r.devs)} {
		p, err := AllocMem(len(src), dev)
		require.NoError(t, err)
		require.NoError(t, Memcpy(On(dev, p), Host(src), len(src)))
		got := make([]byte, 16)
		require.NoError(t, Memcpy(Host(got), On(dev, p).Add(48), 16))
		for i, b := range got {
			require.Equal(t, src[48+i], b, "device %d: byte %d from offset 48", dev, i)
		}
		// The allocation's last byte, through a one-byte Memset and copy.
		require.NoError(t, Memset(On(dev, p).Add(len(src)-1), 0xee, 1))
		last := make([]byte, 2)
		require.NoError(t, Memcpy(Host(last), On(dev, p).Add(len(src)-2), 2))
		require.Equal(t, []byte{src[len(src)-2], 0xee}, last, "device %d: last two bytes", dev)
		require.NoError(t, FreeMem(p, dev))
	}
}

// Loc.Add(0) on host memory is the same memory, and an empty host slice
// is a valid side of an empty copy.
func TestHostLocEdges(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(16, 0)
	require.NoError(t, err)
	defer FreeMem(p, 0)
	src := []byte("0123456789abcdef")
	require.NoError(t, Memcpy(On(0, p), Host(src).Add(0), 16), "Memcpy from Host(src).Add(0)")
	dst := make([]byte, 16)
	require.NoError(t, Memcpy(Host(dst).Add(0), On(0, p), 16), "Memcpy to Host(dst).Add(0)")
	require.Equal(t, string(src), string(dst), "Memcpy to Host(dst).Add(0)")
	assert.NoError(t, Memcpy(Host([]byte(nil)), On(0, p), 0), "empty copy to a nil host slice")
	assert.ErrorContains(t, Memcpy(Host(dst).Add(17), On(0, p), 0), "offset 17 is outside the host slice", "host offset past the slice")
}

// A default-device ICV naming no device falls back to the initial device
// (OMP_TARGET_OFFLOAD=default); the same number given explicitly is an
// error.
func TestDefaultDeviceOutOfRangeFallsBack(t *testing.T) {
	r := hostRuntime(t)
	old := GetDefaultDevice()
	t.Cleanup(func() { SetDefaultDevice(old) })
	SetDefaultDevice(len(r.devs) + 5)
	x, y := vecs(64)
	require.NoError(t, Target(saxpyRegion(DefaultDevice, len(x), 2, x, y)), "default device out of range: want the initial device")
	checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
	require.ErrorContains(t, Target(saxpyRegion(len(r.devs)+5, len(x), 2, x, y)), "out of range", "explicit device out of range")
}

// An association that does not fit its allocation is refused with the
// device range it asked for: from p, devOffset plus the slice's bytes.
func TestAssociateErrorNamesTheRange(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	defer FreeMem(p, 0)
	err = Associate(make([]byte, 40), p, 30, 0)
	require.ErrorContains(t, err, fmt.Sprintf("[%v,+70)", p), "want the error to name the device range")
}

// One runtime runs many different kernels on one device, each loaded once
// and kept: a program is not limited to one or two kernels.
func TestManyKernelsOneDevice(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 32
	for round := range 2 {
		x, y := vecs(n)
		require.NoError(t, Target(saxpyRegion(0, n, 2, x, y)), "round %d saxpy", round)
		checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
		f := make([]float32, n)
		require.NoError(t, Target(Region{Kernel: kernels.Fill, Shape: N(n), Args: []Arg{Int(n), Float32(3), Slice(f)}}), "round %d fill", round)
		c := make([]float32, n)
		require.NoError(t, Target(Region{Kernel: kernels.VecAdd, Shape: N(n), Args: []Arg{Int(n), Slice(f), Slice(f), Slice(c)}}), "round %d vecadd", round)
		src, dst := make([]int32, n), make([]int32, n)
		for i := range src {
			src[i] = int32(i * 3)
		}
		require.NoError(t, Target(Region{Kernel: kernels.Copy32, Shape: N(n), Args: []Arg{Int(n), Slice(src), Slice(dst)}}), "round %d copy32", round)
		for i := range n {
			require.Equal(t, float32(3), f[i], "round %d, element %d: fill", round, i)
			require.Equal(t, float32(6), c[i], "round %d, element %d: vecadd", round, i)
			require.Equal(t, src[i], dst[i], "round %d, element %d: copy", round, i)
		}
	}
}

// A launch shape whose third dimension is in use (sizes n x 1 x 4) on a
// kernel that iterates over one is refused, as n x 4 is: the kernel would
// see only its first plane.
func TestShapeThirdDimensionOnOneDimensionalKernel(t *testing.T) {
	hostRuntime(t)
	x, y := vecs(16)
	for _, size := range [][3]int{{16, 1, 4}, {16, 4, 1}} {
		r := saxpyRegion(0, 16, 2, x, y)
		r.Shape = Shape{Size: size}
		err := Target(r)
		assert.ErrorContains(t, err, "the kernel iterates over 1", "shape %v on a one-dimensional kernel", size)
	}
}

// GOMPT_INFO=1 prints each map operation on standard error, naming the
// device.
func TestInfoMappingLines(t *testing.T) {
	useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host", "GOMPT_INFO": "1"})
	rd, wr, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stderr
	os.Stderr = wr
	x, y := vecs(16)
	terr := Target(saxpyRegion(0, 16, 2, x, y))
	os.Stderr = old
	wr.Close()
	out, _ := io.ReadAll(rd)
	require.NoError(t, terr)
	for _, want := range []string{"gompt: host:0: alloc 64 bytes at", "gompt: host:0: copy 64 bytes host", "gompt: host:0: free 64 bytes at"} {
		assert.Contains(t, string(out), want, "GOMPT_INFO=1 output")
	}
}

// map(to: a) and map(present, from: a) in one construct are one list item
// that keeps present: an absent a is an error, not mapped.
func TestMergedItemKeepsPresent(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(64)
	err := Target(saxpyRegion(0, len(x), 2, x, y, To(y), From(y).Present()))
	require.Equal(t, device.CodeNotFound, device.CodeOf(err), "map(to: y) map(present, from: y) of an absent y: %v", err)
	require.ErrorContains(t, err, "present modifier", "map(to: y) map(present, from: y) of an absent y")
	assert.False(t, IsPresent(y, 0), "the refused y was mapped")
}

// A data region on the initial device checks its maps as an offload
// device would: bad ones are refused and the body does not run.
func TestInitialDeviceDataRegionChecksMaps(t *testing.T) {
	r := hostRuntime(t)
	ran := false
	x := make([]float32, 8)
	err := Data(len(r.devs), []Map{To(x), From(x[2:6])}, func() error { ran = true; return nil })
	require.ErrorContains(t, err, "overlaps", "data region with overlapping maps on the initial device")
	assert.False(t, ran, "the body ran")
}

// Devices' Plugin and Index name, through the plugin registry, the very
// device the runtime drives (what tools and benchmarks that talk to a
// plugin use); MappingEntries of the initial device or of no device is
// nil, and of an offload device it is that device's table: what the soak
// tests compare before and after a failure.
func TestDeviceIndexAndMappingEntriesRange(t *testing.T) {
	r := hostRuntime(t)
	x := make([]float32, 8)
	require.NoError(t, EnterData(0, To(x)))
	es := mappingEntries(0)
	if assert.Len(t, es, 1, "inspect.MappingEntries(0) with one slice mapped") {
		assert.Equal(t, addr(device.Bytes(x)), es[0].Host, "the entry's host address")
	}
	require.NoError(t, ExitData(0, Delete(x)))
	assert.Empty(t, mappingEntries(0), "inspect.MappingEntries(0) after the slice's exit data")
	for n, info := range Devices() {
		p, ok := device.Lookup(info.Plugin)
		require.True(t, ok, "device %d's plugin %q is not registered", n, info.Plugin)
		ds, err := p.Devices()
		require.NoError(t, err, "plugin %s's devices", info.Plugin)
		if assert.Less(t, info.Index, len(ds), "device %d's Index", n) {
			assert.Same(t, r.devs[n].d, ds[info.Index], "device %d (%s): the plugin's Devices()[%d] is not the device the runtime drives", n, info.ID, info.Index)
		}
	}
	for _, n := range []int{len(r.devs), InitialDevice, -7, len(r.devs) + 3} {
		assert.Nil(t, mappingEntries(n), "inspect.MappingEntries(%d)", n)
	}
}

func init() { rtmScenarios["device-index"] = deviceIndexScenario }

// Index names each device of a plugin with several: three host devices,
// each the plugin's Devices()[Index] and none another's.
func TestDeviceIndexNamesEachDeviceOfAPlugin(t *testing.T) {
	rtmRunChild(t, "device-index", "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=3")
}

func deviceIndexScenario(fail func(string, ...any), _ func(string, func())) {
	r := state()
	infos := Devices()
	if len(infos) != 3 || len(r.devs) != 3 {
		fail("GOMPT_HOST_DEVICES=3: %d devices, want 3", len(infos))
		return
	}
	p, ok := device.Lookup("host")
	if !ok {
		fail("the host plugin is not registered")
		return
	}
	ds, err := p.Devices()
	if err != nil || len(ds) != 3 {
		fail("the host plugin's devices: %d, %v; want 3", len(ds), err)
		return
	}
	for n, info := range infos {
		if info.Index != n || ds[info.Index] != r.devs[n].d {
			fail("device %d (%s): Index %d does not name the device the runtime drives", n, info.ID, info.Index)
		}
	}
}
