package generic

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/kcache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDev is a Driver whose memory is numbered handles and whose addresses
// are synthetic (Space) or its own.
type fakeDev struct {
	Device[int]
	mu     sync.Mutex
	next   int
	live   map[int]bool // handles allocated and not freed
	own    uint64       // if not 0, the next address MemAlloc gives; else 0 (synthetic)
	fail   error        // MemAlloc's error
	builds atomic.Int32
}

func (d *fakeDev) NewQueue() (device.Queue, error) { return nil, errors.New("no queues") }
func (d *fakeDev) Now() (int64, error)             { return 1, nil }

type fakeFunc struct{ k *device.Kernel }

func (f fakeFunc) Kernel() *device.Kernel  { return f.k }
func (f fakeFunc) Image() device.ImageKind { return "opencl-c" }
func (f fakeFunc) Bytes() int              { return 1 }

func (d *fakeDev) MemAlloc(size, span int) (device.DevicePtr, int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return 0, 0, d.fail
	}
	d.next++
	d.live[d.next] = true
	var p device.DevicePtr
	if d.own != 0 {
		p = device.DevicePtr(d.own)
		d.own += uint64(span)
	}
	return p, d.next, nil
}

func (d *fakeDev) MemFree(_ device.DevicePtr, h int, _ int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.live[h] {
		return fmt.Errorf("handle %d freed twice", h)
	}
	delete(d.live, h)
	return nil
}

func (d *fakeDev) LoadImage(k *device.Kernel, img *device.Image) (device.Function, error) {
	d.builds.Add(1)
	switch img.Source {
	case "bad":
		return nil, d.Errorf("load "+k.Name, device.CodeInvalidBinary, "does not build")
	case "bare":
		return nil, errors.New("the driver's compiler said no")
	}
	return fakeFunc{k}, nil
}

func newFake(t *testing.T, c Config) *fakeDev {
	d := &fakeDev{live: map[int]bool{}}
	if c.ID == "" {
		c.ID = "fake:0"
	}
	if c.Info.MaxAlloc == 0 {
		c.Info.MaxAlloc = 1 << 30
	}
	if c.Images == nil {
		c.Images = []device.ImageKind{"opencl-c"}
	}
	d.Init(d, c)
	return d
}

// TestMemoryTable: allocations are distinct, found by interior pointers,
// refused outside and past their ends with the host device's messages,
// counted, and freed once; synthetic addresses leave a gap after each
// allocation and are reused once the space wraps.
func TestMemoryTable(t *testing.T) {
	c := Config{}
	c.Space.Lo, c.Space.Hi = 1<<20, 1<<20+64<<10 // room for a few 4 KiB allocations and their gaps
	d := newFake(t, c)
	a, err := d.Alloc(1000)
	require.NoError(t, err)
	b, err := d.Alloc(5000)
	require.NoError(t, err)
	assert.Equal(t, device.DevicePtr(1<<20), a.Ptr, "first synthetic address")
	assert.Equal(t, a.Ptr+2*spaceAlign, b.Ptr, "the second after the first and a gap")
	n, cnt := d.MemInUse()
	assert.Equal(t, int64(6000), n, "bytes in use")
	assert.Equal(t, 2, cnt, "allocations in use")

	h, off, size, err := d.Lookup("copy", a.Ptr+10, 990)
	require.NoError(t, err, "a range to the end")
	assert.Equal(t, []int{1, 10, 1000}, []int{h, off, size}, "the allocation found: handle, offset, size")
	_, _, _, err = d.Lookup("copy", a.Ptr+1000, 0)
	assert.NoError(t, err, "an empty range at the end")
	for _, c := range []struct {
		p    device.DevicePtr
		n    int
		want string
	}{
		{a.Ptr + 10, 991, fmt.Sprintf("fake:0: copy: invalid argument: range [%v,%#x) extends past allocation [%v,%v)", a.Ptr+10, uint64(a.Ptr)+1001, a.Ptr, a.Ptr+1000)},
		{a.Ptr + 1000, 1, "extends past allocation"},
		{a.Ptr + 1001, 1, "is not inside any live allocation"},
		{a.Ptr + 2000, 0, fmt.Sprintf("copy: invalid argument: %v is not inside any live allocation", a.Ptr+2000)},
		{a.Ptr, -1, "negative length -1"},
		{0, 1, "range [0x0,0x1) is not inside any live allocation"},
	} {
		_, _, _, err := d.Lookup("copy", c.p, c.n)
		if assert.Error(t, err, "Lookup(%v, %d)", c.p, c.n) {
			assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "Lookup(%v, %d): %v", c.p, c.n, err)
			assert.Contains(t, err.Error(), c.want, "Lookup(%v, %d)", c.p, c.n)
		}
	}

	for _, p := range []device.DevicePtr{a.Ptr + 1, 0, 12345} {
		err := d.Free(p)
		assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "Free(%v): %v", p, err)
		assert.ErrorContains(t, err, fmt.Sprintf("pointer %v is not the start of a live allocation", p), "Free(%v)", p)
	}
	require.NoError(t, d.Free(a.Ptr))
	assert.Error(t, d.Free(a.Ptr), "second Free")
	_, _, _, err = d.Lookup("copy", a.Ptr, 1)
	assert.Error(t, err, "Lookup of freed memory")

	// Wrap: the space ends; the next allocations take the first gaps.
	var more []device.Buffer
	for {
		x, err := d.Alloc(4096)
		if err != nil {
			assert.Equal(t, device.CodeOutOfResources, device.CodeOf(err), "Alloc past the space: %v", err)
			assert.ErrorContains(t, err, "synthetic address space")
			break
		}
		more = append(more, x)
		require.Less(t, len(more), 100, "the space never ran out")
	}
	assert.Equal(t, a.Ptr, more[len(more)-1].Ptr, "after the wrap, the first gap: the freed allocation's address")
	for _, x := range append(more, b) {
		require.NoError(t, d.Free(x.Ptr))
	}
	n, cnt = d.MemInUse()
	assert.Zero(t, n, "bytes in use at the end")
	assert.Zero(t, cnt, "allocations in use at the end")
	assert.Empty(t, d.live, "handles the driver still holds")
	assert.Zero(t, d.builds.Load())
}

// TestCache: a freed block serves a later allocation of its size class
// without MemAlloc; the cache holds CacheLimit bytes of blocks up to
// CacheMax; Trim and Forget give everything back.
func TestCache(t *testing.T) {
	d := newFake(t, Config{CacheLimit: 3 * 4096, CacheMax: 8192})
	d.own = 1 << 30
	a, err := d.Alloc(4000)
	require.NoError(t, err)
	require.NoError(t, d.Free(a.Ptr))
	assert.Equal(t, int64(4096), d.CacheBytes(), "a 4000-byte block is cached as its class, 4096")
	d.fail = errors.New("MemAlloc called")
	b, err := d.Alloc(3900)
	require.NoError(t, err, "an allocation of the same class comes from the cache")
	assert.Equal(t, a.Ptr, b.Ptr, "the cached block's address")
	assert.Zero(t, d.CacheBytes(), "cache after its block went out")
	_, err = d.Alloc(3000)
	assert.ErrorContains(t, err, "MemAlloc called", "another class goes to MemAlloc")
	d.fail = nil
	big, err := d.Alloc(9000)
	require.NoError(t, err)
	var small []device.Buffer
	for range 4 {
		x, err := d.Alloc(4096)
		require.NoError(t, err)
		small = append(small, x)
	}
	require.NoError(t, d.Free(big.Ptr))
	assert.Zero(t, d.CacheBytes(), "a block past CacheMax is not cached")
	for _, x := range small {
		require.NoError(t, d.Free(x.Ptr))
	}
	assert.Equal(t, int64(3*4096), d.CacheBytes(), "the cache holds CacheLimit bytes")
	assert.Len(t, d.live, 4, "handles held: three cached, one live")
	n, err := d.Trim()
	require.NoError(t, err)
	assert.Equal(t, int64(3*4096), n, "Trim's bytes")
	assert.Len(t, d.live, 1, "handles held after Trim: the live one")
	live, cached := d.Forget()
	assert.Len(t, live, 1, "Forget's live allocations")
	assert.Empty(t, cached, "Forget's cached blocks")
	bytes, cnt := d.MemInUse()
	assert.Zero(t, bytes+int64(cnt), "MemInUse after Forget")
	assert.Error(t, d.Free(b.Ptr), "Free after Forget")
}

// TestLoad: a kernel is built once from the first kind of Images it has,
// concurrently or not, and found afterwards without a build (Find); one
// that failed is built again at its next load; nil kernels, wrong declarations and kernels with no image
// the device runs are refused with their codes.
func TestLoad(t *testing.T) {
	d := newFake(t, Config{Images: []device.ImageKind{"ptx", "opencl-c"}, Hint: "make one with the generator"})
	k := &device.Kernel{Name: "k", Images: []device.Image{{Kind: "opencl-c", Source: "src"}}}
	_, ok := d.Kernels().Find(k)
	assert.False(t, ok, "Find before a load")
	var wg sync.WaitGroup
	fs := make([]device.Function, 8)
	for i := range fs {
		wg.Go(func() {
			f, err := d.Load(k)
			assert.NoError(t, err)
			fs[i] = f
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, d.builds.Load(), "builds of one kernel loaded by 8 goroutines")
	for _, f := range fs {
		assert.Equal(t, fs[0], f, "every load's function")
	}
	f, ok := d.Kernels().Find(k)
	assert.True(t, ok, "Find after the load")
	assert.Equal(t, fs[0], f, "Find's function")
	assert.Same(t, d.Kernels(), kcache.Of(d), "kcache.Of a generic device")
	assert.Nil(t, kcache.Of(nil), "kcache.Of no device")
	var none *kcache.Kernels
	_, ok = none.Find(k)
	assert.False(t, ok, "Find on no cache")

	bad := &device.Kernel{Name: "bad", Images: []device.Image{{Kind: "ptx", Source: "bad"}, {Kind: "opencl-c", Source: "src"}}}
	_, err := d.Load(bad)
	assert.Equal(t, device.CodeInvalidBinary, device.CodeOf(err), "a PTX image that fails (the first kind): %v", err)
	_, err = d.Load(bad)
	assert.Error(t, err, "second load of a kernel that failed")
	assert.EqualValues(t, 3, d.builds.Load(), "a failed build is tried again at the next load")
	_, ok = d.Kernels().Find(bad)
	assert.False(t, ok, "Find of a kernel that failed")

	_, err = d.Load(nil)
	assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "Load(nil): %v", err)
	_, err = d.Load(&device.Kernel{Name: "dup", Params: []device.Param{{Name: "x", Kind: device.ParamInt32}, {Name: "x", Kind: device.ParamInt32}},
		Images: []device.Image{{Kind: "opencl-c", Source: "src"}}})
	assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "Load of a wrong declaration: %v", err)
	assert.ErrorContains(t, err, "both named x")
	_, err = d.Load(&device.Kernel{Name: "hostonly", Images: []device.Image{{Kind: device.ImageHost, Host: func(*device.HostArgs, device.Range, int, int) {}}}})
	assert.Equal(t, device.CodeInvalidBinary, device.CodeOf(err), "Load of a kernel with no image the device runs: %v", err)
	assert.EqualError(t, err, "fake:0: load hostonly: invalid binary: kernel hostonly has no image for fake:0 (has: host); the device runs ptx or opencl-c images; make one with the generator")
	assert.EqualValues(t, 3, d.builds.Load(), "builds: refused kernels build nothing")

	keep := newFake(t, Config{KeepLoadErrors: true})
	bad = &device.Kernel{Name: "bad", Images: []device.Image{{Kind: "opencl-c", Source: "bad"}}}
	_, err = keep.Load(bad)
	_, err2 := keep.Load(bad)
	assert.Equal(t, err, err2, "KeepLoadErrors: the second load's error is the first's")
	assert.EqualValues(t, 1, keep.builds.Load(), "KeepLoadErrors: builds of a kernel that failed")
}

// TestLoadErrorsSayWhat: a driver's bare error comes out as the device's,
// of the kernel's load (CodeInvalidBinary); an image with neither Source
// nor Host is said to be empty, not silently missing.
func TestLoadErrorsSayWhat(t *testing.T) {
	d := newFake(t, Config{})
	_, err := d.Load(&device.Kernel{Name: "k", Images: []device.Image{{Kind: "opencl-c", Source: "bare"}}})
	assert.Equal(t, device.CodeInvalidBinary, device.CodeOf(err), "a bare driver error: %v", err)
	assert.EqualError(t, err, "fake:0: load k: invalid binary: the driver's compiler said no")
	_, err = d.Load(&device.Kernel{Name: "blank", Images: []device.Image{{Kind: "opencl-c", Source: " \n"}}})
	assert.EqualError(t, err, "fake:0: load blank: invalid binary: kernel blank has no image for fake:0 (has: opencl-c (empty: no Source or Host)); the device runs opencl-c images")
}

// TestInitSaysWhatIsMissing: Init's panic names each missing part.
func TestInitSaysWhatIsMissing(t *testing.T) {
	d := &fakeDev{live: map[int]bool{}}
	for c, want := range map[*Config]string{
		{ID: "x:0", Info: device.Info{MaxAlloc: 1}}:                                         `generic: Init of device "x:0": need the kinds of image it runs, each named (Config.Images)`,
		{ID: "x:0", Info: device.Info{MaxAlloc: 1}, Images: []device.ImageKind{"a", ""}}:    `generic: Init of device "x:0": need the kinds of image it runs, each named (Config.Images)`,
		{Images: []device.ImageKind{"a"}}:                                                   `generic: Init of device "": need an ID (Config.ID), the largest allocation (Config.Info.MaxAlloc)`,
		{ID: "x:0", Info: device.Info{MaxAlloc: 1}, Images: []device.ImageKind{"opencl-c"}}: "",
	} {
		if want == "" {
			assert.NotPanics(t, func() { d.Init(d, *c) }, "Init of %+v", *c)
			assert.Equal(t, []device.ImageKind{"opencl-c"}, d.Images(), "Images after Init")
			continue
		}
		assert.PanicsWithValue(t, want, func() { d.Init(d, *c) }, "Init of %+v", *c)
	}
}

// TestAddressZeroWithoutSpace: a driver that returns address 0 (asking
// for a synthetic one) on a device without Config.Space is told so.
func TestAddressZeroWithoutSpace(t *testing.T) {
	d := newFake(t, Config{})
	_, err := d.Alloc(64)
	assert.Equal(t, device.CodeOutOfResources, device.CodeOf(err), "%v", err)
	assert.ErrorContains(t, err, "MemAlloc returned address 0, which asks for a synthetic address, and the device has no synthetic address space (Config.Space)")
	assert.Empty(t, d.live, "the allocation is given back")
}

func TestPlugin(t *testing.T) {
	calls := 0
	dev := newFake(t, Config{})
	p := NewPlugin("fake", func() ([]device.Device, error) { calls++; return []device.Device{dev}, nil })
	for range 3 {
		devs, err := p.Devices()
		require.NoError(t, err)
		require.Len(t, devs, 1)
		devs[0] = nil // a copy: the plugin's list stays
	}
	assert.Equal(t, 1, calls, "open calls")
	for _, c := range []struct {
		open func() ([]device.Device, error)
		want string
	}{
		{func() ([]device.Device, error) { return nil, errors.New("no driver") }, "fake: no device: no driver"},
		{func() ([]device.Device, error) { return nil, device.NoDevice("fake", errors.New("too old")) }, "fake: no device: too old"},
		{func() ([]device.Device, error) { return nil, nil }, "fake: no device: the plugin found no device"},
		{func() ([]device.Device, error) { panic("boom") }, "fake: no device: opening the plugin panicked: boom"},
	} {
		devs, err := NewPlugin("fake", c.open).Devices()
		assert.Empty(t, devs)
		assert.ErrorIs(t, err, device.ErrNoDevice)
		assert.EqualError(t, err, c.want)
	}
}

func TestCheckLaunch(t *testing.T) {
	info := &device.Info{MaxThreadsPerTeam: 256, MaxTeams: 1000}
	k := &device.Kernel{Name: "k", Params: []device.Param{device.BufferParam("x", device.ParamFloat32, ""), device.ScalarParam("n", device.ParamInt32)}, MaxThreads: 128}
	good := []device.Arg{{Ptr: 0x100}, {Bits: 4}}
	ok := device.Shape{Size: [3]int{4}, Teams: 1000, Threads: 512}
	assert.NoError(t, CheckLaunch("d:0", info, k, &ok, good), "threads past the limits are the plugin's to refuse or lower")
	for _, c := range []struct {
		shape device.Shape
		args  []device.Arg
		want  string
	}{
		{ok, good[:1], "kernel k takes 2 arguments"},
		{ok, []device.Arg{{}, {Bits: 4}}, "nil device pointer"},
		{device.Shape{}, good, "dimension 0 must be at least 1"},
		{device.Shape{Size: [3]int{4}, Threads: -1}, good, "must be 0 (runtime picks) or positive"},
		{device.Shape{Size: [3]int{4}, Teams: 1001}, good, "1001 teams: want at most 1000"},
	} {
		err := CheckLaunch("d:0", info, k, &c.shape, c.args)
		if assert.Error(t, err, "%+v %v", c.shape, c.args) {
			assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err))
			assert.Contains(t, err.Error(), "d:0: launch k: invalid argument: ")
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

func TestSizeClass(t *testing.T) {
	prevClass, prevSpan := -1, 0
	for _, n := range []int{1, 255, 256, 257, 4095, 4096, 4097, 5120, 5121, 8192, 8193, 1 << 20, 1<<20 + 7, 1 << 30} {
		c, span := SizeClass(n)
		assert.GreaterOrEqual(t, span, n, "SizeClass(%d)'s size", n)
		assert.Zero(t, span%256, "SizeClass(%d)'s size %d is a multiple of 256", n, span)
		if n > 4096 {
			assert.LessOrEqual(t, float64(span), 1.25*float64(n)+1, "SizeClass(%d): %d wastes more than 25%%", n, span)
		}
		assert.Equal(t, c == prevClass, span == prevSpan, "SizeClass(%d) = %d, %d after %d, %d", n, c, span, prevClass, prevSpan)
		assert.GreaterOrEqual(t, c, prevClass, "SizeClass(%d): classes rise", n)
		prevClass, prevSpan = c, span
	}
}

// newSpaceTable returns the table of a device with synthetic addresses in
// [lo, hi).
func newSpaceTable(lo, hi uint64) *table[uintptr] {
	return &table[uintptr]{lo: lo, hi: hi, next: lo}
}

// addSpace places and adds an allocation of size bytes with handle h.
func addSpace(t *table[uintptr], size int, h uintptr) (device.DevicePtr, error) {
	p, err := t.place(size)
	if err == nil {
		t.add(p, size, h, false)
	}
	return p, err
}

// removeSpace removes the allocation starting at p, returning its handle.
func removeSpace(t *table[uintptr], p device.DevicePtr) (uintptr, bool) {
	i, ok := t.find(p, false)
	if !ok || t.ents[i].base != p {
		return 0, false
	}
	h := t.ents[i].h
	if c, span, ok := t.keeps(&t.ents[i]); ok {
		t.kill(i, c, span)
	} else {
		t.remove(i)
	}
	return h, true
}

// TestSpace (from the OpenCL plugin's synthetic address space):
// allocations get aligned, distinct addresses past each other's ends;
// interior pointers find their allocation's handle, pointers at or past
// its end none; only a base removes one, once.
func TestSpace(t *testing.T) {
	s := newSpaceTable(1<<46, 2<<46)
	a, err := addSpace(s, 100, 1)
	require.NoError(t, err)
	b, err := addSpace(s, spaceAlign, 2)
	require.NoError(t, err)
	require.NotZero(t, a, "bases %v, %v", a, b)
	require.Greater(t, b, a+100, "bases %v, %v", a, b)
	require.Zero(t, a%spaceAlign, "bases %v, %v", a, b)
	require.Zero(t, b%spaceAlign, "bases %v, %v", a, b)
	for _, tc := range []struct {
		p    device.DevicePtr
		mem  uintptr
		find bool
	}{
		{a, 1, true}, {a + 99, 1, true}, {a + 100, 0, false}, {a - 1, 0, false},
		{b, 2, true}, {b + spaceAlign - 1, 2, true}, {b + spaceAlign, 0, false},
	} {
		i, ok := s.find(tc.p, false)
		assert.Equal(t, tc.find, ok, "find(%v) = %d, %v", tc.p, i, ok)
		assert.False(t, ok && s.ents[i].h != tc.mem, "find(%v) = %d, %v", tc.p, i, ok)
	}
	_, ok := removeSpace(s, a+1)
	assert.False(t, ok, "remove of an interior pointer succeeded")
	if h, ok := removeSpace(s, a); assert.True(t, ok, "remove of a base failed") {
		assert.EqualValues(t, 1, h, "remove of a base: its handle")
	}
	_, ok = removeSpace(s, a)
	assert.False(t, ok, "second remove succeeded")
}

// TestSpaceWraps: once the space is used up to its end, a freed range is
// reused (first fit), entries stay sorted, and a size larger than every
// gap fails.
func TestSpaceWraps(t *testing.T) {
	s := newSpaceTable(1<<46, 1<<46+8*spaceAlign) // a tiny region: four one-unit buffers with guards
	var bases []device.DevicePtr
	for i := range 4 {
		p, err := addSpace(s, 1, uintptr(i+1))
		require.NoError(t, err, "add %d", i)
		bases = append(bases, p)
	}
	_, err := addSpace(s, 1, 9)
	require.Error(t, err, "add into a full region succeeded")
	removeSpace(s, bases[1])
	p, err := addSpace(s, spaceAlign, 5)
	require.NoError(t, err, "after a free, add = %v, %v; want the freed range %v", p, err, bases[1])
	require.Equal(t, bases[1], p, "after a free, add = %v, %v; want the freed range %v", p, err, bases[1])
	for i := 1; i < len(s.ents); i++ {
		require.Less(t, s.ents[i-1].base, s.ents[i].base, "entries not sorted")
	}
	_, err = addSpace(s, 2*spaceAlign, 6)
	require.Error(t, err, "add larger than any gap succeeded")
}
