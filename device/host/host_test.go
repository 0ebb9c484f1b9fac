package host

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/devicetest"
	"github.com/gompt/gompt/internal/sysmem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConformance(t *testing.T) {
	devicetest.TestDevice(t, newDevice(3), testKernels...)
}

func TestRegisteredDevices(t *testing.T) {
	p, ok := device.Lookup("host")
	require.True(t, ok, `plugin "host" is not registered`)
	a, err := p.Devices()
	require.NoError(t, err, "Devices")
	b, _ := p.Devices()
	require.Len(t, a, 1, "Devices")
	require.Equal(t, a, b, "Devices called twice")
	assert.Equal(t, "host:0", a[0].(*Device).ID())
}

func TestParseCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		warn bool
	}{
		{"", 1, false}, {"0", 0, false}, {"1", 1, false}, {" 4 ", 4, false}, {"64", 64, false},
		{"65", 1, true}, {"-1", 1, true}, {"x", 1, true}, {"1.5", 1, true}, {"99999999999999999999", 1, true},
	} {
		n, warn := parseCount(c.in)
		assert.Equal(t, c.n, n, "parseCount(%q)", c.in)
		assert.Equal(t, c.warn, warn != "", "parseCount(%q) warns: %q", c.in, warn)
	}
	_, warn := parseCount("x")
	assert.Equal(t, `gompt: GOMPT_HOST_DEVICES="x": want a whole number 0..64; using 1`, warn)
}

func TestPluginZeroDevices(t *testing.T) {
	t.Setenv("GOMPT_HOST_DEVICES", "0")
	devs, err := newPlugin().Devices()
	assert.Empty(t, devs, "Devices with GOMPT_HOST_DEVICES=0")
	assert.ErrorIs(t, err, device.ErrNoDevice, "Devices with GOMPT_HOST_DEVICES=0")
	assert.ErrorContains(t, err, "GOMPT_HOST_DEVICES=0", "Devices' error names the variable")
	t.Setenv("GOMPT_HOST_DEVICES", "3")
	devs, err = newPlugin().Devices()
	require.NoError(t, err, "Devices with GOMPT_HOST_DEVICES=3")
	require.Len(t, devs, 3, "Devices with GOMPT_HOST_DEVICES=3")
	// Separate address spaces.
	b0, _ := devs[0].Alloc(64)
	b2, _ := devs[2].Alloc(64)
	defer devs[0].Free(b0.Ptr)
	defer devs[2].Free(b2.Ptr)
	_, err = devs[0].(*Device).Resolve(b2.Ptr, 1)
	assert.Error(t, err, "host:0 resolved %v, an address of host:2", b2.Ptr)
	assert.Equal(t, "host:2", devs[2].(*Device).ID(), "the third device")
}

func TestInfo(t *testing.T) {
	d := newDevice(0)
	info := d.Info()
	assert.Equal(t, "gompt host device", info.Name)
	assert.Equal(t, "host", info.Backend)
	assert.Equal(t, "cpu", info.Type)
	assert.Equal(t, runtime.Version(), info.DriverVersion)
	assert.Equal(t, runtime.GOMAXPROCS(0), info.ComputeUnits)
	assert.Equal(t, 1024, info.MaxThreadsPerTeam)
	assert.False(t, info.UnifiedMemory)
	assert.EqualValues(t, 1, info.TimerResolutionNS)
	assert.GreaterOrEqual(t, info.GlobalMem, uint64(64<<20), "GlobalMem")
	assert.NotZero(t, info.MaxAlloc, "MaxAlloc")
	assert.LessOrEqual(t, info.MaxAlloc, info.GlobalMem, "MaxAlloc against GlobalMem")
	info.Extra[0].Value = "changed"
	assert.NotEqual(t, "changed", d.Info().Extra[0].Value, "Info's Extra aliases the device's")
	now, _ := d.Now()
	assert.Positive(t, now, "Now")
}

func TestSizeClass(t *testing.T) {
	prevClass, prevSpan := -1, uint64(0)
	for _, n := range []int{1, 255, 256, 257, 4095, 4096, 4097, 5120, 5121, 8192, 8193, 1 << 20, 1<<20 + 7, 1 << 30, 1<<30 + 12345} {
		c, span := sizeClass(n)
		assert.GreaterOrEqual(t, span, uint64(n), "sizeClass(%d)'s span", n)
		assert.Zero(t, span%addrAlign, "sizeClass(%d)'s span %d is a multiple of %d", n, span, addrAlign)
		assert.True(t, c >= 0 && c < numClasses, "sizeClass(%d) = class %d, want one in [0,%d)", n, c, numClasses)
		if n > smallClassMax {
			assert.LessOrEqual(t, float64(span), 1.25*float64(n)+1, "sizeClass(%d): span %d wastes more than 25%%", n, span)
		}
		assert.GreaterOrEqual(t, c, prevClass, "sizeClass(%d): classes rise", n)
		assert.Equal(t, c == prevClass, span == prevSpan, "sizeClass(%d) = %d, %d after %d, %d: classes and spans rise together", n, c, span, prevClass, prevSpan)
		prevClass, prevSpan = c, span
	}
}

func TestAllocAddresses(t *testing.T) {
	d := newDevice(1)
	seen := map[device.DevicePtr]bool{}
	var bufs []device.Buffer
	for i := range 200 {
		n := 1 + i*977
		b, err := d.Alloc(n)
		require.NoError(t, err)
		require.Zero(t, b.Ptr%256, "Alloc(%d) = %v: 256-aligned", n, b.Ptr)
		require.True(t, uint64(b.Ptr) >= d.base && uint64(b.Ptr) < d.limit, "Alloc(%d) = %v: want it in %s", n, b.Ptr, d.spaceString())
		require.False(t, seen[b.Ptr], "Alloc(%d) = %v: live already", n, b.Ptr)
		seen[b.Ptr] = true
		mem, err := d.Resolve(b.Ptr, n)
		require.NoError(t, err, "Resolve(%v, %d)", b.Ptr, n)
		require.Len(t, mem, n, "Resolve(%v, %d)", b.Ptr, n)
		require.Zero(t, unsafePointer(mem)%8, "backing of %v is not 8-byte aligned", b.Ptr)
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		require.NoError(t, d.Free(b.Ptr))
	}
	n, c := d.MemInUse()
	assert.Zero(t, n, "bytes in use after freeing all")
	assert.Zero(t, c, "allocations live after freeing all")
	// A freed block of the same class is reused, with its address.
	b, _ := d.Alloc(4096)
	d.Free(b.Ptr)
	b2, _ := d.Alloc(4000)
	assert.Equal(t, b.Ptr, b2.Ptr, "Alloc(4000) after freeing a 4096 block: the cached block")
	d.Free(b2.Ptr)
}

func TestAllocErrors(t *testing.T) {
	d := newDevice(0)
	max := d.Info().MaxAlloc
	for _, n := range []int{0, -5, int(max) + 1} {
		_, err := d.Alloc(n)
		if assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "Alloc(%d): %v", n, err) {
			assert.ErrorContains(t, err, fmt.Sprint(n), "Alloc(%d) names the size", n)
			assert.ErrorContains(t, err, fmt.Sprint(max), "Alloc(%d) names the limit", n)
		}
	}
	err := d.Free(0x1234)
	if assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "Free(0x1234): %v", err) {
		assert.ErrorContains(t, err, "0x1234", "Free names the pointer")
	}
	// Out of memory is an error, not a crash: a device with a tiny budget
	// (2 MiB, so MaxAlloc is 1 MiB), holding a freed 200 KiB block for reuse.
	d = newDeviceIn(0, newBudget(2<<20, "test"))
	c, err := d.Alloc(200 << 10)
	require.NoError(t, err)
	d.Free(c.Ptr)
	a, err := d.Alloc(1 << 20)
	require.NoError(t, err)
	// The cached block is dropped when memory is short.
	b, err := d.Alloc(1 << 20)
	require.NoError(t, err, "Alloc that needs the cached block's memory")
	_, err = d.Alloc(600 << 10)
	assert.Equal(t, device.CodeOutOfResources, device.CodeOf(err), "Alloc past the budget: %v", err)
	d.Free(a.Ptr)
	_, live := d.MemInUse()
	assert.Equal(t, 1, live, "allocations live after a failed Alloc")
	a, err = d.Alloc(900 << 10)
	require.NoError(t, err, "Alloc after freeing")
	d.Free(a.Ptr)
	d.Free(b.Ptr)
}

// Several host devices share one budget: together they never hold more,
// a device short of memory takes back what another keeps cached, and each
// device's Info says what they share.
func TestDevicesShareOneBudget(t *testing.T) {
	shared := newBudget(4<<20, "test")
	devs := []*Device{newDeviceIn(0, shared), newDeviceIn(1, shared), newDeviceIn(2, shared)}
	for _, d := range devs {
		info := d.Info()
		assert.EqualValues(t, 4<<20, info.GlobalMem, "%s: GlobalMem: the shared 4 MiB", d.ID())
		assert.EqualValues(t, 2<<20, info.MaxAlloc, "%s: MaxAlloc", d.ID())
	}
	// Three devices, 1.5 MiB each, on 4 MiB: the third does not fit.
	var live []device.Buffer
	for _, d := range devs[:2] {
		b, err := d.Alloc(3 << 19)
		require.NoError(t, err, d.ID())
		live = append(live, b)
	}
	_, err := devs[2].Alloc(3 << 19)
	require.Equal(t, device.CodeOutOfResources, device.CodeOf(err), "a third 1.5 MiB on a shared 4 MiB: %v", err)
	require.ErrorContains(t, err, "the 3 host devices hold 3145728 bytes of the 4194304 they share")
	// Freed on device 0 and kept there for reuse: device 2 takes it back.
	require.NoError(t, devs[0].Free(live[0].Ptr))
	small, err := devs[0].Alloc(200 << 10)
	require.NoError(t, err)
	devs[0].Free(small.Ptr) // cached on device 0
	require.NotZero(t, devs[0].CacheBytes(), "device 0 keeps no freed block; the test needs one")
	b, err := devs[2].Alloc(2 << 20)
	require.NoError(t, err, "device 2, with device 0's memory freed")
	held, _ := shared.state()
	assert.LessOrEqual(t, held, shared.limit, "bytes the devices hold of the shared budget")
	_, err = devs[0].Alloc(1 << 20)
	assert.Equal(t, device.CodeOutOfResources, device.CodeOf(err), "device 0 past the shared budget: %v", err)
	devs[2].Free(b.Ptr)
	devs[1].Free(live[1].Ptr)
	for _, d := range devs {
		d.Trim()
	}
	held, _ = shared.state()
	assert.Zero(t, held, "bytes the budget holds after every device freed everything")
}

// With GOMPT_HOST_DEVICES=64, the plugin's devices share the process's
// budget, and their Info says so, instead of each promising half of the
// machine's memory.
func TestPluginDevicesShareTheProcessBudget(t *testing.T) {
	if os.Getenv("GOMPT_HOST_BUDGET_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPluginDevicesShareTheProcessBudget$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "GOMPT_HOST_BUDGET_CHILD=1", "GOMPT_HOST_DEVICES=64")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child:\n%s", out)
		require.Contains(t, string(out), "--- PASS: TestPluginDevicesShareTheProcessBudget", "child")
		return
	}
	p, _ := device.Lookup(Name)
	devs, err := p.Devices()
	require.NoError(t, err, "Devices with GOMPT_HOST_DEVICES=64")
	require.Len(t, devs, 64, "Devices with GOMPT_HOST_DEVICES=64")
	total, _ := sysmem.PhysicalMemory()
	for _, d := range devs {
		info := d.Info()
		id := d.(*Device).ID()
		require.LessOrEqual(t, info.GlobalMem, total/2, "%s: GlobalMem: at most half of the %d bytes this process may use", id, total)
		require.Equal(t, devs[0].Info().GlobalMem, info.GlobalMem, "%s: GlobalMem: the budget every host device shares", id)
		require.LessOrEqual(t, info.MaxAlloc, info.GlobalMem, "%s: MaxAlloc", id)
		budget := ""
		for _, a := range info.Extra {
			if a.Key == "memory budget" {
				budget = a.Value
			}
		}
		require.Contains(t, budget, "shared by every host device", "%s: the memory budget says it is shared", id)
	}
}

func TestResolve(t *testing.T) {
	d := newDevice(0)
	a, _ := d.Alloc(1000)
	b, _ := d.Alloc(100)
	defer d.Free(a.Ptr)
	defer d.Free(b.Ptr)
	mem, err := d.Resolve(a.Ptr+10, 990)
	require.NoError(t, err, "Resolve(interior, to the end)")
	require.Len(t, mem, 990, "Resolve(interior, to the end)")
	mem[0] = 42
	whole, _ := d.Resolve(a.Ptr, 1000)
	assert.Equal(t, byte(42), whole[10], "Resolve of an interior pointer aliases the allocation")
	for _, c := range []struct {
		p    device.DevicePtr
		n    int
		want []string
	}{
		{a.Ptr + 10, 991, []string{(a.Ptr + 10).String(), fmt.Sprintf("%#x", uint64(a.Ptr)+1001), a.Ptr.String(), fmt.Sprintf("%#x", uint64(a.Ptr)+1000)}},
		{a.Ptr + 1000, 1, []string{"extends past allocation", a.Ptr.String()}},
		{b.Ptr + 256, 1, []string{"not inside any live allocation"}}, // past the last slot
		{0x10, 1, []string{"0x10"}},
		{a.Ptr, -1, []string{"negative"}},
	} {
		_, err := d.Resolve(c.p, c.n)
		assertCode(t, device.CodeInvalidArgument, err, fmt.Sprintf("Resolve(%v, %d)", c.p, c.n), c.want...)
	}
}

func TestCopyBounds(t *testing.T) {
	d := newDevice(0)
	q, _ := d.NewQueue()
	defer q.Release()
	a, _ := d.Alloc(100)
	defer d.Free(a.Ptr)
	for name, err := range map[string]error{
		"CopyIn past the end":  q.CopyIn(a.Ptr+50, make([]byte, 51)),
		"CopyOut past the end": q.CopyOut(make([]byte, 101), a.Ptr),
		"Copy past the end":    q.Copy(a.Ptr, a.Ptr+1, 100),
		"Copy negative":        q.Copy(a.Ptr, a.Ptr, -1),
		"CopyIn to nowhere":    q.CopyIn(0x99, []byte{1}),
	} {
		assertCode(t, device.CodeInvalidArgument, err, name)
	}
	assert.NoError(t, q.Sync(), "Sync after refused copies")
	// Zero-length copies do nothing, even at bad addresses.
	assert.NoError(t, q.CopyIn(0x99, nil), "zero-length CopyIn")
}

func TestLoad(t *testing.T) {
	d := newDevice(0)
	_, err := d.Load(testOpenCLOnly)
	want := "kernel test_opencl_only has no image for host:0 (has: opencl-c, ptx)"
	assertCode(t, device.CodeInvalidBinary, err, "Load(opencl only)", want)
	f, err := d.Load(testSaxpy)
	require.NoError(t, err, "Load(saxpy)")
	require.Equal(t, FunctionBytes, f.Bytes(), "Load(saxpy): Bytes")
	require.Equal(t, device.ImageHost, f.Image(), "Load(saxpy): Image")
	require.Same(t, testSaxpy, f.Kernel(), "Load(saxpy): Kernel")
	// A function of another device is refused.
	q, _ := newDevice(1).NewQueue()
	defer q.Release()
	err = q.Launch(f, device.Shape{Size: [3]int{1}}, make([]device.Arg, 4))
	assertCode(t, device.CodeInvalidArgument, err, "Launch of another device's function", "loaded on host:0")
}

func TestLaunchErrors(t *testing.T) {
	d := newDevice(0)
	q, _ := d.NewQueue()
	defer q.Release()
	f, _ := d.Load(testSaxpy)
	x, _ := d.Alloc(16)
	defer d.Free(x.Ptr)
	args := []device.Arg{{Bits: 4}, {}, {Ptr: x.Ptr}, {Ptr: 0x5}}
	err := q.Launch(f, device.Shape{Size: [3]int{4}}, args)
	assertCode(t, device.CodeInvalidArgument, err, "Launch with a bad buffer pointer", "argument 3 (y)")
	args[3].Ptr = x.Ptr
	err = q.Launch(f, device.Shape{Size: [3]int{4}, Threads: 2048}, args)
	assertCode(t, device.CodeInvalidArgument, err, "Launch with 2048 threads", "1024")
}

// LaunchChecked (device.CheckedLauncher, what package target calls) runs
// the kernel as Launch does, inline and on the queue's goroutine, with the
// shape read during the call only; it still refuses another device's
// function, a wrong argument count and unknown pointers, without panicking.
func TestLaunchChecked(t *testing.T) {
	d := newDevice(0)
	qq, _ := d.NewQueue()
	defer qq.Release()
	q := qq.(device.CheckedLauncher)
	f, _ := d.Load(testSaxpy)
	const n = 1000
	x, _ := d.Alloc(4 * n)
	defer d.Free(x.Ptr)
	y, _ := d.Alloc(4 * n)
	defer d.Free(y.Ptr)
	xs, ys := make([]byte, 4*n), make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(xs[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(ys[4*i:], math.Float32bits(1))
	}
	require.NoError(t, qq.CopyIn(x.Ptr, xs))
	require.NoError(t, qq.CopyIn(y.Ptr, ys))
	args := []device.Arg{{Bits: n}, {Bits: uint64(math.Float32bits(2))}, {Ptr: x.Ptr}, {Ptr: y.Ptr}}
	shape := device.Shape{Size: [3]int{n}, Teams: 3}
	require.NoError(t, q.LaunchChecked(f, &shape, args), "inline LaunchChecked")
	// A large copy first, so the next launch goes to the queue's
	// goroutine: it must keep its own copy of the shape.
	big, _ := d.Alloc(1 << 20)
	defer d.Free(big.Ptr)
	require.NoError(t, qq.CopyIn(big.Ptr, make([]byte, 1<<20)))
	require.NoError(t, q.LaunchChecked(f, &shape, args), "queued LaunchChecked")
	shape.Size[0] = 1 // after the call: the queued launch must not see it
	require.NoError(t, qq.Sync())
	require.NoError(t, qq.CopyOut(ys, y.Ptr))
	for i := range n {
		want := 1 + 2*2*float32(i)
		if got := math.Float32frombits(binary.LittleEndian.Uint32(ys[4*i:])); got != want {
			require.Equal(t, want, got, "y[%d] after two saxpy launches", i)
		}
	}

	q1, _ := newDevice(1).NewQueue()
	defer q1.Release()
	err := q1.(device.CheckedLauncher).LaunchChecked(f, &shape, args)
	assertCode(t, device.CodeInvalidArgument, err, "LaunchChecked of another device's function", "loaded on host:0")
	err = q.LaunchChecked(f, &shape, args[:2])
	assertCode(t, device.CodeInvalidArgument, err, "LaunchChecked with 2 arguments", "takes 4 arguments")
	err = q.LaunchChecked(f, &shape, []device.Arg{{Bits: n}, {}, {Ptr: x.Ptr}, {Ptr: 0x5}})
	assertCode(t, device.CodeInvalidArgument, err, "LaunchChecked with a bad buffer pointer", "argument 3 (y)")
	assert.NoError(t, qq.Sync(), "Sync after refused launches")
}

// A kernel that panics gives an error: returned by Launch when it ran
// inline, by Sync when it ran on the queue's goroutine.
func TestLaunchPanic(t *testing.T) {
	d := newDevice(0)
	q, _ := d.NewQueue()
	defer q.Release()
	f, _ := d.Load(testPanics)
	err := q.Launch(f, device.Shape{Size: [3]int{100}, Teams: 4}, []device.Arg{{Bits: 2}})
	assert.ErrorContains(t, err, "panicked in team 2 of 4", "inline Launch of a panicking kernel")
	err = q.Launch(f, device.Shape{Size: [3]int{1}, Teams: 1}, []device.Arg{{Bits: 0}})
	assert.ErrorContains(t, err, "test_panics: team 0", "inline Launch of a single-team panicking kernel")
	// Queue work first so that the launch is asynchronous. The queue's
	// goroutine may finish that work before Launch looks (then the launch
	// runs inline and fails at once): try again, a few times.
	a, _ := d.Alloc(1 << 20)
	defer d.Free(a.Ptr)
	queued := false
	for try := 0; try < 20 && !queued; try++ {
		require.NoError(t, q.CopyIn(a.Ptr, make([]byte, 1<<20)))
		err = q.Launch(f, device.Shape{Size: [3]int{100}, Teams: 3}, []device.Arg{{Bits: 1}})
		if err != nil {
			require.ErrorContains(t, err, "panicked in team 1 of 3", "Launch that ran inline after the copy finished")
			continue
		}
		queued = true
	}
	require.True(t, queued, "no launch was queued behind a 1 MiB copy in 20 tries")
	ev, _ := q.Record()
	assert.Error(t, ev.Wait(), "Wait after a failed asynchronous launch")
	assert.ErrorContains(t, q.Sync(), "panicked in team 1 of 3", "Sync after a panicking asynchronous launch")
	assert.NoError(t, q.Sync(), "second Sync: the error cleared")
}

func TestReleasedQueue(t *testing.T) {
	d := newDevice(0)
	q, _ := d.NewQueue()
	a, _ := d.Alloc(1 << 20)
	defer d.Free(a.Ptr)
	src := bytes.Repeat([]byte{7}, 1<<20)
	require.NoError(t, q.CopyIn(a.Ptr, src)) // asynchronous: starts the goroutine
	require.NoError(t, q.Release())
	got, _ := d.Resolve(a.Ptr, 1<<20)
	assert.True(t, bytes.Equal(got, src), "Release returned before the queued copy was done")
	f, _ := d.Load(testEmpty)
	_, recErr := q.Record()
	for name, err := range map[string]error{
		"CopyIn":  q.CopyIn(a.Ptr, []byte{1}),
		"CopyOut": q.CopyOut([]byte{1}, a.Ptr),
		"Copy":    q.Copy(a.Ptr, a.Ptr, 1),
		"Launch":  q.Launch(f, device.Shape{Size: [3]int{1}}, nil),
		"Record":  recErr,
		"Sync":    q.Sync(),
		"Release": q.Release(),
	} {
		assert.ErrorContains(t, err, "released", "%s on a released queue", name)
	}
}

// Inline and queued operations keep their order: small copies that follow a
// large queued one must not overtake it.
func TestInlineAfterQueued(t *testing.T) {
	d := newDevice(0)
	q, _ := d.NewQueue()
	defer q.Release()
	const n = 8 << 20
	a, _ := d.Alloc(n)
	defer d.Free(a.Ptr)
	for round := range 20 {
		big := bytes.Repeat([]byte{byte(round)}, n)
		require.NoError(t, q.CopyIn(a.Ptr, big))
		require.NoError(t, q.CopyIn(a.Ptr, []byte{0xff})) // must land after the big one
		out := make([]byte, 2)
		require.NoError(t, q.CopyOut(out, a.Ptr))
		require.NoError(t, q.Sync())
		require.Equal(t, []byte{0xff, byte(round)}, out, "round %d", round)
	}
}

func TestAllocFreeAllocatesNothing(t *testing.T) {
	d := newDevice(0)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		b, _ := d.Alloc(4096)
		d.Free(b.Ptr)
	}), "allocations of Alloc+Free of 4 KiB")
	q, _ := d.NewQueue()
	defer q.Release()
	f, _ := d.Load(testSaxpy)
	x, _ := d.Alloc(4096)
	y, _ := d.Alloc(4096)
	defer d.Free(x.Ptr)
	defer d.Free(y.Ptr)
	args := []device.Arg{{Bits: 1024}, {Bits: 0x3f800000}, {Ptr: x.Ptr}, {Ptr: y.Ptr}}
	src := make([]byte, 4096)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		q.CopyIn(x.Ptr, src)
		q.Launch(f, device.Shape{Size: [3]int{1024}}, args)
		q.Sync()
	}), "allocations of CopyIn+Launch+Sync")
}

func unsafePointer(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// TestBadCountWarnsOnce runs this test binary again with a bad
// GOMPT_HOST_DEVICES: the child's Devices calls must print exactly one
// warning line and give one device.
func TestBadCountWarnsOnce(t *testing.T) {
	if os.Getenv("HOST_TEST_CHILD") == "1" {
		p := newPlugin()
		for range 3 {
			if devs, err := p.Devices(); err != nil || len(devs) != 1 {
				fmt.Printf("Devices = %d devices, %v\n", len(devs), err)
				os.Exit(1)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBadCountWarnsOnce$")
	cmd.Env = append(os.Environ(), "HOST_TEST_CHILD=1", "GOMPT_HOST_DEVICES=x")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "child:\n%s%s", out, stderr.Bytes())
	assert.Equal(t, "gompt: GOMPT_HOST_DEVICES=\"x\": want a whole number 0..64; using 1\n", stderr.String(), "stderr")
}

// assertCode asserts that err is a device error with code whose message
// names each of names; what says which call gave it.
func assertCode(t *testing.T, code device.Code, err error, what string, names ...string) bool {
	t.Helper()
	if !assert.Equal(t, code, device.CodeOf(err), "%s: %v", what, err) {
		return false
	}
	ok := true
	for _, n := range names {
		ok = assert.ErrorContains(t, err, n, "%s names %s", what, n) && ok
	}
	return ok
}

// LaunchChecked makes generic.Queue's launch steps itself (the runtime's
// path, with direct calls): where both refuse a launch, it refuses it with
// Launch's error, in Launch's order (the function, the released queue,
// the function's device, then the arguments).
func TestLaunchCheckedRefusesAsLaunch(t *testing.T) {
	d := newDevice(0)
	f, _ := d.Load(testSaxpy)
	other, _ := newDevice(1).Load(testSaxpy)
	x, _ := d.Alloc(16)
	defer d.Free(x.Ptr)
	good := []device.Arg{{Bits: 4}, {Bits: 0}, {Ptr: x.Ptr}, {Ptr: x.Ptr}}
	shape := device.Shape{Size: [3]int{4}}
	type fakeFunction struct{ device.Function }
	for _, c := range []struct {
		what     string
		f        device.Function
		args     []device.Arg
		released bool
	}{
		{"a function of no host device", fakeFunction{f}, good[:1], false},
		{"a nil function", nil, good, false},
		{"a nil *Function", (*Function)(nil), good, false},
		{"another device's function, too few arguments", other, good[:2], false},
		{"too few arguments", f, good[:2], false},
		{"a released queue, another device's function", other, good[:2], true},
		{"a released queue", f, good, true},
		{"a pointer the device does not know", f, []device.Arg{{Bits: 4}, {}, {Ptr: x.Ptr}, {Ptr: 0x5}}, false},
	} {
		qq, err := d.NewQueue()
		require.NoError(t, err)
		if c.released {
			require.NoError(t, qq.Release())
		}
		want := qq.Launch(c.f, shape, c.args)
		got := qq.(device.CheckedLauncher).LaunchChecked(c.f, &shape, c.args)
		if assert.Error(t, want, "%s: Launch", c.what) {
			assert.Equal(t, want.Error(), fmt.Sprint(got), "%s: LaunchChecked", c.what)
		}
		if !c.released {
			assert.NoError(t, qq.Release())
		}
	}
}
