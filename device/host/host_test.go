package host

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/devicetest"
)

func TestConformance(t *testing.T) {
	devicetest.TestDevice(t, newDevice(3), testKernels...)
}

func TestRegisteredDevices(t *testing.T) {
	p, ok := device.Lookup("host")
	if !ok {
		t.Fatal(`plugin "host" is not registered`)
	}
	a, err := p.Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	b, _ := p.Devices()
	if len(a) != 1 || len(b) != 1 || a[0] != b[0] {
		t.Fatalf("Devices gave %v then %v; want the same single device", a, b)
	}
	if id := a[0].(*Device).ID(); id != "host:0" {
		t.Errorf("ID = %q, want host:0", id)
	}
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
		if n != c.n || (warn != "") != c.warn {
			t.Errorf("parseCount(%q) = %d, %q; want %d, warning %v", c.in, n, warn, c.n, c.warn)
		}
	}
	_, warn := parseCount("x")
	if want := `gompt: GOMPT_HOST_DEVICES="x": want a whole number 0..64; using 1`; warn != want {
		t.Errorf("warning = %q, want %q", warn, want)
	}
}

func TestPluginZeroDevices(t *testing.T) {
	t.Setenv("GOMPT_HOST_DEVICES", "0")
	devs, err := (&plugin{}).Devices()
	if len(devs) != 0 || !errors.Is(err, device.ErrNoDevice) || !strings.Contains(err.Error(), "GOMPT_HOST_DEVICES=0") {
		t.Errorf("Devices with GOMPT_HOST_DEVICES=0 = %v, %v; want none and ErrNoDevice naming the variable", devs, err)
	}
	t.Setenv("GOMPT_HOST_DEVICES", "3")
	devs, err = (&plugin{}).Devices()
	if err != nil || len(devs) != 3 {
		t.Fatalf("Devices with GOMPT_HOST_DEVICES=3 = %d devices, %v", len(devs), err)
	}
	// Separate address spaces.
	b0, _ := devs[0].Alloc(64)
	b2, _ := devs[2].Alloc(64)
	defer devs[0].Free(b0.Ptr)
	defer devs[2].Free(b2.Ptr)
	if _, err := devs[0].(*Device).Resolve(b2.Ptr, 1); err == nil {
		t.Errorf("host:0 resolved %v, an address of host:2", b2.Ptr)
	}
	if id := devs[2].(*Device).ID(); id != "host:2" {
		t.Errorf("third device is %q, want host:2", id)
	}
}

func TestInfo(t *testing.T) {
	d := newDevice(0)
	info := d.Info()
	if info.Name != "gompt host device" || info.Backend != "host" || info.Type != "cpu" ||
		info.DriverVersion != runtime.Version() || info.ComputeUnits != runtime.GOMAXPROCS(0) ||
		info.MaxThreadsPerTeam != 1024 || info.UnifiedMemory || info.TimerResolutionNS != 1 {
		t.Errorf("Info = %+v", info)
	}
	if info.GlobalMem < 64<<20 || info.MaxAlloc == 0 || info.MaxAlloc > info.GlobalMem {
		t.Errorf("Info: GlobalMem %d, MaxAlloc %d", info.GlobalMem, info.MaxAlloc)
	}
	info.Extra[0].Value = "changed"
	if d.Info().Extra[0].Value == "changed" {
		t.Error("Info's Extra aliases the device's")
	}
	if now, _ := d.Now(); now <= 0 {
		t.Errorf("Now = %d, want > 0", now)
	}
}

func TestSizeClass(t *testing.T) {
	prevClass, prevSpan := -1, uint64(0)
	for _, n := range []int{1, 255, 256, 257, 4095, 4096, 4097, 5120, 5121, 8192, 8193, 1 << 20, 1<<20 + 7, 1 << 30, 1<<30 + 12345} {
		c, span := sizeClass(n)
		if span < uint64(n) || span%addrAlign != 0 || c < 0 || c >= numClasses {
			t.Errorf("sizeClass(%d) = %d, %d: want a class in [0,%d) of a multiple of 256 >= %d", n, c, span, numClasses, n)
		}
		if n > smallClassMax && float64(span) > 1.25*float64(n)+1 {
			t.Errorf("sizeClass(%d) = span %d: more than 25%% waste", n, span)
		}
		if c < prevClass || (c == prevClass) != (span == prevSpan) {
			t.Errorf("sizeClass(%d) = %d, %d after %d, %d: classes and spans must rise together", n, c, span, prevClass, prevSpan)
		}
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
		if err != nil {
			t.Fatal(err)
		}
		if b.Ptr%256 != 0 || uint64(b.Ptr) < d.base || uint64(b.Ptr) >= d.limit || seen[b.Ptr] {
			t.Fatalf("Alloc(%d) = %v: want 256-aligned, in %s, not live already", n, b.Ptr, d.spaceString())
		}
		seen[b.Ptr] = true
		mem, err := d.Resolve(b.Ptr, n)
		if err != nil || len(mem) != n {
			t.Fatalf("Resolve(%v, %d) = %d bytes, %v", b.Ptr, n, len(mem), err)
		}
		if unsafePointer(mem)%8 != 0 {
			t.Fatalf("backing of %v is not 8-byte aligned", b.Ptr)
		}
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		if err := d.Free(b.Ptr); err != nil {
			t.Fatal(err)
		}
	}
	if n, c := d.MemInUse(); n != 0 || c != 0 {
		t.Errorf("MemInUse after freeing all = %d, %d", n, c)
	}
	// A freed block of the same class is reused, with its address.
	b, _ := d.Alloc(4096)
	d.Free(b.Ptr)
	b2, _ := d.Alloc(4000)
	if b2.Ptr != b.Ptr {
		t.Errorf("Alloc(4000) after freeing a 4096 block = %v, want the cached %v", b2.Ptr, b.Ptr)
	}
	d.Free(b2.Ptr)
}

func TestAllocErrors(t *testing.T) {
	d := newDevice(0)
	max := d.Info().MaxAlloc
	for _, n := range []int{0, -5, int(max) + 1} {
		_, err := d.Alloc(n)
		if device.CodeOf(err) != device.CodeInvalidArgument || !strings.Contains(err.Error(), fmt.Sprint(n)) || !strings.Contains(err.Error(), fmt.Sprint(max)) {
			t.Errorf("Alloc(%d) = %v; want invalid argument naming the size and the limit %d", n, err, max)
		}
	}
	err := d.Free(0x1234)
	if device.CodeOf(err) != device.CodeInvalidArgument || !strings.Contains(err.Error(), "0x1234") {
		t.Errorf("Free(0x1234) = %v; want invalid argument naming the pointer", err)
	}
	// Out of memory is an error, not a crash: a device with a tiny budget
	// (2 MiB, so MaxAlloc is 1 MiB), holding a freed 200 KiB block for reuse.
	d = newDeviceIn(0, newBudget(2<<20, "test"))
	c, err := d.Alloc(200 << 10)
	if err != nil {
		t.Fatal(err)
	}
	d.Free(c.Ptr)
	a, err := d.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	// The cached block is dropped when memory is short.
	b, err := d.Alloc(1 << 20)
	if err != nil {
		t.Fatalf("Alloc that needs the cached block's memory: %v", err)
	}
	_, err = d.Alloc(600 << 10)
	if device.CodeOf(err) != device.CodeOutOfResources {
		t.Errorf("Alloc past the budget = %v; want out of resources", err)
	}
	d.Free(a.Ptr)
	if _, n := d.MemInUse(); n != 1 {
		t.Errorf("%d allocations live after a failed Alloc, want 1", n)
	}
	a, err = d.Alloc(900 << 10)
	if err != nil {
		t.Fatalf("Alloc after freeing: %v", err)
	}
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
		if info.GlobalMem != 4<<20 || info.MaxAlloc != 2<<20 {
			t.Errorf("%s: GlobalMem %d, MaxAlloc %d; want the shared 4 MiB and 2 MiB", d.id, info.GlobalMem, info.MaxAlloc)
		}
	}
	// Three devices, 1.5 MiB each, on 4 MiB: the third does not fit.
	var live []device.Buffer
	for _, d := range devs[:2] {
		b, err := d.Alloc(3 << 19)
		if err != nil {
			t.Fatalf("%s: %v", d.id, err)
		}
		live = append(live, b)
	}
	_, err := devs[2].Alloc(3 << 19)
	if device.CodeOf(err) != device.CodeOutOfResources || !strings.Contains(err.Error(), "the 3 host devices hold 3145728 bytes of the 4194304 they share") {
		t.Fatalf("a third 1.5 MiB on a shared 4 MiB = %v; want out of resources naming the shared budget", err)
	}
	// Freed on device 0 and kept there for reuse: device 2 takes it back.
	if err := devs[0].Free(live[0].Ptr); err != nil {
		t.Fatal(err)
	}
	small, err := devs[0].Alloc(200 << 10)
	if err != nil {
		t.Fatal(err)
	}
	devs[0].Free(small.Ptr) // cached on device 0
	if devs[0].cached == 0 {
		t.Fatal("device 0 keeps no freed block; the test needs one")
	}
	b, err := devs[2].Alloc(2 << 20)
	if err != nil {
		t.Fatalf("device 2, with device 0's memory freed: %v", err)
	}
	if held, _ := shared.state(); held > shared.limit {
		t.Errorf("devices hold %d bytes of a shared %d", held, shared.limit)
	}
	if _, err := devs[0].Alloc(1 << 20); device.CodeOf(err) != device.CodeOutOfResources {
		t.Errorf("device 0 past the shared budget = %v; want out of resources", err)
	}
	devs[2].Free(b.Ptr)
	devs[1].Free(live[1].Ptr)
	for _, d := range devs {
		d.mu.Lock()
		d.dropCache()
		d.mu.Unlock()
	}
	if held, _ := shared.state(); held != 0 {
		t.Errorf("the budget holds %d bytes after every device freed everything", held)
	}
}

// With GOMPT_HOST_DEVICES=64, the plugin's devices share the process's
// budget, and their Info says so, instead of each promising half of the
// machine's memory.
func TestPluginDevicesShareTheProcessBudget(t *testing.T) {
	if os.Getenv("GOMPT_HOST_BUDGET_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPluginDevicesShareTheProcessBudget$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "GOMPT_HOST_BUDGET_CHILD=1", "GOMPT_HOST_DEVICES=64")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestPluginDevicesShareTheProcessBudget") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	p, _ := device.Lookup(Name)
	devs, err := p.Devices()
	if err != nil || len(devs) != 64 {
		t.Fatalf("Devices with GOMPT_HOST_DEVICES=64: %d devices, %v", len(devs), err)
	}
	total, _ := PhysicalMemory()
	for _, d := range devs {
		info := d.Info()
		if info.GlobalMem > total/2 || info.GlobalMem != devs[0].Info().GlobalMem || info.MaxAlloc > info.GlobalMem {
			t.Fatalf("%s: GlobalMem %d, MaxAlloc %d; want the budget every host device shares, at most half of the %d bytes this process may use",
				d.(*Device).ID(), info.GlobalMem, info.MaxAlloc, total)
		}
		budget := ""
		for _, a := range info.Extra {
			if a.Key == "memory budget" {
				budget = a.Value
			}
		}
		if !strings.Contains(budget, "shared by every host device") {
			t.Fatalf("%s: memory budget %q does not say it is shared", d.(*Device).ID(), budget)
		}
	}
}

func TestResolve(t *testing.T) {
	d := newDevice(0)
	a, _ := d.Alloc(1000)
	b, _ := d.Alloc(100)
	defer d.Free(a.Ptr)
	defer d.Free(b.Ptr)
	mem, err := d.Resolve(a.Ptr+10, 990)
	if err != nil || len(mem) != 990 {
		t.Fatalf("Resolve(interior, to the end) = %d bytes, %v", len(mem), err)
	}
	mem[0] = 42
	whole, _ := d.Resolve(a.Ptr, 1000)
	if whole[10] != 42 {
		t.Error("Resolve of an interior pointer does not alias the allocation")
	}
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
		if device.CodeOf(err) != device.CodeInvalidArgument {
			t.Errorf("Resolve(%v, %d) = %v, want invalid argument", c.p, c.n, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Resolve(%v, %d) = %q, want it to name %s", c.p, c.n, err, w)
			}
		}
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
		if device.CodeOf(err) != device.CodeInvalidArgument {
			t.Errorf("%s: %v, want invalid argument", name, err)
		}
	}
	if err := q.Sync(); err != nil {
		t.Errorf("Sync after refused copies: %v", err)
	}
	// Zero-length copies do nothing, even at bad addresses.
	if err := q.CopyIn(0x99, nil); err != nil {
		t.Errorf("zero-length CopyIn: %v", err)
	}
}

func TestLoad(t *testing.T) {
	d := newDevice(0)
	_, err := d.Load(testOpenCLOnly)
	want := "kernel test_opencl_only has no image for host:0 (has: opencl-c, ptx)"
	if device.CodeOf(err) != device.CodeInvalidBinary || !strings.Contains(err.Error(), want) {
		t.Errorf("Load(opencl only) = %v; want invalid binary %q", err, want)
	}
	f, err := d.Load(testSaxpy)
	if err != nil || f.Bytes() != FunctionBytes || f.Image() != device.ImageHost || f.Kernel() != testSaxpy {
		t.Fatalf("Load(saxpy) = %v, %v", f, err)
	}
	// A function of another device is refused.
	q, _ := newDevice(1).NewQueue()
	defer q.Release()
	err = q.Launch(f, device.Shape{Size: [3]int{1}}, make([]device.Arg, 4))
	if device.CodeOf(err) != device.CodeInvalidArgument || !strings.Contains(err.Error(), "loaded on host:0") {
		t.Errorf("Launch of another device's function = %v", err)
	}
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
	if device.CodeOf(err) != device.CodeInvalidArgument || !strings.Contains(err.Error(), "argument 3 (y)") {
		t.Errorf("Launch with a bad buffer pointer = %v", err)
	}
	args[3].Ptr = x.Ptr
	err = q.Launch(f, device.Shape{Size: [3]int{4}, Threads: 2048}, args)
	if device.CodeOf(err) != device.CodeInvalidArgument || !strings.Contains(err.Error(), "1024") {
		t.Errorf("Launch with 2048 threads = %v", err)
	}
}

// A kernel that panics gives an error: returned by Launch when it ran
// inline, by Sync when it ran on the queue's goroutine.
func TestLaunchPanic(t *testing.T) {
	d := newDevice(0)
	q, _ := d.NewQueue()
	defer q.Release()
	f, _ := d.Load(testPanics)
	err := q.Launch(f, device.Shape{Size: [3]int{100}, Teams: 4}, []device.Arg{{Bits: 2}})
	if err == nil || !strings.Contains(err.Error(), "panicked in team 2 of 4") {
		t.Errorf("inline Launch of a panicking kernel = %v", err)
	}
	err = q.Launch(f, device.Shape{Size: [3]int{1}, Teams: 1}, []device.Arg{{Bits: 0}})
	if err == nil || !strings.Contains(err.Error(), "test_panics: team 0") {
		t.Errorf("inline Launch of a single-team panicking kernel = %v", err)
	}
	// Queue work first so that the launch is asynchronous.
	a, _ := d.Alloc(1 << 20)
	defer d.Free(a.Ptr)
	if err := q.CopyIn(a.Ptr, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := q.Launch(f, device.Shape{Size: [3]int{100}, Teams: 3}, []device.Arg{{Bits: 1}}); err != nil {
		t.Fatalf("asynchronous Launch returned %v; want the error from Sync", err)
	}
	ev, _ := q.Record()
	if err := ev.Wait(); err == nil {
		t.Error("Wait after a failed asynchronous launch: no error")
	}
	if err := q.Sync(); err == nil || !strings.Contains(err.Error(), "panicked in team 1 of 3") {
		t.Errorf("Sync after a panicking asynchronous launch = %v", err)
	}
	if err := q.Sync(); err != nil {
		t.Errorf("second Sync = %v, want the error cleared", err)
	}
}

func TestReleasedQueue(t *testing.T) {
	d := newDevice(0)
	q, _ := d.NewQueue()
	a, _ := d.Alloc(1 << 20)
	defer d.Free(a.Ptr)
	src := bytes.Repeat([]byte{7}, 1<<20)
	if err := q.CopyIn(a.Ptr, src); err != nil { // asynchronous: starts the goroutine
		t.Fatal(err)
	}
	if err := q.Release(); err != nil {
		t.Fatal(err)
	}
	got, _ := d.Resolve(a.Ptr, 1<<20)
	if !bytes.Equal(got, src) {
		t.Error("Release returned before the queued copy was done")
	}
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
		if err == nil || !strings.Contains(err.Error(), "released") {
			t.Errorf("%s on a released queue = %v, want an error", name, err)
		}
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
		if err := q.CopyIn(a.Ptr, big); err != nil {
			t.Fatal(err)
		}
		if err := q.CopyIn(a.Ptr, []byte{0xff}); err != nil { // must land after the big one
			t.Fatal(err)
		}
		out := make([]byte, 2)
		if err := q.CopyOut(out, a.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		if out[0] != 0xff || out[1] != byte(round) {
			t.Fatalf("round %d: read %v, want [255 %d]", round, out, round)
		}
	}
}

func TestAllocFreeAllocatesNothing(t *testing.T) {
	d := newDevice(0)
	if n := testing.AllocsPerRun(1000, func() {
		b, _ := d.Alloc(4096)
		d.Free(b.Ptr)
	}); n != 0 {
		t.Errorf("Alloc+Free of 4 KiB: %v allocations, want 0", n)
	}
	q, _ := d.NewQueue()
	defer q.Release()
	f, _ := d.Load(testSaxpy)
	x, _ := d.Alloc(4096)
	y, _ := d.Alloc(4096)
	defer d.Free(x.Ptr)
	defer d.Free(y.Ptr)
	args := []device.Arg{{Bits: 1024}, {Bits: 0x3f800000}, {Ptr: x.Ptr}, {Ptr: y.Ptr}}
	src := make([]byte, 4096)
	if n := testing.AllocsPerRun(1000, func() {
		q.CopyIn(x.Ptr, src)
		q.Launch(f, device.Shape{Size: [3]int{1024}}, args)
		q.Sync()
	}); n != 0 {
		t.Errorf("CopyIn+Launch+Sync: %v allocations, want 0", n)
	}
}

func unsafePointer(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// TestBadCountWarnsOnce runs this test binary again with a bad
// GOMPT_HOST_DEVICES: the child's Devices calls must print exactly one
// warning line and give one device.
func TestBadCountWarnsOnce(t *testing.T) {
	if os.Getenv("HOST_TEST_CHILD") == "1" {
		p := &plugin{}
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
	if err != nil {
		t.Fatalf("child: %v\n%s%s", err, out, stderr.Bytes())
	}
	want := "gompt: GOMPT_HOST_DEVICES=\"x\": want a whole number 0..64; using 1\n"
	if got := stderr.String(); got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}
