package target

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The memory routines on offload devices: device addresses of mapped
// buffers, associations, and MemcpyRect's bounds.

// memWithin runs fn, failing the test if it does not return in 20s (a
// routine that left a device's lock held makes the next one wait for
// ever).
func memWithin(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		require.FailNow(t, what+" did not return in 20s: a device lock was left held")
	}
}

// Memcpy and Memset at the device address of a mapped buffer (MappedPtr),
// at an offset, reach the buffer's device copy and are bounded by its end;
// an address in nothing is an error naming the device; and the device's
// allocations work as before afterwards. On the host device and OpenCL.
func TestRoutinesOnMappedBufferAddresses(t *testing.T) {
	r, cl := clRuntime(t)
	noLeakOn(t, r)
	devs := withCL(cl, 0)
	for _, dev := range devs {
		x := make([]int32, 16)
		require.NoError(t, EnterData(dev, To(x)), "device %d", dev)
		p, err := MappedPtr(x, dev)
		require.NoError(t, err, "device %d", dev)
		require.NoError(t, Memcpy(On(dev, p).Add(8), Host([]int32{11, 12, 13, 14}), 16), "device %d: Memcpy to the mapped buffer at +8", dev)
		require.NoError(t, Memset(On(dev, p).Add(60), 0xff, 4), "device %d: Memset of the mapped buffer's last element", dev)
		out := make([]int32, 3)
		require.NoError(t, Memcpy(Host(out), On(dev, p).Add(12), 12), "device %d: Memcpy from the mapped buffer at +12", dev)
		assert.Equal(t, []int32{12, 13, 14}, out, "device %d: Memcpy from the mapped buffer at +12", dev)
		err = Memcpy(Host(out), On(dev, p).Add(56), 12)
		assert.ErrorContains(t, err, "out of bounds, only 8 bytes there", "device %d: Memcpy past the mapped buffer", dev)
		err = Memcpy(On(dev, 0x10), Host(out), 4)
		assert.ErrorContains(t, err, fmt.Sprintf("memcpy destination: 0x10 is not inside any allocation or mapped buffer on device %d (%s)", dev, r.devs[dev].id), "device %d", dev)
		memWithin(t, fmt.Sprintf("device %d: AllocMem after the copies", dev), func() {
			q, err := AllocMem(64, dev)
			if assert.NoError(t, err, "device %d: AllocMem after the copies", dev) {
				assert.NoError(t, FreeMem(q, dev), "device %d", dev)
			}
		})
		require.NoError(t, ExitData(dev, From(x)), "device %d", dev)
		assert.Equal(t, []int32{0, 0, 11, 12, 13, 14, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1}, x, "device %d: x copied back", dev)
	}
}

// FreeMem of an allocation that two host ranges are associated with names
// the one at the lowest host address and says how many more there are,
// whichever was associated first; it frees nothing until the last is
// disassociated.
func TestFreeMemNamesTheLowestAssociation(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(256, 0)
	require.NoError(t, err)
	h := make([]byte, 256)
	lo, mid, hi := h[0:16], h[64:80], h[128:160]
	rng := func(b []byte) string { return mapping.RangeString(addr(b), len(b)) }
	require.NoError(t, Associate(hi, p, 128, 0))
	require.NoError(t, Associate(mid, p, 64, 0))
	require.NoError(t, Associate(lo, p, 0, 0))
	wantMemErr(t, "free with three associations", FreeMem(p, 0), device.CodeInvalidArgument,
		"host memory "+rng(lo)+" and 2 more host ranges is still associated with it")
	require.NoError(t, Disassociate(lo, 0))
	wantMemErr(t, "free with two associations", FreeMem(p, 0), device.CodeInvalidArgument,
		"host memory "+rng(mid)+" and 1 more host ranges is still associated with it")
	require.NoError(t, Disassociate(mid, 0))
	err = FreeMem(p, 0)
	wantMemErr(t, "free with one association", err, device.CodeInvalidArgument,
		"host memory "+rng(hi)+" is still associated with it")
	assert.NotContains(t, err.Error(), "more host ranges", "free with one association")
	require.NoError(t, Disassociate(hi, 0))
	require.NoError(t, FreeMem(p, 0))
}

// Associate at the address just past an allocation's end names it as in
// no allocation (it is not "past the end" of the one before); where the
// device placed the next allocation there, associating at its start works.
func TestAssociateAtAnAllocationsEnd(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	small := make([]byte, 16)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	wantMemErr(t, "associate at the end of the only allocation", Associate(small, p+64, 0, 0), device.CodeInvalidArgument,
		fmt.Sprintf("%v is not inside any live allocation made by target.AllocMem on that device", p+64))
	require.NoError(t, FreeMem(p, 0))

	ps := make([]DevicePtr, 16)
	for i := range ps {
		ps[i], err = AllocMem(64, 0)
		require.NoError(t, err)
	}
	adjacent := 0
	for _, a := range ps {
		for _, b := range ps {
			if b != a+64 {
				continue
			}
			adjacent++
			for range 8 { // the allocations are found in map order: several tries
				require.NoError(t, Associate(small, b, 0, 0), "associate at the start of allocation %v, which begins where %v ends", b, a)
				require.NoError(t, Memcpy(On(0, a).Add(64), Host([]byte("sixteen bytes!!!")), 16), "Memcpy to %v", b)
				require.NoError(t, Update(0, From(small)))
				require.Equal(t, "sixteen bytes!!!", string(small), "associated slice at %v after update", b)
				require.NoError(t, Disassociate(small, 0))
				clear(small)
			}
		}
	}
	t.Logf("%d of 16 allocations of 64 bytes start where another ends", adjacent)
	for _, q := range ps {
		require.NoError(t, FreeMem(q, 0))
	}
}

// Associate and Disassociate with a device number that names no device
// fail and associate nothing.
func TestAssociateOnANonexistentDevice(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	h := make([]int32, 4)
	for _, dev := range []int{7, len(r.devs) + 1, -12} {
		err := Associate(h, p, 0, dev)
		require.ErrorIs(t, err, ErrDevice, "Associate on device %d", dev)
		assert.ErrorContains(t, err, "target: associate: ", "Associate on device %d", dev)
		err = Disassociate(h, dev)
		require.ErrorIs(t, err, ErrDevice, "Disassociate on device %d", dev)
		assert.ErrorContains(t, err, "target: disassociate: ", "Disassociate on device %d", dev)
	}
	assert.False(t, IsPresent(h, 0), "h after refused associations")
	assert.Zero(t, r.devs[0].table.Len(), "present table after refused associations: %v", r.devs[0].table.Entries())
	require.NoError(t, FreeMem(p, 0), "free after refused associations")
}

// A rectangle whose last byte is exactly the largest int is checked
// against the memory like any other: out of bounds, not an overflow.
func TestMemcpyRectEndingAtMaxInt(t *testing.T) {
	hostRuntime(t)
	a, b := make([]byte, 64), make([]byte, 64)
	const n = math.MaxInt / 7 // 7 divides 2^63-1
	err := MemcpyRect(Host(a), Host(b), 7, []int{1}, []int{n - 1}, []int{0}, []int{n}, []int{1})
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	assert.ErrorContains(t, err, fmt.Sprintf("destination host slice %#x: volume [1] at offset [%d] in dimensions [%d] of 7-byte elements reaches byte %d, out of bounds: only 64 bytes there",
		addr(a), n-1, n, math.MaxInt))
	err = MemcpyRect(Host(a), Host(b), 1, []int{1, 1}, []int{0, 0}, []int{n - 1, 6}, []int{1, 1}, []int{n, 7})
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	assert.ErrorContains(t, err, fmt.Sprintf("source host slice %#x: volume [1 1] at offset [%d 6] in dimensions [%d 7] of 1-byte elements reaches byte %d, out of bounds: only 64 bytes there",
		addr(b), n-1, n, math.MaxInt))
}

// MemcpyRect refuses a dstOff, srcOff, dstDims or srcDims whose length is
// not the volume's, each alone, longer or shorter, naming the lengths;
// nothing is copied.
func TestMemcpyRectEachArgumentOfTheWrongLength(t *testing.T) {
	hostRuntime(t)
	a, b := make([]byte, 64), make([]byte, 64)
	for i := range b {
		b[i] = byte(i + 1)
	}
	for arg := range 4 {
		for _, n := range []int{1, 3} {
			args := [4][]int{{0, 0}, {0, 0}, {8, 8}, {8, 8}}
			args[arg] = make([]int, n)
			for i := range args[arg] {
				args[arg][i] = args[(arg/2)*2][0] // offsets 0, dims 8
			}
			lens := [4]int{2, 2, 2, 2}
			lens[arg] = n
			name := [...]string{"dstOff", "srcOff", "dstDims", "srcDims"}[arg]
			err := MemcpyRect(Host(a), Host(b), 1, []int{2, 2}, args[0], args[1], args[2], args[3])
			require.ErrorIs(t, err, device.ErrInvalidArgument, "%s of length %d", name, n)
			assert.ErrorContains(t, err, fmt.Sprintf("volume has 2 dimensions but dstOff, srcOff, dstDims and srcDims have %d, %d, %d and %d; all must have the same",
				lens[0], lens[1], lens[2], lens[3]), "%s of length %d", name, n)
			assert.Equal(t, make([]byte, 64), a, "destination after a refused MemcpyRect (%s of length %d)", name, n)
		}
	}
}

// MemcpyRect where the rows (or the planes) follow each other on one side
// only copies row by row (plane by plane) all the same: only rows that
// follow each other on both sides are one piece. Host to host, and into,
// out of and within the host device and OpenCL.
func TestMemcpyRectContiguousOnOneSideOnly(t *testing.T) {
	r, cl := clRuntime(t)
	noLeakOn(t, r)
	cases := []rectCase{
		{"2-D, source rows follow each other", []int{3, 6}, []int{1, 1}, []int{1, 0}, []int{5, 8}, []int{4, 6}},
		{"2-D, destination rows follow each other", []int{3, 6}, []int{1, 0}, []int{0, 2}, []int{5, 6}, []int{4, 9}},
		{"3-D, source planes follow each other", []int{2, 3, 4}, []int{0, 1, 0}, []int{1, 0, 0}, []int{3, 5, 4}, []int{3, 3, 4}},
		{"3-D, destination planes follow each other", []int{2, 3, 4}, []int{1, 0, 0}, []int{0, 1, 0}, []int{3, 3, 4}, []int{2, 4, 4}},
		{"3-D, rows follow each other on both sides, planes on one", []int{2, 2, 4}, []int{0, 0, 0}, []int{0, 1, 0}, []int{2, 2, 4}, []int{3, 4, 4}},
	}
	devs := withCL(cl, 0)
	for _, c := range cases {
		src, dst0, want := c.data()
		got := append([]int32(nil), dst0...)
		require.NoError(t, c.copy(Host(got), Host(src)), "%s, host to host", c.name)
		assert.Equal(t, want, got, "%s, host to host", c.name)
		for _, dev := range devs {
			d, err := AllocMem(4*len(dst0), dev)
			require.NoError(t, err)
			s, err := AllocMem(4*len(src), dev)
			require.NoError(t, err)
			require.NoError(t, Memcpy(On(dev, s), Host(src), 4*len(src)))
			for _, way := range []string{"host to device", "device to host", "within the device"} {
				got := append([]int32(nil), dst0...)
				require.NoError(t, Memcpy(On(dev, d), Host(got), 4*len(got)))
				switch way {
				case "host to device":
					require.NoError(t, c.copy(On(dev, d), Host(src)), "%s, %s %d", c.name, way, dev)
				case "device to host":
					require.NoError(t, c.copy(Host(got), On(dev, s)), "%s, %s %d", c.name, way, dev)
				case "within the device":
					require.NoError(t, c.copy(On(dev, d), On(dev, s)), "%s, %s %d", c.name, way, dev)
				}
				if way != "device to host" {
					require.NoError(t, Memcpy(Host(got), On(dev, d), 4*len(got)))
				}
				assert.Equal(t, want, got, "%s, %s %d", c.name, way, dev)
			}
			require.NoError(t, FreeMem(d, dev))
			require.NoError(t, FreeMem(s, dev))
		}
	}
}

// Every memory routine given a device number that names no device fails
// with ErrDevice, naming the routine's side where it has two, and does
// nothing: the allocation named on the real device is untouched.
func TestRoutinesOnANonexistentDevice(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	require.NoError(t, Memset(On(0, p), 5, 64))
	h := make([]byte, 64)
	for _, bad := range []int{9, -12} {
		q, err := AllocMem(64, bad)
		assert.ErrorIs(t, err, ErrDevice, "AllocMem on device %d", bad)
		assert.Zero(t, q, "AllocMem on device %d", bad)
		assert.ErrorIs(t, FreeMem(p, bad), ErrDevice, "FreeMem on device %d", bad)
		err = Memcpy(On(bad, p), Host(h), 8)
		assert.ErrorIs(t, err, ErrDevice, "Memcpy to device %d", bad)
		assert.ErrorContains(t, err, "target: memcpy destination: ", "Memcpy to device %d", bad)
		err = Memcpy(Host(h), On(bad, p), 8)
		assert.ErrorIs(t, err, ErrDevice, "Memcpy from device %d", bad)
		assert.ErrorContains(t, err, "target: memcpy source: ", "Memcpy from device %d", bad)
		err = Memset(On(bad, p), 0, 8)
		assert.ErrorIs(t, err, ErrDevice, "Memset on device %d", bad)
		err = MemcpyRect(On(bad, p), Host(h), 1, []int{2}, []int{0}, []int{0}, []int{8}, []int{8})
		assert.ErrorIs(t, err, ErrDevice, "MemcpyRect to device %d", bad)
		assert.ErrorContains(t, err, "target: memcpy_rect destination: ", "MemcpyRect to device %d", bad)
		err = MemcpyRect(Host(h), On(bad, p), 1, []int{2}, []int{0}, []int{0}, []int{8}, []int{8})
		assert.ErrorIs(t, err, ErrDevice, "MemcpyRect from device %d", bad)
		assert.ErrorContains(t, err, "target: memcpy_rect source: ", "MemcpyRect from device %d", bad)
	}
	assert.Equal(t, make([]byte, 64), h, "host slice after the refused copies")
	require.NoError(t, Memcpy(Host(h), On(0, p), 64))
	assert.Equal(t, bytes.Repeat([]byte{5}, 64), h, "the allocation after the refused routines")
	require.NoError(t, FreeMem(p, 0), "FreeMem on the real device after refused ones")
}

// MemcpyRect with a source or destination in no allocation, or a host
// slice outside its bounds, fails naming that side, before copying.
func TestMemcpyRectBadSides(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	defer FreeMem(p, 0)
	h := make([]byte, 64)
	rect := func(dst, src Loc) error {
		return MemcpyRect(dst, src, 1, []int{2, 2}, []int{0, 0}, []int{0, 0}, []int{4, 4}, []int{4, 4})
	}
	err = rect(Host(h), On(0, 0x1000))
	assert.ErrorContains(t, err, "target: memcpy_rect source: 0x1000 is not inside any allocation or mapped buffer on device 0", "source in no allocation")
	err = rect(On(0, 0x1000), Host(h))
	assert.ErrorContains(t, err, "target: memcpy_rect destination: 0x1000 is not inside any allocation or mapped buffer on device 0", "destination in no allocation")
	err = rect(On(0, p), Host(h).Add(65))
	assert.ErrorContains(t, err, "target: memcpy_rect source: offset 65 is outside the host slice", "source past its host slice")
	err = rect(Host(h), On(InitialDevice, 0x1000))
	assert.ErrorContains(t, err, "target: memcpy_rect source: 0x1000 is not in any initial-device allocation", "source on the initial device")
	err = rect(Host(h), Host([]*int{nil, nil}))
	assert.ErrorContains(t, err, "memcpy_rect source", "source of pointers")
	assert.Equal(t, make([]byte, 64), h, "destination after the refused copies")
}

// A 3-D MemcpyRect of several planes of one row each copies every plane
// to its own place.
func TestMemcpyRectPlanesOfOneRow(t *testing.T) {
	r, cl := clRuntime(t)
	noLeakOn(t, r)
	c := rectCase{"3 planes of one row", []int{3, 1, 4}, []int{0, 1, 0}, []int{1, 0, 1}, []int{3, 3, 4}, []int{4, 2, 6}}
	src := make([]int32, size(c.srcDims))
	for i := range src {
		src[i] = int32(i + 1)
	}
	dst0 := make([]int32, size(c.dstDims))
	want := c.want(dst0, src)
	got := append([]int32(nil), dst0...)
	require.NoError(t, c.copy(Host(got), Host(src)))
	assert.Equal(t, want, got, "host to host")
	devs := withCL(cl, 0, InitialDevice)
	for _, dev := range devs {
		d, err := AllocMem(4*len(dst0), dev)
		require.NoError(t, err)
		require.NoError(t, Memset(On(dev, d), 0, 4*len(dst0)))
		require.NoError(t, c.copy(On(dev, d), Host(src)), "host to device %d", dev)
		got := make([]int32, len(dst0))
		require.NoError(t, Memcpy(Host(got), On(dev, d), 4*len(got)))
		assert.Equal(t, want, got, "host to device %d", dev)
		require.NoError(t, FreeMem(d, dev))
	}
}

// IsPresent and IsAccessible of a device number that names no device are
// false: no device there has s, nor can use it.
func TestPresenceOnANonexistentDevice(t *testing.T) {
	r := hostRuntime(t)
	x := make([]float32, 8)
	require.NoError(t, EnterData(0, To(x)))
	defer ExitData(0, Delete(x))
	require.True(t, IsPresent(x, 0), "x on device 0 after enter data")
	require.True(t, IsAccessible(x, InitialDevice), "x on the initial device")
	for _, bad := range []int{len(r.devs) + 1, 40, -12} {
		assert.False(t, IsPresent(x, bad), "IsPresent on device %d", bad)
		assert.False(t, IsAccessible(x, bad), "IsAccessible on device %d", bad)
	}
}

// A rectangle whose byte offsets reach 2^64 or more is refused as more
// than an int can count, not taken modulo 2^64 (which would make it look
// small and in bounds).
func TestMemcpyRectByteOffsetsPast2To64(t *testing.T) {
	hostRuntime(t)
	a, b := make([]byte, 64), make([]byte, 64)
	// The last row's end: 2^31 elements of 2^33 bytes = 2^64 bytes, 0
	// modulo 2^64.
	err := MemcpyRect(Host(a), Host(b), 1<<33, []int{1}, []int{1<<31 - 1}, []int{0}, []int{1 << 31}, []int{1})
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	assert.ErrorContains(t, err, fmt.Sprintf("destination host slice %#x: volume [1] at offset [%d] in dimensions [%d] of 8589934592-byte elements: more bytes than an int can count", addr(a), 1<<31-1, 1<<31))
	assert.Equal(t, make([]byte, 64), a, "destination after the refused copies")
}
