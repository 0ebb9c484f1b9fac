package omptrt

import (
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlushCycleBetweenDevices: device 0's buffer_complete flushes device
// 1 while device 1's flushes device 0. Each would wait for the other's
// delivery goroutine: one of the two flushes returns 0 at once and the
// other completes (1), and every flush returns. Also after device 1's
// first session was stopped and a new one started (a new delivery
// goroutine, the first one gone).
func TestFlushCycleBetweenDevices(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := "first sessions"
		if restart {
			name = "device 1 restarted"
		}
		t.Run(name, func(t *testing.T) {
			old := StopTimeout
			StopTimeout = time.Second // a deadlocked test still ends
			t.Cleanup(func() { StopTimeout = old })
			var armed atomic.Bool
			in := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
			var onces [2]sync.Once
			var res [2]atomic.Int32
			tt := &traceTool{}
			tt.complete = func(dev int, _ []byte, bytes, _ uint64) {
				if !armed.Load() || bytes == 0 {
					return
				}
				onces[dev].Do(func() {
					close(in[dev])
					select {
					case <-in[1-dev]:
						res[dev].Store(int32(tt.flush(1 - dev)))
					case <-time.After(5 * time.Second):
						res[dev].Store(-1) // the other device's callback never came
					}
				})
			}
			clks := withTrace(t, tt, 2)
			if restart {
				tracedRegion(1, 1, clks[1], false)
				require.Equal(t, 1, tt.stop(1), "stop device 1")
				require.Equal(t, 1, tt.start(1), "start device 1 again")
			}
			tracedRegion(0, 1, clks[0], false)
			tracedRegion(1, 1, clks[1], false)
			armed.Store(true)
			var flushed [2]atomic.Int32
			var wg sync.WaitGroup
			for dev := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					flushed[dev].Store(int32(tt.flush(dev)))
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				require.Fail(t, "flushes from the two devices' buffer callbacks deadlocked")
			}
			assert.Equal(t, int32(1), flushed[0].Load(), "the application's flush of device 0")
			assert.Equal(t, int32(1), flushed[1].Load(), "the application's flush of device 1")
			got := []int{int(res[0].Load()), int(res[1].Load())}
			sort.Ints(got)
			assert.Equal(t, []int{0, 1}, got, "flush_trace results from the two buffer callbacks: want one refused (0), one done (1)")
		})
	}
}

// TestTwoStopsOfOneSession: two goroutines stop the same session while its
// last buffer_complete runs: both return once the session has ended, and
// only one of them reports having stopped it.
func TestTwoStopsOfOneSession(t *testing.T) {
	tt, entered, release := gatedTraceTool(0, nil)
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	results := make(chan int, 2)
	go func() { results <- tt.stop(0) }()
	<-entered
	go func() { results <- tt.stop(0) }()
	time.Sleep(50 * time.Millisecond) // the second stop finds the session stopping
	close(release)
	got := []int{<-results, <-results}
	sort.Ints(got)
	assert.Equal(t, []int{0, 1}, got, "the two stops' results")
	assert.False(t, Tracing(0), "tracing after stop")
	lines, _ := tt.got()
	assert.Len(t, lines, 7, "records delivered")
}

// TestDeviceFinalizeTwiceWhileDelivering: a second DeviceFinalize while
// the first still delivers the device's last records fails at once, and
// the tool gets device_finalize once.
func TestDeviceFinalizeTwiceWhileDelivering(t *testing.T) {
	tt, entered, release := gatedTraceTool(0, nil)
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	first := make(chan error, 1)
	go func() { first <- DeviceFinalize(0) }()
	<-entered
	second := make(chan error, 1)
	go func() { second <- DeviceFinalize(0) }()
	select {
	case err := <-second:
		assert.ErrorContains(t, err, "already finalized", "the second DeviceFinalize")
	case <-time.After(5 * time.Second):
		assert.Fail(t, "the second DeviceFinalize waited for the first one's delivery")
	}
	close(release)
	assert.NoError(t, <-first, "the first DeviceFinalize")
	n := 0
	for _, ev := range tt.r.got() {
		if ev == "device_finalize dev=0" {
			n++
		}
	}
	assert.Equal(t, 1, n, "device_finalize callbacks: %q", tt.r.got())
	lines, _ := tt.got()
	assert.Len(t, lines, 7, "records delivered before device_finalize")
}

// TestDeviceInitializeCallbackPanics: a tool whose device_initialize
// callback panics is detached (named on stderr); DeviceInitialize
// returns normally and the next device's initialization does not call it.
func TestDeviceInitializeCallbackPanics(t *testing.T) {
	warn := reset(t, nil)
	calls := 0
	ompt.RegisterTool("crashy", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(
				func(int, string, *ompt.DeviceHandle, ompt.LookupFunc, string) {
					calls++
					panic("device boom")
				}))
			return 1
		}}
	})
	Start(fakeRuntime{2})
	var err error
	assert.NotPanics(t, func() { err = DeviceInitialize(0, "tick", newTick(0)) }, "DeviceInitialize with a panicking device_initialize")
	assert.NoError(t, err, "DeviceInitialize(0)")
	assert.NoError(t, DeviceInitialize(1, "tick", newTick(0)), "DeviceInitialize(1)")
	assert.Equal(t, 1, calls, "device_initialize calls: the tool is detached after its panic")
	assert.Contains(t, warn.String(), `OMPT tool "crashy": a callback panicked: device boom; the tool is detached`, "stderr")
}

// TestFinalizeToolOfATracingTool: a tool tracing a device that calls
// ompt_finalize_tool gets its records (the last buffer handed back)
// before its finalizer, and nothing is written to stderr.
func TestFinalizeToolOfATracingTool(t *testing.T) {
	warn := reset(t, nil)
	tt := &traceTool{}
	tt.install(t, 1)
	clk := newTick(0)
	require.NoError(t, DeviceInitialize(0, "tick", clk))
	tracedRegion(0, 1, clk, false)
	tt.r.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	assert.False(t, Tracing(0), "tracing after ompt_finalize_tool")
	lines, parts := tt.got()
	assert.Len(t, lines, 7, "records delivered")
	if assert.NotEmpty(t, parts, "parts") {
		assert.True(t, parts[len(parts)-1].owned, "the last part's owned")
	}
	assert.Equal(t, 1, tt.r.finalized, "finalizer calls")
	assert.Empty(t, warn.String(), "stderr")
}

// TestPanickingFinalizerAtFinalizeTool: a finalizer that panics when the
// tool calls ompt_finalize_tool is named in the OMP_TOOL_VERBOSE_INIT log
// and on stderr, and is not called again at shutdown.
func TestPanickingFinalizerAtFinalizeTool(t *testing.T) {
	log := t.TempDir() + "/v.log"
	warn := reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": log})
	var lookup ompt.LookupFunc
	calls := 0
	ompt.RegisterTool("boom", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{
			Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int { lookup = l; return 1 },
			Finalize: func(*ompt.Data) {
				calls++
				panic("finalizer boom")
			},
		}
	})
	Start(fakeRuntime{1})
	require.NotNil(t, lookup, "the tool was not initialized")
	assert.NotPanics(t, func() { lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)() }, "ompt_finalize_tool")
	Finalize()
	assert.Equal(t, 1, calls, "finalizer calls")
	b, _ := os.ReadFile(log)
	assert.Contains(t, string(b), `Tool "boom": finalizer panicked: finalizer boom.`, "verbose log")
	assert.True(t, strings.Contains(warn.String(), `OMPT tool "boom": finalizer panicked: finalizer boom`), "stderr: %q", warn.String())
}

// gatedTraceTool is a tracing tool (buffers of size bytes; 0: the
// default) whose first buffer_complete while armed (always, if armed is
// nil) closes entered and then waits until release is closed.
func gatedTraceTool(size int, armed *atomic.Bool) (tt *traceTool, entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	tt = &traceTool{size: size}
	tt.complete = func(int, []byte, uint64, uint64) {
		if armed == nil || armed.Load() {
			once.Do(func() {
				close(entered)
				<-release
			})
		}
	}
	return tt, entered, release
}

// TestOldDeliveryGoroutineForgetsOnlyItself: a tracing session's
// delivery goroutine returns after its session has ended, so a new
// session of the same device may have registered its own goroutine by
// then. The old one, returning, forgets itself only. (It forgot every
// goroutine of the tracer: the new session's buffer callbacks then
// flushed as the application's, a flush cycle between two devices was
// not refused, and TestFlushCycleBetweenDevices/device_1_restarted
// deadlocked now and then.)
func TestOldDeliveryGoroutineForgetsOnlyItself(t *testing.T) {
	tr := &tracer{}
	const oldG, newG = 0x1001, 0x1002 // not goroutines: keys only
	setWorker(oldG, tr)
	setWorker(newG, tr) // the new session's goroutine, before the old one returned
	dropWorker(oldG)
	waitMu.Lock()
	got, old := workers[newG], workers[oldG]
	delete(workers, newG)
	waitMu.Unlock()
	assert.Same(t, tr, got, "the new session's delivery goroutine is no longer known as one")
	assert.Nil(t, old, "the old session's goroutine is still known")
}
