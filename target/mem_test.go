package target

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clRuntime is a runtime with the host plugin (device 0) and the OpenCL
// plugin. It returns the number of the first OpenCL device, or -1 when
// there is none (no driver, or built without cgo).
func clRuntime(t *testing.T) (*runtimeState, int) {
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host,opencl"})
	require.NotEmpty(t, r.devs, "no host device: %s", r.why())
	require.Equal(t, "host", r.devs[0].plugin, "no host device: %s", r.why())
	for _, d := range r.devs {
		if d.plugin == "opencl" {
			return r, d.num
		}
	}
	t.Logf("no OpenCL device: %s", r.why())
	return r, -1
}

// withCL is devs followed by clRuntime's OpenCL device cl, if there is one.
func withCL(cl int, devs ...int) []int {
	if cl >= 0 {
		devs = append(devs, cl)
	}
	return devs
}

// memInUseOf returns device n's bytes and allocations in use.
func memInUseOf(t *testing.T, r *runtimeState, n int) (int64, int) {
	t.Helper()
	mi, ok := r.devs[n].d.(device.MemInfo)
	require.True(t, ok, "device %s does not implement device.MemInfo", r.devs[n].id)
	return mi.MemInUse()
}

// noLeakOn checks that every offload device's memory returns to its level
// at the call when the test ends.
func noLeakOn(t *testing.T, r *runtimeState) {
	type use struct {
		b int64
		n int
	}
	at := make([]use, len(r.devs))
	for i := range r.devs {
		at[i].b, at[i].n = memInUseOf(t, r, i)
	}
	t.Cleanup(func() {
		for i := range r.devs {
			b, n := memInUseOf(t, r, i)
			assert.Equal(t, at[i].b, b, "device %s leaked memory: bytes in use at the end against the start", r.devs[i].id)
			assert.Equal(t, at[i].n, n, "device %s leaked memory: allocations at the end against the start", r.devs[i].id)
		}
	})
}

// A huge rectangle on a small allocation fails before anything is copied
// or any list of rows is built: the check is O(dimensions).
func TestMemcpyRectHugeVolumeFailsFast(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	defer FreeMem(p, 0)
	small := make([]byte, 64)
	huge := func(n int) error {
		return MemcpyRect(On(0, p), Host(small), 1, []int{n, n}, []int{0, 0}, []int{0, 0}, []int{n, n}, []int{n, n})
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	err = huge(4096)
	runtime.ReadMemStats(&m1)
	require.LessOrEqual(t, m1.TotalAlloc-m0.TotalAlloc, uint64(64<<10), "bytes allocated by a failing 4096x4096 memcpy_rect")
	require.ErrorIs(t, err, device.ErrInvalidArgument, "4096x4096 on 64 bytes")
	require.ErrorContains(t, err, fmt.Sprintf("destination %v on device 0 (host:0): volume [4096 4096] at offset [0 0] in dimensions [4096 4096] of 1-byte elements reaches byte 16777216, out of bounds: only 64 bytes there", p), "4096x4096 on 64 bytes")
	// The shape of the report: 4096x4096 rows of one element, which
	// built 16 million segments (1.9 GB) before failing.
	runtime.ReadMemStats(&m0)
	err = MemcpyRect(On(0, p), Host(small), 4, []int{4096, 4096, 1}, []int{0, 0, 0}, []int{0, 0, 0}, []int{4096, 4096, 1}, []int{4096, 4096, 1})
	runtime.ReadMemStats(&m1)
	require.LessOrEqual(t, m1.TotalAlloc-m0.TotalAlloc, uint64(64<<10), "bytes allocated by a failing 4096x4096x1 memcpy_rect")
	require.ErrorContains(t, err, "reaches byte 67108864, out of bounds: only 64 bytes there", "a failing 4096x4096x1 memcpy_rect")
	assert.LessOrEqual(t, testing.AllocsPerRun(10, func() { huge(65536) }), float64(64), "allocations of a failing 65536x65536 memcpy_rect")
	assert.ErrorContains(t, huge(65536), "reaches byte 4294967296, out of bounds", "65536x65536 on 64 bytes")
	// The source side is checked as well, in 3-D.
	err = MemcpyRect(Host(make([]byte, 1<<20)), Host(small), 8, []int{8, 8, 8}, []int{0, 0, 0}, []int{1, 0, 0}, []int{8, 8, 8}, []int{9, 8, 8})
	assert.ErrorIs(t, err, device.ErrInvalidArgument, "source too small")
	assert.ErrorContains(t, err, ": volume [8 8 8] at offset [1 0 0] in dimensions [9 8 8] of 8-byte elements reaches byte 4608, out of bounds: only 64 bytes there", "source too small")
}

// Every bad argument of MemcpyRect is an invalid-argument error naming it,
// including offsets and volumes whose byte offsets overflow an int.
func TestMemcpyRectBadArguments(t *testing.T) {
	hostRuntime(t)
	a, b := make([]byte, 64), make([]byte, 64)
	big := math.MaxInt
	cases := []struct {
		name                                     string
		elem                                     int
		volume, dstOff, srcOff, dstDims, srcDims []int
		want                                     string
	}{
		{"no dimensions", 1, nil, nil, nil, nil, nil, "volume has 0 dimensions; 1 to 3 are supported"},
		{"four dimensions", 1, []int{1, 1, 1, 1}, nil, nil, nil, nil, "volume has 4 dimensions"},
		{"zero element size", 0, []int{1}, []int{0}, []int{0}, []int{1}, []int{1}, "element size 0: must be positive"},
		{"lengths differ", 1, []int{1, 1}, []int{0}, []int{0, 0}, []int{1, 1}, []int{1, 1}, "dstOff, srcOff, dstDims and srcDims have 1, 2, 2 and 2"},
		{"negative volume", 1, []int{2, -1}, []int{0, 0}, []int{0, 0}, []int{4, 4}, []int{4, 4}, "volume[1] = -1: must not be negative"},
		{"negative dstOff", 1, []int{1}, []int{-5}, []int{0}, []int{4}, []int{4}, "dstOff[0] = -5: must not be negative"},
		{"negative srcOff", 1, []int{1}, []int{0}, []int{-1}, []int{4}, []int{4}, "srcOff[0] = -1: must not be negative"},
		{"negative dstDims", 1, []int{0, 0, 0}, []int{0, 0, 0}, []int{0, 0, 0}, []int{1, 1, -1}, []int{1, 1, 1}, "dstDims[2] = -1: must not be negative"},
		{"negative srcDims", 1, []int{0}, []int{0}, []int{0}, []int{1}, []int{-7}, "srcDims[0] = -7: must not be negative"},
		{"volume past dimensions", 1, []int{3, 2}, []int{0, 0}, []int{2, 0}, []int{4, 4}, []int{4, 4}, "dimension 0: volume 3 at offsets 0 (dstOff) and 2 (srcOff) exceeds dimensions 4 (dstDims) and 4 (srcDims)"},
		{"offset and volume overflow", 1, []int{2}, []int{big}, []int{0}, []int{big}, []int{4}, "dimension 0: volume 2 at offsets 9223372036854775807 (dstOff)"},
		{"byte offset overflows", 1, []int{1, 1}, []int{1 << 62, 0}, []int{0, 0}, []int{1<<62 + 1, 3}, []int{1, 3}, ": volume [1 1] at offset [4611686018427387904 0] in dimensions [4611686018427387905 3] of 1-byte elements: more bytes than an int can count"},
		{"element size overflows", 1 << 62, []int{1, 2}, []int{0, 0}, []int{0, 0}, []int{1, 2}, []int{1, 2}, "more bytes than an int can count"},
		{"strides overflow", 8, []int{2, 1, 1}, []int{0, 0, 0}, []int{0, 0, 0}, []int{2, 1 << 30, 1 << 30}, []int{2, 1, 1}, ": volume [2 1 1] at offset [0 0 0] in dimensions [2 1073741824 1073741824] of 8-byte elements: more bytes than an int can count"},
	}
	for _, c := range cases {
		err := MemcpyRect(Host(a), Host(b), c.elem, c.volume, c.dstOff, c.srcOff, c.dstDims, c.srcDims)
		assert.ErrorIs(t, err, device.ErrInvalidArgument, c.name)
		assert.ErrorContains(t, err, c.want, c.name)
	}
	// Outer dimensions too large for an int do not matter when the
	// rectangle stays inside the first plane; a zero volume copies nothing.
	assert.NoError(t, MemcpyRect(Host(a), Host(b), 1, []int{1, 2, 3}, []int{0, 1, 0}, []int{0, 0, 0}, []int{big, 4, 4}, []int{1, 2, 3}), "rectangle in the first plane of a huge array")
	assert.NoError(t, MemcpyRect(Host(a), Host(b), 4, []int{0, 1 << 40}, []int{0, 0}, []int{0, 0}, []int{1, 1 << 40}, []int{1, 1 << 40}), "empty volume")
}

// rectCase is one MemcpyRect of int32 elements.
type rectCase struct {
	name                                     string
	volume, dstOff, srcOff, dstDims, srcDims []int
}

// data gives c's source (1, 2, 3, ...), the destination before the copy
// (-1, -2, -3, ...) and the destination the copy must leave.
func (c rectCase) data() (src, dst0, want []int32) {
	src = make([]int32, size(c.srcDims))
	for i := range src {
		src[i] = int32(i + 1)
	}
	dst0 = make([]int32, size(c.dstDims))
	for i := range dst0 {
		dst0[i] = -int32(i + 1)
	}
	return src, dst0, c.want(dst0, src)
}

var rectCases = []rectCase{
	{"1-D", []int{5}, []int{3}, []int{1}, []int{9}, []int{7}},
	{"2-D with offsets", []int{3, 4}, []int{1, 2}, []int{2, 1}, []int{5, 7}, []int{6, 5}},
	{"2-D whole rows", []int{3, 6}, []int{1, 0}, []int{0, 0}, []int{5, 6}, []int{4, 6}},
	{"3-D with offsets", []int{2, 3, 4}, []int{1, 0, 2}, []int{0, 2, 1}, []int{4, 5, 7}, []int{3, 6, 5}},
	{"3-D whole planes", []int{2, 3, 4}, []int{1, 0, 0}, []int{0, 0, 0}, []int{3, 3, 4}, []int{2, 3, 4}},
}

// size returns the number of elements of an array of dims.
func size(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// index returns the linear index of idx in an array of dims.
func index(idx, dims []int) int {
	k := 0
	for i := range dims {
		k = k*dims[i] + idx[i]
	}
	return k
}

// want returns dst after copying c's rectangle from src, element by element.
func (c rectCase) want(dst, src []int32) []int32 {
	out := append([]int32(nil), dst...)
	nd := len(c.volume)
	idx := make([]int, nd)
	for {
		d, s := make([]int, nd), make([]int, nd)
		for i := range idx {
			d[i], s[i] = c.dstOff[i]+idx[i], c.srcOff[i]+idx[i]
		}
		out[index(d, c.dstDims)] = src[index(s, c.srcDims)]
		i := nd - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < c.volume[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out
		}
	}
}

func (c rectCase) copy(dst, src Loc) error {
	return MemcpyRect(dst, src, 4, c.volume, c.dstOff, c.srcOff, c.dstDims, c.srcDims)
}

// MemcpyRect copies exactly the rectangle, in every direction, on the host
// device, on OpenCL, between them, and on the initial device.
func TestMemcpyRectCopiesTheRightBytes(t *testing.T) {
	r, cl := clRuntime(t)
	noLeakOn(t, r)
	devs := withCL(cl, 0, len(r.devs))
	t.Logf("devices %v: %s", devs, r.why())
	for _, c := range rectCases {
		src, dst0, want := c.data()
		check := func(what string, got []int32) {
			t.Helper()
			assert.Equal(t, want, got, "%s, %s", c.name, what)
		}
		got := append([]int32(nil), dst0...)
		require.NoError(t, c.copy(Host(got), Host(src)), "%s, host to host", c.name)
		check("host to host", got)
		// to puts s in a new allocation on dev.
		to := func(dev int, s []int32) DevicePtr {
			t.Helper()
			p, err := AllocMem(4*len(s), dev)
			require.NoError(t, err)
			require.NoError(t, Memcpy(On(dev, p), Host(s), 4*len(s)))
			return p
		}
		back := func(dev int, p DevicePtr, n int) []int32 {
			t.Helper()
			out := make([]int32, n)
			require.NoError(t, Memcpy(Host(out), On(dev, p), 4*n))
			return out
		}
		for _, dev := range devs {
			name := r.describe(dev)
			d := to(dev, dst0)
			require.NoError(t, c.copy(On(dev, d), Host(src)), "%s, host to %s", c.name, name)
			check("host to "+name, back(dev, d, len(dst0)))
			s := to(dev, src)
			got := append([]int32(nil), dst0...)
			require.NoError(t, c.copy(Host(got), On(dev, s)), "%s, %s to host", c.name, name)
			check(name+" to host", got)
			d2 := to(dev, dst0)
			require.NoError(t, c.copy(On(dev, d2), On(dev, s)), "%s, %s to itself", c.name, name)
			check(name+" to itself", back(dev, d2, len(dst0)))
			for _, other := range devs {
				if other == dev {
					continue
				}
				d3 := to(other, dst0)
				require.NoError(t, c.copy(On(other, d3), On(dev, s)), "%s, %s to %s", c.name, name, r.describe(other))
				check(name+" to "+r.describe(other), back(other, d3, len(dst0)))
				FreeMem(d3, other)
			}
			for _, p := range []DevicePtr{d, s, d2} {
				require.NoError(t, FreeMem(p, dev))
			}
		}
	}
}

// describe names device number n for test messages.
func (r *runtimeState) describe(n int) string {
	if n == len(r.devs) {
		return "the initial device"
	}
	return fmt.Sprintf("device %d (%s)", n, r.devs[n].id)
}

// wantErr checks that err is an error of code saying each of want.
func wantMemErr(t *testing.T, what string, err error, code device.Code, want ...string) {
	t.Helper()
	if !assert.Error(t, err, what) {
		return
	}
	assert.Equal(t, code, device.CodeOf(err), "%s: code (%v)", what, err)
	for _, w := range want {
		assert.ErrorContains(t, err, w, what)
	}
}

// Associate checks the device range at the call: inside one live AllocMem
// allocation of the device; FreeMem refuses an allocation still associated.
func TestAssociateChecksTheDeviceRange(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	gone, err := AllocMem(64, 0)
	require.NoError(t, err)
	require.NoError(t, FreeMem(gone, 0))
	big, small := make([]byte, 4096), make([]byte, 16)
	bad := func(what string, err error, want ...string) {
		t.Helper()
		wantMemErr(t, what, err, device.CodeInvalidArgument, want...)
	}
	bad("4096 bytes on a 64-byte allocation", Associate(big, p, 0, 0), "extends past the allocation", "(64 bytes)", "only 64 bytes there")
	bad("offset past the end", Associate(small, p, 64, 0), "extends past the allocation")
	bad("last bytes past the end", Associate(small, p+56, 0, 0), "only 8 bytes there")
	bad("offset overflowing", Associate(small, p, math.MaxInt, 0), "extends past the allocation")
	bad("negative offset", Associate(small, p+32, -8, 0), "device offset must not be negative")
	bad("made-up pointer", Associate(small, 0xdead0000, 0, 0), "0xdead0000 is not inside any live allocation made by target.AllocMem")
	bad("freed pointer", Associate(small, gone, 0, 0), "is not inside any live allocation")
	bad("empty slice", Associate(small[:0], p, 0, 0), "empty host slice")
	require.False(t, IsPresent(big, 0), "a refused association left entries: %v", r.devs[0].table.Entries())
	require.False(t, IsPresent(small, 0), "a refused association left entries: %v", r.devs[0].table.Entries())
	require.Zero(t, r.devs[0].table.Len(), "a refused association left entries: %v", r.devs[0].table.Entries())
	wantMemErr(t, "associate on the initial device", Associate(small, p, 0, InitialDevice), device.CodeInvalidDevice,
		"names the initial device", "nothing to associate", "offload devices are 0..0")

	// Inside an allocation, ending at its last byte: accepted and used.
	h := make([]int32, 8)
	require.NoError(t, Associate(h, p+16, 16, 0))
	src := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	require.NoError(t, Memcpy(On(0, p).Add(32), Host(src), 32))
	require.NoError(t, Update(0, From(h)))
	require.Equal(t, src, h, "update from associated memory at p+32")
	// Freeing it now is refused, names the host range, and frees nothing.
	b0, n0 := memInUse(t, r)
	err = FreeMem(p, 0)
	wantMemErr(t, "free while associated", err, device.CodeInvalidArgument,
		"host memory "+mapping.RangeString(addr(device.Bytes(h)), 32)+" is still associated with it", "disassociate it first", "nothing was freed")
	b, n := memInUse(t, r)
	require.Equal(t, b0, b, "a refused FreeMem changed the bytes in use")
	require.Equal(t, n0, n, "a refused FreeMem changed the allocations in use")
	require.NoError(t, Memcpy(On(0, p), Host(src), 32), "the allocation is unusable after a refused FreeMem")
	require.NoError(t, Disassociate(h, 0))
	require.False(t, IsPresent(h, 0), "disassociated slice still present")
	require.NoError(t, FreeMem(p, 0), "free after disassociate")
}

// Associate refuses host memory that is already present on the device,
// mapped or associated, on every device: the error says so, and the
// mapping in force is the one used afterwards.
func TestAssociateOverPresentMemoryFails(t *testing.T) {
	r, cl := clRuntime(t)
	noLeakOn(t, r)
	devs := withCL(cl, 0)
	for _, dev := range devs {
		p, err := AllocMem(64, dev)
		require.NoError(t, err, "device %d", dev)
		x := []int32{1, 2, 3, 4}
		require.NoError(t, EnterData(dev, To(x)), "device %d", dev)
		wantMemErr(t, fmt.Sprintf("device %d: associate a mapped slice", dev), Associate(x, p, 0, dev), device.CodeInvalidArgument,
			"overlaps present mapping", "disassociate or unmap it first")
		wantMemErr(t, fmt.Sprintf("device %d: associate part of a mapped slice", dev), Associate(x[2:], p, 0, dev), device.CodeInvalidArgument,
			"overlaps present mapping")
		// x still has its own device copy, not p's bytes.
		require.NoError(t, Memcpy(On(dev, p), Host([]int32{9, 9, 9, 9}), 16), "device %d", dev)
		require.NoError(t, Update(dev, From(x)), "device %d", dev)
		assert.Equal(t, []int32{1, 2, 3, 4}, x, "device %d: x after a refused associate and update from", dev)
		require.NoError(t, ExitData(dev, Delete(x)), "device %d", dev)

		h := make([]int32, 8)
		require.NoError(t, Associate(h[:4], p, 0, dev), "device %d", dev)
		wantMemErr(t, fmt.Sprintf("device %d: associate over an associated range", dev), Associate(h[2:6], p, 16, dev), device.CodeInvalidArgument,
			"overlaps associated range")
		require.NoError(t, Associate(h[:4], p, 0, dev), "device %d: the same association again", dev)
		require.NoError(t, Disassociate(h[:4], dev), "device %d", dev)
		require.False(t, IsPresent(h, dev), "device %d: something of h is still present after its one association went", dev)
		require.NoError(t, FreeMem(p, dev), "device %d: free after the one association went", dev)
	}
}

// Allocations that the device places end to end are each usable from
// their first byte to their last: an address at one's end is the next
// one's start, never the first's zero bytes left. On every device.
func TestAllocationsEndToEnd(t *testing.T) {
	r, cl := clRuntime(t)
	noLeakOn(t, r)
	devs := withCL(cl, 0)
	for _, dev := range devs {
		for _, size := range []int{64, 4096} {
			ps := make([]DevicePtr, 16)
			adjacent := 0
			for i := range ps {
				p, err := AllocMem(size, dev)
				require.NoError(t, err, "device %d", dev)
				ps[i] = p
			}
			for i, p := range ps {
				for _, q := range ps {
					if q == p+DevicePtr(size) {
						adjacent++
					}
				}
				require.NoError(t, Memset(On(dev, p), byte(i+1), size), "device %d: memset of allocation %d (%v, %d bytes)", dev, i, p, size)
			}
			for i, p := range ps {
				b := make([]byte, size)
				require.NoError(t, Memcpy(Host(b), On(dev, p), size), "device %d: copy from allocation %d (%v, %d bytes)", dev, i, p, size)
				assert.Equal(t, bytes.Repeat([]byte{byte(i + 1)}, size), b, "device %d: allocation %d (%v)", dev, i, p)
				require.NoError(t, FreeMem(p, dev))
			}
			t.Logf("device %d: %d of 16 allocations of %d bytes start where another ends", dev, adjacent, size)
		}
	}
}

// Disassociate never reports success without removing an association.
func TestDisassociateOfNothingFails(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	hb, other := make([]byte, 40), make([]byte, 32)
	h := hb[:32]
	wantMemErr(t, "never associated", Disassociate(other, 0), device.CodeNotFound, "nothing is associated there")
	wantMemErr(t, "on the initial device", Disassociate(other, InitialDevice), device.CodeInvalidDevice, "names the initial device", "nothing can be associated")
	wantMemErr(t, "on the initial device by number", Disassociate(other, len(r.devs)), device.CodeInvalidDevice, "names the initial device")
	require.NoError(t, Associate(h, p, 0, 0))
	wantMemErr(t, "inside the association", Disassociate(h[8:], 0), device.CodeInvalidArgument, "does not start an associated range")
	wantMemErr(t, "past the association", Disassociate(hb, 0), device.CodeInvalidArgument, "does not start an associated range")
	require.True(t, IsPresent(h, 0), "a failed disassociate removed the association")
	require.NoError(t, Disassociate(h, 0))
	wantMemErr(t, "twice", Disassociate(h, 0), device.CodeNotFound, "nothing is associated there")
	require.NoError(t, FreeMem(p, 0))
	useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host", "OMP_TARGET_OFFLOAD": "disabled"})
	wantMemErr(t, "offload disabled", Disassociate(h, 0), device.CodeInvalidDevice, "names the initial device", "there is no offload device (host: OMP_TARGET_OFFLOAD=disabled)")
}

// MappedPtr on the initial device returns the slice's own address, and On
// accepts it there, as On's documentation promises.
func TestMappedPtrOnTheInitialDevice(t *testing.T) {
	r := hostRuntime(t)
	ini := len(r.devs)
	x := make([]int32, 16)
	for _, dev := range []int{InitialDevice, ini} {
		clear(x)
		p, err := MappedPtr(x, dev)
		require.NoError(t, err)
		require.Equal(t, DevicePtr(addr(device.Bytes(x))), p, "MappedPtr(x, %d): want x's address", dev)
		src := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
		require.NoError(t, Memcpy(On(dev, p), Host(src), 64), "Memcpy to On(%d, MappedPtr(x, %d))", dev, dev)
		require.Equal(t, src, x, "memcpy into the mapped address")
		out := make([]int32, 4)
		require.NoError(t, Memcpy(Host(out), On(dev, p).Add(48), 16), "Memcpy from On(%d, p).Add(48)", dev)
		require.Equal(t, src[12:], out, "Memcpy from On(%d, p).Add(48)", dev)
		require.NoError(t, Memset(On(dev, p), 0, 8), "Memset of On(%d, p)", dev)
		require.Equal(t, []int32{0, 0, 3}, x[:3], "Memset of On(%d, p)", dev)
		require.NoError(t, MemcpyRect(On(dev, p), Host(src), 4, []int{2, 2}, []int{1, 1}, []int{0, 0}, []int{4, 4}, []int{4, 4}), "MemcpyRect into On(%d, p)", dev)
		require.Equal(t, []int32{1, 2}, x[5:7], "MemcpyRect into On(%d, p): x[5:7]", dev)
		require.Equal(t, []int32{5, 6}, x[9:11], "MemcpyRect into On(%d, p): x[9:11]", dev)
		err = Memcpy(On(dev, p).Add(4), Host(src), 64)
		require.ErrorContains(t, err, "out of bounds, only 60 bytes there", "Memcpy past the mapped slice")
		// A sub-slice's address lies inside the slice.
		q, err := MappedPtr(x[4:8], dev)
		require.NoError(t, err, "MappedPtr(x[4:8])")
		require.Equal(t, p+16, q, "MappedPtr(x[4:8])")
		require.NoError(t, Memcpy(On(dev, q), Host(src), 16), "Memcpy to a sub-slice's mapped address")
		require.Equal(t, int32(1), x[4], "Memcpy to a sub-slice's mapped address: x[4]")
		require.Equal(t, int32(4), x[7], "Memcpy to a sub-slice's mapped address: x[7]")
	}
	runtime.KeepAlive(x)
	err := Memcpy(On(ini, 0x1000), Host(x), 4)
	require.ErrorContains(t, err, "not in any initial-device allocation made by target.AllocMem, nor in a slice of Go memory that target.MappedPtr returned", "an address MappedPtr never returned")
}

// mappedAndDropped returns the initial-device address of a slice that is
// unreachable when it returns.
//
//go:noinline
func mappedAndDropped(t *testing.T) DevicePtr {
	x := make([]byte, 1<<20)
	p, err := MappedPtr(x, InitialDevice)
	require.NoError(t, err)
	return p
}

// MappedPtr on the initial device does not keep what it records about a
// slice after the slice is collected: a program that asks for the address
// of many short-lived slices does not grow without bound.
func TestMappedPtrForgetsCollectedSlices(t *testing.T) {
	r := hostRuntime(t)
	views := func() int {
		r.initial.mu.Lock()
		defer r.initial.mu.Unlock()
		return len(r.initial.views)
	}
	for range 200 {
		x := make([]float64, 64)
		_, err := MappedPtr(x, InitialDevice)
		require.NoError(t, err)
	}
	kept := views()
	require.Positive(t, kept, "MappedPtr of live slices recorded none")
	// Cleanups run on a goroutine of their own after a collection: give
	// them a few seconds.
	for deadline := time.Now().Add(5 * time.Second); views() > 0 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	assert.Zero(t, views(), "slices recorded by MappedPtr and collected since, of %d", kept)
}

// An address whose slice was collected is an error, not a write into
// freed memory.
func TestMappedPtrOfCollectedSlice(t *testing.T) {
	hostRuntime(t)
	p := mappedAndDropped(t)
	runtime.GC()
	runtime.GC()
	err := Memcpy(On(InitialDevice, p), Host(make([]byte, 8)), 8)
	require.Error(t, err, "Memcpy to the address of a collected slice")
	require.Regexp(t, "garbage collected|not in any initial-device allocation", err.Error(), "Memcpy to the address of a collected slice")
	t.Log(err)
}

// On OpenCL, a kernel runs on sub-slices of mapped slices at any element
// offset, aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN or not.
func TestSubSliceArgumentsOnOpenCL(t *testing.T) {
	r, cl := clRuntime(t)
	if cl < 0 {
		t.Skip("no OpenCL device")
	}
	noLeakOn(t, r)
	for _, off := range []int{0, 1, 3, 32, 37} {
		x, y := vecs(1000)
		require.NoError(t, EnterData(cl, To(x), To(y)))
		n := 500
		err := Target(saxpyRegion(cl, n, 3, x[off:off+n], y[off+1:off+1+n]))
		require.NoError(t, err, "saxpy on x[%d:], y[%d:] on OpenCL", off, off+1)
		require.NoError(t, ExitData(cl, From(y), Delete(x)))
		for i := range y {
			want := float32(2 * i)
			if i >= off+1 && i < off+1+n {
				want += 3 * float32(i-1)
			}
			require.Equal(t, want, y[i], "offset %d: y[%d]", off, i)
		}
	}
	// Two halves of one mapped slice, at offsets 0 and 4000 bytes.
	a := make([]float32, 2000)
	for i := range a {
		a[i] = float32(i)
	}
	require.NoError(t, Target(saxpyRegion(cl, 1000, 2, a[1000:], a[:1000], ToFrom(a))), "saxpy on two halves of one slice on OpenCL")
	for i := range a {
		want := float32(i)
		if i < 1000 {
			want += 2 * float32(1000+i)
		}
		require.Equal(t, want, a[i], "two halves: a[%d]", i)
	}
}

// Memcpy within one allocation, on every device (the initial device
// included) and from a goroutine per device at once: onto itself (src ==
// dst, as LLVM's target_memcpy test does) it succeeds and changes nothing;
// over overlapping ranges it copies as memmove (Go's copy), forwards and
// backwards, by one byte and by many.
func TestMemcpyOntoItselfAndOverlapping(t *testing.T) {
	r, devs := everyDevice(t)
	noLeakOn(t, r)
	const size = 1<<16 + 5
	errs := make(chan error, len(devs))
	for _, dev := range devs {
		go func() {
			errs <- func() error {
				p, err := AllocMem(size, dev)
				if err != nil {
					return err
				}
				defer FreeMem(p, dev)
				model := make([]byte, size)
				for i := range model {
					model[i] = byte(i*7 + i>>8)
				}
				if err := Memcpy(On(dev, p), Host(model), size); err != nil {
					return err
				}
				at := func(off int) Loc { return On(dev, p).Add(off) }
				for _, c := range []struct{ dst, src, n int }{
					{0, 0, size}, {10, 10, 100}, {1, 0, 5000}, {0, 1, 60000}, {3000, 1000, 4000}, {1000, 3000, 4000}, {size - 1, size - 2, 1},
				} {
					if err := Memcpy(at(c.dst), at(c.src), c.n); err != nil {
						return fmt.Errorf("device %d: Memcpy(p+%d, p+%d, %d): %v", dev, c.dst, c.src, c.n, err)
					}
					copy(model[c.dst:c.dst+c.n], model[c.src:c.src+c.n])
				}
				got := make([]byte, size)
				if err := Memcpy(Host(got), On(dev, p), size); err != nil {
					return err
				}
				for i := range got {
					if got[i] != model[i] {
						return fmt.Errorf("device %d: byte %d is %#x after the copies, want %#x (as Go's copy)", dev, i, got[i], model[i])
					}
				}
				return nil
			}()
		}()
	}
	for range devs {
		assert.NoError(t, <-errs)
	}
}
