package target

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
)

// clRuntime is a runtime with the host plugin (device 0) and the OpenCL
// plugin. It returns the number of the first OpenCL device, or -1 when
// there is none (no driver, or built without cgo).
func clRuntime(t *testing.T) (*runtimeState, int) {
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host,opencl"})
	if len(r.devs) == 0 || r.devs[0].plugin != "host" {
		t.Fatalf("no host device: %s", r.why())
	}
	for _, d := range r.devs {
		if d.plugin == "opencl" {
			return r, d.num
		}
	}
	t.Logf("no OpenCL device: %s", r.why())
	return r, -1
}

// memInUseOf returns device n's bytes and allocations in use.
func memInUseOf(t *testing.T, r *runtimeState, n int) (int64, int) {
	t.Helper()
	mi, ok := r.devs[n].d.(device.MemInfo)
	if !ok {
		t.Fatalf("device %s does not implement device.MemInfo", r.devs[n].id)
	}
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
			if b, n := memInUseOf(t, r, i); b != at[i].b || n != at[i].n {
				t.Errorf("device %s leaked memory: %d bytes in %d allocations at start, %d bytes in %d at end",
					r.devs[i].id, at[i].b, at[i].n, b, n)
			}
		}
	})
}

// A huge rectangle on a small allocation fails before anything is copied
// or any list of rows is built: the check is O(dimensions).
func TestMemcpyRectHugeVolumeFailsFast(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer FreeMem(p, 0)
	small := make([]byte, 64)
	huge := func(n int) error {
		return MemcpyRect(On(0, p), Host(small), 1, []int{n, n}, []int{0, 0}, []int{0, 0}, []int{n, n}, []int{n, n})
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	err = huge(4096)
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 64<<10 {
		t.Fatalf("a failing 4096x4096 memcpy_rect allocated %d bytes", got)
	}
	if !errors.Is(err, device.ErrInvalidArgument) || !strings.Contains(err.Error(), fmt.Sprintf("destination %v on device 0 (host:0): volume [4096 4096] at offset [0 0] in dimensions [4096 4096] of 1-byte elements reaches byte 16777216, out of bounds: only 64 bytes there", p)) {
		t.Fatalf("4096x4096 on 64 bytes: %v", err)
	}
	// The shape of the report: 4096x4096 rows of one element, which
	// built 16 million segments (1.9 GB) before failing.
	runtime.ReadMemStats(&m0)
	err = MemcpyRect(On(0, p), Host(small), 4, []int{4096, 4096, 1}, []int{0, 0, 0}, []int{0, 0, 0}, []int{4096, 4096, 1}, []int{4096, 4096, 1})
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 64<<10 || err == nil || !strings.Contains(err.Error(), "reaches byte 67108864, out of bounds: only 64 bytes there") {
		t.Fatalf("a failing 4096x4096x1 memcpy_rect allocated %d bytes: %v", got, err)
	}
	if a := testing.AllocsPerRun(10, func() { huge(65536) }); a > 64 {
		t.Errorf("a failing 65536x65536 memcpy_rect made %v allocations", a)
	}
	if err := huge(65536); err == nil || !strings.Contains(err.Error(), "reaches byte 4294967296, out of bounds") {
		t.Errorf("65536x65536 on 64 bytes: %v", err)
	}
	// The source side is checked as well, in 3-D.
	err = MemcpyRect(Host(make([]byte, 1<<20)), Host(small), 8, []int{8, 8, 8}, []int{0, 0, 0}, []int{1, 0, 0}, []int{8, 8, 8}, []int{9, 8, 8})
	if !errors.Is(err, device.ErrInvalidArgument) || !strings.Contains(err.Error(), ": volume [8 8 8] at offset [1 0 0] in dimensions [9 8 8] of 8-byte elements reaches byte 4608, out of bounds: only 64 bytes there") {
		t.Errorf("source too small: %v", err)
	}
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
		if !errors.Is(err, device.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an invalid-argument error saying %q", c.name, err, c.want)
		}
	}
	// Outer dimensions too large for an int do not matter when the
	// rectangle stays inside the first plane; a zero volume copies nothing.
	if err := MemcpyRect(Host(a), Host(b), 1, []int{1, 2, 3}, []int{0, 1, 0}, []int{0, 0, 0}, []int{big, 4, 4}, []int{1, 2, 3}); err != nil {
		t.Errorf("rectangle in the first plane of a huge array: %v", err)
	}
	if err := MemcpyRect(Host(a), Host(b), 4, []int{0, 1 << 40}, []int{0, 0}, []int{0, 0}, []int{1, 1 << 40}, []int{1, 1 << 40}); err != nil {
		t.Errorf("empty volume: %v", err)
	}
}

// rectCase is one MemcpyRect of int32 elements.
type rectCase struct {
	name                                     string
	volume, dstOff, srcOff, dstDims, srcDims []int
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
	devs := []int{0, len(r.devs)}
	if cl >= 0 {
		devs = append(devs, cl)
	}
	t.Logf("devices %v: %s", devs, r.why())
	for _, c := range rectCases {
		src := make([]int32, size(c.srcDims))
		for i := range src {
			src[i] = int32(i + 1)
		}
		dst0 := make([]int32, size(c.dstDims))
		for i := range dst0 {
			dst0[i] = -int32(i + 1)
		}
		want := c.want(dst0, src)
		check := func(what string, got []int32) {
			t.Helper()
			if !equal(got, want) {
				t.Errorf("%s, %s: got %v, want %v", c.name, what, got, want)
			}
		}
		got := append([]int32(nil), dst0...)
		if err := c.copy(Host(got), Host(src)); err != nil {
			t.Fatalf("%s, host to host: %v", c.name, err)
		}
		check("host to host", got)
		// to puts s in a new allocation on dev.
		to := func(dev int, s []int32) DevicePtr {
			t.Helper()
			p, err := AllocMem(4*len(s), dev)
			if err != nil {
				t.Fatal(err)
			}
			if err := Memcpy(On(dev, p), Host(s), 4*len(s)); err != nil {
				t.Fatal(err)
			}
			return p
		}
		back := func(dev int, p DevicePtr, n int) []int32 {
			t.Helper()
			out := make([]int32, n)
			if err := Memcpy(Host(out), On(dev, p), 4*n); err != nil {
				t.Fatal(err)
			}
			return out
		}
		for _, dev := range devs {
			name := r.describe(dev)
			d := to(dev, dst0)
			if err := c.copy(On(dev, d), Host(src)); err != nil {
				t.Fatalf("%s, host to %s: %v", c.name, name, err)
			}
			check("host to "+name, back(dev, d, len(dst0)))
			s := to(dev, src)
			got := append([]int32(nil), dst0...)
			if err := c.copy(Host(got), On(dev, s)); err != nil {
				t.Fatalf("%s, %s to host: %v", c.name, name, err)
			}
			check(name+" to host", got)
			d2 := to(dev, dst0)
			if err := c.copy(On(dev, d2), On(dev, s)); err != nil {
				t.Fatalf("%s, %s to itself: %v", c.name, name, err)
			}
			check(name+" to itself", back(dev, d2, len(dst0)))
			for _, other := range devs {
				if other == dev {
					continue
				}
				d3 := to(other, dst0)
				if err := c.copy(On(other, d3), On(dev, s)); err != nil {
					t.Fatalf("%s, %s to %s: %v", c.name, name, r.describe(other), err)
				}
				check(name+" to "+r.describe(other), back(other, d3, len(dst0)))
				FreeMem(d3, other)
			}
			for _, p := range []DevicePtr{d, s, d2} {
				if err := FreeMem(p, dev); err != nil {
					t.Fatal(err)
				}
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
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	if got := device.CodeOf(err); got != code {
		t.Errorf("%s: code %s, want %s (%v)", what, got, code, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", what, err, w)
		}
	}
}

// Associate checks the device range at the call: inside one live AllocMem
// allocation of the device; FreeMem refuses an allocation still associated.
func TestAssociateChecksTheDeviceRange(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := AllocMem(64, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := FreeMem(gone, 0); err != nil {
		t.Fatal(err)
	}
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
	if IsPresent(big, 0) || IsPresent(small, 0) || r.devs[0].table.Len() != 0 {
		t.Fatalf("a refused association left entries: %v", r.devs[0].table.Entries())
	}
	wantMemErr(t, "associate on the initial device", Associate(small, p, 0, InitialDevice), device.CodeInvalidDevice,
		"names the initial device", "nothing to associate", "offload devices are 0..0")

	// Inside an allocation, ending at its last byte: accepted and used.
	h := make([]int32, 8)
	if err := Associate(h, p+16, 16, 0); err != nil {
		t.Fatal(err)
	}
	src := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	if err := Memcpy(On(0, p).Add(32), Host(src), 32); err != nil {
		t.Fatal(err)
	}
	if err := Update(0, From(h)); err != nil {
		t.Fatal(err)
	}
	if !equal(h, src) {
		t.Fatalf("update from associated memory at p+32 gave %v, want %v", h, src)
	}
	// Freeing it now is refused, names the host range, and frees nothing.
	b0, n0 := memInUse(t, r)
	err = FreeMem(p, 0)
	wantMemErr(t, "free while associated", err, device.CodeInvalidArgument,
		"host memory "+mapping.RangeString(addr(device.Bytes(h)), 32)+" is still associated with it", "disassociate it first", "nothing was freed")
	if b, n := memInUse(t, r); b != b0 || n != n0 {
		t.Fatalf("a refused FreeMem changed memory in use from %d bytes in %d allocations to %d in %d", b0, n0, b, n)
	}
	if err := Memcpy(On(0, p), Host(src), 32); err != nil {
		t.Fatalf("the allocation is unusable after a refused FreeMem: %v", err)
	}
	if err := Disassociate(h, 0); err != nil {
		t.Fatal(err)
	}
	if IsPresent(h, 0) {
		t.Fatal("disassociated slice still present")
	}
	if err := FreeMem(p, 0); err != nil {
		t.Fatalf("free after disassociate: %v", err)
	}
}

// Disassociate never reports success without removing an association.
func TestDisassociateOfNothingFails(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	if err != nil {
		t.Fatal(err)
	}
	hb, other := make([]byte, 40), make([]byte, 32)
	h := hb[:32]
	wantMemErr(t, "never associated", Disassociate(other, 0), device.CodeNotFound, "nothing is associated there")
	wantMemErr(t, "on the initial device", Disassociate(other, InitialDevice), device.CodeInvalidDevice, "names the initial device", "nothing can be associated")
	wantMemErr(t, "on the initial device by number", Disassociate(other, len(r.devs)), device.CodeInvalidDevice, "names the initial device")
	if err := Associate(h, p, 0, 0); err != nil {
		t.Fatal(err)
	}
	wantMemErr(t, "inside the association", Disassociate(h[8:], 0), device.CodeInvalidArgument, "does not start an associated range")
	wantMemErr(t, "past the association", Disassociate(hb, 0), device.CodeInvalidArgument, "does not start an associated range")
	if !IsPresent(h, 0) {
		t.Fatal("a failed disassociate removed the association")
	}
	if err := Disassociate(h, 0); err != nil {
		t.Fatal(err)
	}
	wantMemErr(t, "twice", Disassociate(h, 0), device.CodeNotFound, "nothing is associated there")
	if err := FreeMem(p, 0); err != nil {
		t.Fatal(err)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		if want := DevicePtr(addr(device.Bytes(x))); p != want {
			t.Fatalf("MappedPtr(x, %d) = %v, want x's address %v", dev, p, want)
		}
		src := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
		if err := Memcpy(On(dev, p), Host(src), 64); err != nil {
			t.Fatalf("Memcpy to On(%d, MappedPtr(x, %d)): %v", dev, dev, err)
		}
		if !equal(x, src) {
			t.Fatalf("memcpy into the mapped address gave %v", x)
		}
		out := make([]int32, 4)
		if err := Memcpy(Host(out), On(dev, p).Add(48), 16); err != nil || !equal(out, src[12:]) {
			t.Fatalf("Memcpy from On(%d, p).Add(48): %v %v", dev, err, out)
		}
		if err := Memset(On(dev, p), 0, 8); err != nil || x[0] != 0 || x[1] != 0 || x[2] != 3 {
			t.Fatalf("Memset of On(%d, p): %v %v", dev, err, x)
		}
		if err := MemcpyRect(On(dev, p), Host(src), 4, []int{2, 2}, []int{1, 1}, []int{0, 0}, []int{4, 4}, []int{4, 4}); err != nil || x[5] != 1 || x[6] != 2 || x[9] != 5 || x[10] != 6 {
			t.Fatalf("MemcpyRect into On(%d, p): %v %v", dev, err, x)
		}
		err = Memcpy(On(dev, p).Add(4), Host(src), 64)
		if err == nil || !strings.Contains(err.Error(), "out of bounds, only 60 bytes there") {
			t.Fatalf("Memcpy past the mapped slice: %v", err)
		}
		// A sub-slice's address lies inside the slice.
		q, err := MappedPtr(x[4:8], dev)
		if err != nil || q != p+16 {
			t.Fatalf("MappedPtr(x[4:8]) = %v, %v; want %v", q, err, p+16)
		}
		if err := Memcpy(On(dev, q), Host(src), 16); err != nil || x[4] != 1 || x[7] != 4 {
			t.Fatalf("Memcpy to a sub-slice's mapped address: %v %v", err, x)
		}
	}
	runtime.KeepAlive(x)
	err := Memcpy(On(ini, 0x1000), Host(x), 4)
	if err == nil || !strings.Contains(err.Error(), "not in any initial-device allocation made by target.AllocMem, nor in a slice of Go memory that target.MappedPtr returned") {
		t.Fatalf("an address MappedPtr never returned: %v", err)
	}
}

// mappedAndDropped returns the initial-device address of a slice that is
// unreachable when it returns.
//
//go:noinline
func mappedAndDropped(t *testing.T) DevicePtr {
	x := make([]byte, 1<<20)
	p, err := MappedPtr(x, InitialDevice)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// An address whose slice was collected is an error, not a write into
// freed memory.
func TestMappedPtrOfCollectedSlice(t *testing.T) {
	hostRuntime(t)
	p := mappedAndDropped(t)
	runtime.GC()
	runtime.GC()
	err := Memcpy(On(InitialDevice, p), Host(make([]byte, 8)), 8)
	if err == nil || !strings.Contains(err.Error(), "garbage collected") && !strings.Contains(err.Error(), "not in any initial-device allocation") {
		t.Fatalf("Memcpy to the address of a collected slice: %v", err)
	}
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
		if err := EnterData(cl, To(x), To(y)); err != nil {
			t.Fatal(err)
		}
		n := 500
		err := Target(saxpyRegion(cl, n, 3, x[off:off+n], y[off+1:off+1+n]))
		if err != nil {
			t.Fatalf("saxpy on x[%d:], y[%d:] on OpenCL: %v", off, off+1, err)
		}
		if err := ExitData(cl, From(y), Delete(x)); err != nil {
			t.Fatal(err)
		}
		for i := range y {
			want := float32(2 * i)
			if i >= off+1 && i < off+1+n {
				want += 3 * float32(i-1)
			}
			if y[i] != want {
				t.Fatalf("offset %d: y[%d] = %g, want %g", off, i, y[i], want)
			}
		}
	}
	// Two halves of one mapped slice, at offsets 0 and 4000 bytes.
	a := make([]float32, 2000)
	for i := range a {
		a[i] = float32(i)
	}
	if err := Target(saxpyRegion(cl, 1000, 2, a[1000:], a[:1000], ToFrom(a))); err != nil {
		t.Fatalf("saxpy on two halves of one slice on OpenCL: %v", err)
	}
	for i := range a {
		want := float32(i)
		if i < 1000 {
			want += 2 * float32(1000+i)
		}
		if a[i] != want {
			t.Fatalf("two halves: a[%d] = %g, want %g", i, a[i], want)
		}
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
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
