package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Shutdown's promises, each checked in a child process of its own
// (Shutdown ends the process's runtime for good): what it waits for, what
// it refuses meanwhile, and what it reports. The child is TestShutdownScenarioChild,
// run with GOMPT_RTM_CHILD naming the scenario; it prints "FAIL: ..." for
// each broken promise and "rtm-ok" at the end.

// rtmGate holds the next device Alloc of the rtm-gate plugin's devices,
// and rtmLoadGate the next kernel Load, until released: a memory routine
// or a kernel load in flight for as long as the test wants.
var rtmGate, rtmLoadGate rtmGateState

type rtmGateState struct {
	mu      sync.Mutex
	armed   bool
	entered chan struct{} // closed when the held call has begun
	release chan struct{} // closing it lets the held call go on
}

func (g *rtmGateState) arm() (entered, release chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = true
	g.entered, g.release = make(chan struct{}), make(chan struct{})
	return g.entered, g.release
}

// hold holds the call that finds g armed (disarming it) until released.
func (g *rtmGateState) hold() {
	g.mu.Lock()
	held := g.armed
	g.armed = false
	entered, release := g.entered, g.release
	g.mu.Unlock()
	if held {
		close(entered)
		<-release
	}
}

// rtmGateDevice is a host device whose Alloc and Load can be held
// (rtmGate, rtmLoadGate), and which notes a Close that comes while one of
// its Allocs is in flight.
type rtmGateDevice struct {
	device.Device
	inFlight       atomic.Int32
	closedInFlight atomic.Bool
}

func (d *rtmGateDevice) Alloc(size int) (device.Buffer, error) {
	d.inFlight.Add(1)
	defer d.inFlight.Add(-1)
	rtmGate.hold()
	return d.Device.Alloc(size)
}

// Load is held as Alloc is, by the gate armed for loads.
func (d *rtmGateDevice) Load(k *device.Kernel) (device.Function, error) {
	rtmLoadGate.hold()
	return d.Device.Load(k)
}

func (d *rtmGateDevice) MemInUse() (int64, int) { return d.Device.(device.MemInfo).MemInUse() }

func (d *rtmGateDevice) Close() error {
	if d.inFlight.Load() > 0 {
		d.closedInFlight.Store(true)
	}
	return nil
}

// rtmWrapPlugin is the host plugin's devices, each wrapped.
type rtmWrapPlugin struct {
	name string
	wrap func(device.Device) device.Device
}

func (p rtmWrapPlugin) Devices() ([]device.Device, error) {
	hp, ok := device.Lookup(host.Name)
	if !ok {
		return nil, device.NoDevice(p.name, errors.New("host plugin not registered"))
	}
	ds, err := hp.Devices()
	out := make([]device.Device, len(ds))
	for i, d := range ds {
		out[i] = p.wrap(d)
	}
	return out, err
}

func init() {
	// Names that sort after the plugins other tests list.
	device.Register("rtm-gate", rtmWrapPlugin{"rtm-gate", func(d device.Device) device.Device { return &rtmGateDevice{Device: d} }})
	device.Register("rtm-plain", rtmWrapPlugin{"rtm-plain", func(d device.Device) device.Device { return plainDevice{d} }})
}

// rtmUntil polls cond until it holds or limit has passed, and returns
// cond's last value.
func rtmUntil(cond func() bool, limit time.Duration) bool {
	for end := time.Now().Add(limit); !cond(); time.Sleep(100 * time.Microsecond) {
		if time.Now().After(end) {
			return cond()
		}
	}
	return true
}

// rtmQuiet is how long a child watches for Shutdown going on when it
// must not (a promise broken shows at once; the original never shows it,
// whatever the time).
const rtmQuiet = 300 * time.Millisecond

var rtmTool struct {
	mu      sync.Mutex
	lines   []string
	init1   chan struct{}     // closed when device 1's device_initialize callback has begun
	modules map[uint64]string // device_load's module ids: "DEV FILE"
	traced1 atomic.Bool       // device 1's trace records were delivered
}

func rtmToolf(format string, args ...any) {
	rtmTool.mu.Lock()
	rtmTool.lines = append(rtmTool.lines, fmt.Sprintf(format, args...))
	rtmTool.mu.Unlock()
}

func init() {
	scenario := os.Getenv("GOMPT_RTM_CHILD")
	if os.Getenv("GOMPT_RTM_TOOL") != "1" {
		return
	}
	rtmTool.init1 = make(chan struct{})
	rtmTool.modules = map[uint64]string{}
	ompt.RegisterTool("rtm", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, typ string, h *ompt.DeviceHandle, lk ompt.LookupFunc, _ string) {
				switch scenario {
				case "routine":
					if dev == 1 {
						// Device 1's first use is under way (its device
						// argument resolved): hold it until Shutdown begins.
						close(rtmTool.init1)
						rtmUntil(func() bool { return rt.closing.Load() }, time.Minute)
					}
				case "native":
					native := lk("ompt_set_trace_native").(ompt.SetTraceNativeFunc)
					rtmToolf("device %d %s: set_trace_native %v", dev, typ, native(h, true, ompt.NativeDataMotionExplicit|ompt.NativeKernelExecution))
					if dev == 1 {
						// Trace the device whose queues do not time their
						// operations: its records are timed by events around
						// each operation.
						lk("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
						lk("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return make([]byte, 1<<16) },
							func(_ int, _ []byte, bytes uint64, _ uint64, _ bool) {
								if bytes > 0 {
									rtmTool.traced1.Store(true)
								}
							})
					}
				case "lost1":
					if dev == 0 {
						lk("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, ompt.CallbackTargetDataOp)
						ok := lk("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return nil }, // no buffer: every record is lost
							func(int, []byte, uint64, uint64, bool) {})
						rtmToolf("device 0 start_trace %d", ok)
					}
				case "stuck":
					if dev == 0 {
						lk("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
						stuck := make(chan struct{}) // never closed: the tool's buffer_complete never returns
						ok := lk("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return make([]byte, 1<<16) },
							func(int, []byte, uint64, uint64, bool) { <-stuck })
						rtmToolf("device 0 start_trace %d", ok)
					}
				}
			}))
			if scenario == "native" {
				set(ompt.CallbackDeviceLoad, ompt.DeviceLoadCallback(func(dev int, file string, off int64, vma uintptr, bytes uint64, hostAddr, devAddr uintptr, mod uint64) {
					rtmToolf("device_load %d %s offset=%d vma=%#x bytes>0=%v host=%#x device=%#x", dev, file, off, vma, bytes > 0, hostAddr, devAddr)
					rtmTool.mu.Lock()
					rtmTool.modules[mod] = fmt.Sprintf("%d %s", dev, file)
					rtmTool.mu.Unlock()
				}))
				set(ompt.CallbackDeviceUnload, ompt.DeviceUnloadCallback(func(dev int, mod uint64) {
					rtmTool.mu.Lock()
					what, ok := rtmTool.modules[mod]
					rtmTool.mu.Unlock()
					if !ok || !strings.HasPrefix(what, fmt.Sprint(dev)+" ") {
						what = fmt.Sprintf("%d: module %d, not one device_load gave", dev, mod)
					}
					rtmToolf("device_unload %s", what)
				}))
			}
			return 1
		}, Finalize: func(*ompt.Data) { rtmToolf("finalize") }}
	})
}

// rtmRunChild runs scenario in a child process with env added, and checks
// that it kept every promise.
func rtmRunChild(t *testing.T, scenario string, env ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestShutdownScenarioChild$", "-test.count=1")
	vars := map[string]bool{}
	for _, v := range envVars(t) {
		vars[v] = true
	}
	cmd.Env = append(cleanEnv(vars), "GOMPT_RTM_CHILD="+scenario)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "%s: the child hung (killed after 90 s):\n%s%s", scenario, stdout.String(), stderr.String())
	require.NoError(t, err, "%s: child failed:\n%s%s", scenario, stdout.String(), stderr.String())
	for _, l := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(l, "FAIL: ") {
			assert.Fail(t, scenario+": "+strings.TrimPrefix(l, "FAIL: "))
		}
	}
	assert.Contains(t, stdout.String(), "rtm-ok", "%s: child's output", scenario)
	return stderr.String()
}

// rtmScenarios are child scenarios that other files add (in init).
var rtmScenarios = map[string]func(fail func(string, ...any), within func(string, func())){}

// TestShutdownScenarioChild is the child program of the tests below.
func TestShutdownScenarioChild(t *testing.T) {
	scenario := os.Getenv("GOMPT_RTM_CHILD")
	if scenario == "" {
		t.Skip("run by the TestRtmShutdown tests")
	}
	failed := false
	fail := func(format string, args ...any) {
		failed = true
		fmt.Printf("FAIL: "+format+"\n", args...)
	}
	// within runs f, and ends the child if it has not returned in 10 s.
	within := func(what string, f func()) {
		done := make(chan struct{})
		go func() { f(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			fmt.Printf("FAIL: %s did not return within 10 s\n", what)
			os.Exit(3)
		}
	}
	switch scenario {
	case "data-body":
		rtmChildDataBody(fail, within)
	case "task-chain":
		rtmChildTaskChain(fail, within)
	case "routine":
		rtmChildRoutine(fail, within)
	case "spare":
		rtmChildSpare(fail, within)
	case "held":
		rtmChildHeld(fail, within)
	case "native", "stuck", "lost1":
		rtmChildTool(scenario, fail, within)
	default:
		if f, ok := rtmScenarios[scenario]; ok {
			f(fail, within)
		} else {
			fail("no scenario %q", scenario)
		}
	}
	if !failed {
		fmt.Println("rtm-ok")
	}
}

// A target data region whose body is still running when Shutdown returns
// ends with the shut-down error: its exit needs a queue, and a closed
// device gives none (rather than hanging, or reusing what Shutdown
// released).
func TestShutdownEndsARunningDataRegionWithItsError(t *testing.T) {
	stderr := rtmRunChild(t, "data-body", "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=1")
	assert.Empty(t, stderr, "the child's standard error, no OMP_DISPLAY_ENV, no GOMPT_INFO")
}

func rtmChildDataBody(fail func(string, ...any), within func(string, func())) {
	// Mapped by an enter data that no exit data follows: Shutdown frees
	// it, as the data region's (the host device's close frees nothing).
	x := make([]float32, 1000)
	if err := EnterData(0, To(x)); err != nil {
		fail("EnterData: %v", err)
	}
	y := []float32{1, 2, 3, 4}
	inBody, release := make(chan struct{}), make(chan struct{})
	res := make(chan error, 1)
	go func() {
		res <- Data(0, []Map{ToFrom(y)}, func() error {
			close(inBody)
			<-release
			return nil
		})
	}()
	<-inBody
	within("Shutdown", func() {
		if err := Shutdown(); err != nil {
			fail("Shutdown with a data region's body running: %v", err)
		}
	})
	if devs := state().devs; len(devs) > 0 {
		if b, n := devs[0].d.(device.MemInfo).MemInUse(); n != 0 {
			fail("device 0 after Shutdown: %d allocations (%d bytes) of mapped data left; want them freed", n, b)
		}
	}
	close(release)
	within("the data region's end after Shutdown", func() {
		if err := <-res; !errors.Is(err, ErrShutdown) {
			fail("a data region whose body ran across Shutdown returned %v; want the shut-down error", err)
		}
	})
	within("EnterData after Shutdown", func() {
		if err := EnterData(0, To(y)); !errors.Is(err, ErrShutdown) {
			fail("EnterData after Shutdown: %v; want the shut-down error", err)
		}
	})
}

// Shutdown waits for the nowait tasks already returned to the caller,
// also one that still waits for its dependence on another: both run to
// the end with the right result, and only then does Shutdown go on.
func TestShutdownWaitsForATaskChain(t *testing.T) {
	rtmRunChild(t, "task-chain", "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=1")
}

func rtmChildTaskChain(fail func(string, ...any), within func(string, func())) {
	const n = 256
	x, y := ones(n)
	gate := make(chan struct{})
	a := Go(func() error { <-gate; return nil })
	b := TargetNowait(saxpyRegion(0, n, 2, x, y, To(x), ToFrom(y), DependOn(a)))
	shut := make(chan error, 1)
	go func() { shut <- shutdownWithin(20 * time.Second) }()
	if !rtmUntil(func() bool { return rt.closing.Load() }, 10*time.Second) {
		fail("Shutdown did not begin")
	}
	if rtmUntil(func() bool { return rt.shut.Load() }, rtmQuiet) {
		fail("Shutdown went on to close the devices while two nowait tasks were in flight")
	}
	close(gate)
	within("the tasks", func() {
		if err := a.Wait(); err != nil {
			fail("the Go task: %v", err)
		}
		if err := b.Wait(); err != nil {
			fail("the target nowait task depending on it: %v; want it to run, begun before Shutdown", err)
		} else if y[0] != 3 || y[n-1] != 3 {
			fail("the target nowait task: y = %g...%g, want 3", y[0], y[n-1])
		}
	})
	if err := <-shut; err != nil {
		fail("Shutdown: %v", err)
	}
}

// Shutdown waits for a device memory routine in flight, and the buffer
// that routine returns is freed with the device; a routine that had
// resolved its device before Shutdown began but starts after is refused,
// and does not keep Shutdown waiting.
func TestShutdownWaitsForMemoryRoutines(t *testing.T) {
	rtmRunChild(t, "routine", "GOMPT_PLUGINS=rtm-gate", "GOMPT_HOST_DEVICES=2", "GOMPT_RTM_TOOL=1")
}

func rtmChildRoutine(fail func(string, ...any), within func(string, func())) {
	if NumDevices() != 2 {
		fail("want 2 rtm-gate devices, have %d: %s", NumDevices(), rt.why())
		return
	}
	d0 := rt.devs[0].d.(*rtmGateDevice)
	entered, release := rtmGate.arm()
	type allocRes struct {
		p   DevicePtr
		err error
	}
	inFlight := make(chan allocRes, 1)
	go func() {
		p, err := AllocMem(64, 0)
		inFlight <- allocRes{p, err}
	}()
	<-entered // AllocMem on device 0 is in its device's Alloc
	late := make(chan error, 1)
	go func() {
		_, err := AllocMem(64, 1) // held in device 1's device_initialize until Shutdown begins
		late <- err
	}()
	<-rtmTool.init1
	shut := make(chan error, 1)
	go func() { shut <- shutdownWithin(10 * time.Second) }()
	within("the routine begun after Shutdown", func() {
		if err := <-late; !errors.Is(err, ErrShutdown) {
			fail("AllocMem on device 1, begun once Shutdown had: %v; want the shut-down error", err)
		}
	})
	if rtmUntil(func() bool { return rt.shut.Load() }, rtmQuiet) {
		fail("Shutdown went on to close the devices while AllocMem was in flight")
	}
	close(release)
	r := <-inFlight
	if r.err != nil {
		fail("AllocMem in flight when Shutdown began: %v; want it to complete", r.err)
	}
	if err := <-shut; err != nil { // a Shutdown that never returns ends the child
		fail("Shutdown: %v", err)
	}
	if d0.closedInFlight.Load() {
		fail("device 0 was closed while its Alloc was in flight")
	}
	if _, n := d0.MemInUse(); n != 0 {
		fail("device 0 after Shutdown: %d allocations left; want the one AllocMem returned during Shutdown freed", n)
	}
}

// What a tool and GOMPT_INFO are told about devices: set_trace_native
// answers never on a device whose plugin gives no native records (its
// queues do not time their operations) and always on one that does; a
// device with no trace lost says nothing of tracing at Shutdown; and a
// trace whose delivery cannot end (the tool's buffer_complete never
// returns) makes Shutdown return that error.
func TestToolIsToldWhatEachDeviceTraces(t *testing.T) {
	stderr := rtmRunChild(t, "native", "GOMPT_PLUGINS=host,rtm-plain", "GOMPT_HOST_DEVICES=1", "GOMPT_RTM_TOOL=1", "GOMPT_INFO=7", "OMP_DISPLAY_ENV=verbose")
	assert.Contains(t, stderr, "gompt: host:0: launch saxpy size [64 1 1] teams 0 threads 0\n", "GOMPT_INFO=7: the child's diagnostics")
	assert.Contains(t, stderr, "  [gompt] device 1 = 'rtm-plain:0' (gompt host device)\nOPENMP DISPLAY ENVIRONMENT END\n", "OMP_DISPLAY_ENV=verbose: the child's start-up")
	assert.NotContains(t, stderr, "device tracing", "GOMPT_INFO=7 with no trace record lost: the child's diagnostics")
}

// GOMPT_INFO reports at Shutdown the trace records a device lost, also
// a single one.
func TestShutdownReportsOneLostTraceRecord(t *testing.T) {
	stderr := rtmRunChild(t, "lost1", "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=1", "GOMPT_RTM_TOOL=1", "GOMPT_INFO=1")
	assert.Contains(t, stderr, "gompt: host:0: device tracing: 0 records written, 1 lost (the tool gave no buffer, or too small a one)\n", "GOMPT_INFO=1: the child's diagnostics")
}

func TestShutdownReportsATraceThatCannotEnd(t *testing.T) {
	rtmRunChild(t, "stuck", "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=1", "GOMPT_RTM_TOOL=1")
}

func rtmChildTool(scenario string, fail func(string, ...any), within func(string, func())) {
	omptrt.StopTimeout = 300 * time.Millisecond
	want := map[string][]string{
		"native": {"device 0 host gompt host device: set_trace_native ompt_set_always", "device_load 0 saxpy offset=0 vma=0x0 bytes>0=true host=0x0 device=0x0",
			"device 1 rtm-plain gompt host device: set_trace_native ompt_set_never", "device_load 1 saxpy offset=0 vma=0x0 bytes>0=true host=0x0 device=0x0",
			"device_load 0 fill offset=0 vma=0x0 bytes>0=true host=0x0 device=0x0",
			"device_unload 0 saxpy", "device_unload 0 fill", "device_unload 1 saxpy", "finalize"},
		"stuck": {"device 0 start_trace 1", "finalize"},
		"lost1": {"device 0 start_trace 1", "finalize"},
	}[scenario]
	if scenario == "lost1" {
		// One device memory routine: one data op record, which the tool
		// gives no buffer for.
		if _, err := AllocMem(64, 0); err != nil { // Shutdown frees it
			fail("AllocMem: %v", err)
		}
		within("Shutdown", func() {
			if err := Shutdown(); err != nil {
				fail("Shutdown: %v", err)
			}
		})
		fmt.Println("rtm-ok")
		return
	}
	x, y := ones(64)
	for dev := range NumDevices() {
		if err := Target(saxpyRegion(dev, 64, 2, x, y, To(x), ToFrom(y))); err != nil {
			fail("Target on device %d: %v", dev, err)
		}
	}
	if scenario == "native" {
		// Another kernel on device 0, then the first again: each is
		// loaded (device_load) once.
		z := make([]float32, 64)
		if err := Target(Region{Device: Dev(0), Kernel: kernels.Fill, Shape: N(64), Maps: []Map{From(z)}, Args: []Arg{Int(64), Float32(1), Slice(z)}}); err != nil {
			fail("Target fill on device 0: %v", err)
		}
		if err := Target(saxpyRegion(0, 64, 2, x, y, To(x), ToFrom(y))); err != nil {
			fail("Target saxpy again on device 0: %v", err)
		}
	}
	var err error
	within("Shutdown", func() { err = Shutdown() })
	rtmTool.mu.Lock()
	got := rtmTool.lines
	rtmTool.mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		fail("the tool saw %q; want %q", got, want)
	}
	switch scenario {
	case "native":
		if err != nil {
			fail("Shutdown: %v", err)
		}
		if !rtmTool.traced1.Load() {
			fail("no trace record of device 1 (rtm-plain) was delivered by Shutdown")
		}
		// The host device's kernel workers go with the runtime.
		if !rtmUntil(func() bool { return !strings.Contains(rtmStacks(), "device/hostexec.(*Pool).work") }, 10*time.Second) {
			fail("host kernel worker goroutines still running 10 s after Shutdown")
		}
	case "stuck":
		if err == nil || !strings.Contains(err.Error(), "ompt: device 0 (host gompt host device): the tool's buffer_complete callback has not returned after 300ms") {
			fail("Shutdown with device 0's buffer_complete stuck returned %v; want the error that its trace could not end", err)
		}
	}
}

// A construct that resolved its device before Shutdown began, and comes
// for a queue once Shutdown has stopped handing them out, fails with the
// shut-down error, and the device's idle construct it found is still
// closed with the device: Shutdown returns. Here the end of a data region
// comes for the queue while Shutdown waits for another construct loading
// its kernel.
func TestShutdownKeepsTheConstructARefusedCallerFound(t *testing.T) {
	rtmRunChild(t, "spare", "GOMPT_PLUGINS=rtm-gate", "GOMPT_HOST_DEVICES=1")
}

func rtmChildSpare(fail func(string, ...any), within func(string, func())) {
	x, y := ones(64)
	if err := Target(saxpyRegion(0, 64, 2, x, y, To(x), ToFrom(y))); err != nil {
		fail("the first Target: %v", err)
		return
	}
	inBody, leave := make(chan struct{}), make(chan struct{})
	data := make(chan error, 1)
	go func() {
		data <- Data(0, []Map{ToFrom(y)}, func() error { close(inBody); <-leave; return nil })
	}()
	<-inBody // the region's construct is back, idle
	entered, release := rtmLoadGate.arm()
	loading := make(chan error, 1)
	go func() {
		z := make([]float32, 64)
		loading <- Target(Region{Device: Dev(0), Kernel: kernels.Fill, Shape: N(64), Maps: []Map{From(z)}, Args: []Arg{Int(64), Float32(1), Slice(z)}})
	}()
	<-entered // loading Fill on device 0, which Shutdown's close of it waits for
	shut := make(chan error, 1)
	go func() { shut <- shutdownWithin(10 * time.Second) }()
	if !rtmUntil(func() bool { return rt.shut.Load() }, 10*time.Second) {
		fail("Shutdown did not stop handing out queues")
	}
	close(leave)
	within("the data region's end", func() {
		if err := <-data; !errors.Is(err, ErrShutdown) {
			fail("the end of a data region once Shutdown had stopped handing out queues: %v; want the shut-down error", err)
		}
	})
	close(release)
	within("the Target loading its kernel", func() {
		if err := <-loading; !errors.Is(err, ErrShutdown) {
			fail("the Target whose kernel load Shutdown waited for: %v; want the shut-down error", err)
		}
	})
	if err := <-shut; err != nil { // a Shutdown that never returns ends the child
		fail("Shutdown: %v", err)
	}
}

// rtmStacks returns every goroutine's stack.
func rtmStacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// Shutdown waits for a synchronous construct that holds a queue (here an
// enter data whose device allocation is in flight): the construct
// completes, and the device is closed only after it.
func TestShutdownWaitsForAConstructHoldingAQueue(t *testing.T) {
	rtmRunChild(t, "held", "GOMPT_PLUGINS=rtm-gate", "GOMPT_HOST_DEVICES=1")
}

func rtmChildHeld(fail func(string, ...any), within func(string, func())) {
	d0 := state().devs[0].d.(*rtmGateDevice)
	x := make([]float32, 64)
	entered, release := rtmGate.arm()
	enter := make(chan error, 1)
	go func() { enter <- EnterData(0, To(x)) }()
	<-entered // the construct holds its queue, allocating x's device copy
	shut := make(chan error, 1)
	go func() { shut <- shutdownWithin(10 * time.Second) }()
	if !rtmUntil(func() bool { return rt.shut.Load() }, 10*time.Second) {
		fail("Shutdown did not stop handing out queues")
	}
	select {
	case <-shut:
		fmt.Println("FAIL: Shutdown returned while a construct held a queue")
		os.Exit(1) // the device is closed under the construct: nothing more to check
	case <-time.After(rtmQuiet):
	}
	close(release)
	within("the enter data", func() {
		if err := <-enter; err != nil {
			fail("the enter data in flight when Shutdown began: %v; want it to complete", err)
		}
	})
	if err := <-shut; err != nil {
		fail("Shutdown: %v", err)
	}
	if d0.closedInFlight.Load() {
		fail("device 0 was closed while its Alloc was in flight")
	}
}
