//go:build cgo

package opencl

import (
	"sync"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowKernel runs a chain of n dependent steps in every work-item, which
// no compiler shortens: about a millisecond per million steps on POCL.
var slowKernel = &device.Kernel{Name: "slow",
	Params: []device.Param{{Name: "p", Kind: device.ParamBuffer}, {Name: "n", Kind: device.ParamUint32}},
	Images: []device.Image{{Kind: ImageC, Source: `__kernel void slow(__global uint *p, uint n) {
  uint s = p[0] + get_global_id(0);
  for (uint i = 0; i < n; i++) s = s * 1664525u + 1013904223u;
  p[get_global_id(0) + 1] = s;
}
`}}}

// slowLaunch enqueues slowKernel for about ms milliseconds on q.
func slowLaunch(t *testing.T, d device.Device, q device.Queue, buf device.DevicePtr, ms int) {
	t.Helper()
	f, err := d.Load(slowKernel)
	require.NoError(t, err)
	require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{1}, Threads: 1, Teams: 1}, []device.Arg{{Ptr: buf}, {Bits: uint64(ms) << 20}}))
}

// waitAll waits for wg, failing the test after a deadline: a wait that
// never returns is the bug these tests look for.
func waitAll(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		require.FailNowf(t, "timeout", "%s: still waiting after 60 s", what)
	}
}

// TestWaitsManyGoroutines: 64 goroutines wait on one event of a long
// command, and 16 more each run a queue of their own (launch, record,
// wait, profiled timing, sync) at once; every wait returns once its work
// is done, with the work's results.
func TestWaitsManyGoroutines(t *testing.T) {
	base := clDevices(t)[0]
	for _, mode := range []string{"driver", "callbacks"} {
		t.Run(mode, func(t *testing.T) {
			d := base
			if mode == "callbacks" {
				d = pretend(t, base, hooks{callbacks: true}, 0)
			}
			require.Equal(t, (mode == "driver"), !d.waitCB, "device waits through callbacks: %v", d.waitCB)
			testWaitsManyGoroutines(t, d)
		})
	}
}

func testWaitsManyGoroutines(t *testing.T, d *clDevice) {
	q, err := d.NewQueue()
	require.NoError(t, err)
	defer q.Release()
	buf, err := d.Alloc(64)
	require.NoError(t, err)
	defer d.Free(buf.Ptr)
	slowLaunch(t, d, q, buf.Ptr, 30)
	ev, err := q.Record()
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, ev.Wait(), "Wait")
		}()
	}
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q, err := d.NewQueue()
			if !assert.NoError(t, err) {
				return
			}
			defer q.Release()
			b, err := d.Alloc(64)
			if !assert.NoError(t, err) {
				return
			}
			defer d.Free(b.Ptr)
			q.(device.Profiler).Profile(true)
			slowLaunch(t, d, q, b.Ptr, 2)
			tm := q.(device.Profiler).Last()
			e, err := q.Record()
			if !assert.NoError(t, err) {
				return
			}
			assert.NoError(t, e.Wait(), "Wait")
			if begin, end, _, err := tm.Times(); assert.NoError(t, err, "timing of the launch: [%d, %d]", begin, end) && assert.Positive(t, begin, "timing of the launch: [%d, %d], %v", begin, end, err) {
				assert.GreaterOrEqual(t, end, begin, "timing of the launch: [%d, %d], %v", begin, end, err)
			}
			out := make([]byte, 8)
			assert.NoError(t, q.CopyOut(out, b.Ptr))
			assert.NoError(t, q.Sync(), "Sync")
			assert.False(t, out[4] == 0 && out[5] == 0 && out[6] == 0 && out[7] == 0, "the kernel's result is not there after the waits")
		}()
	}
	waitAll(t, &wg, "64 waits on one event and 16 queues")
	require.NoError(t, q.Sync())
}

// TestWaitEventErrors: waits on an event that fails (a user event set to
// an error status from another goroutine, as a driver would a failed
// command) all return, and readEvent reports the status with its code;
// one completed normally reads as complete.
func TestWaitEventErrors(t *testing.T) {
	base := clDevices(t)[0]
	t.Run("driver", func(t *testing.T) { testWaitEventErrors(t, base) })
	t.Run("callbacks", func(t *testing.T) { testWaitEventErrors(t, pretend(t, base, hooks{callbacks: true}, 0)) })
}

func testWaitEventErrors(t *testing.T, d *clDevice) {
	for _, c := range []struct {
		status int32
		code   device.Code
	}{{cl.OUT_OF_RESOURCES, device.CodeOutOfResources}, {cl.COMPLETE, 0}} {
		ev, err := cl.CreateUserEvent(d.ctx)
		if err != nil {
			t.Skipf("no user events: %v", err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = d.readEvent(0, ev)
			}()
		}
		time.Sleep(10 * time.Millisecond) // the waits block past their spin
		require.NoError(t, cl.SetUserEventStatus(ev, c.status))
		waitAll(t, &wg, "waits on a user event")
		if d.waitCB {
			t.Logf("status %d: %d waits so far ended by polling (the driver did not call back)", c.status, polled.Load())
		}
		for _, err := range errs {
			if c.status == cl.COMPLETE {
				// A user event has no profiling counters: the wait itself
				// succeeded when the error is about times.
				assert.False(t, err != nil && device.CodeOf(err) != device.CodeUnsupported, "wait on a completed user event: %v", err)
				continue
			}
			assert.Equal(t, c.code, device.CodeOf(err), "wait on a user event failed with %d: %v, want code", c.status, err)
		}
		if done, err := finished(ev); assert.True(t, done, "finished after the waits: %v, %v", done, err) {
			assert.NoError(t, err, "finished after the waits: %v", done)
		}
		cl.ReleaseEvent(ev)
	}
}

// TestCloseWhileWaiting closes a device while goroutines wait on events
// and timings of its queues: every wait returns, none crashes, and no
// OpenCL object is left.
func TestCloseWhileWaiting(t *testing.T) {
	base := clDevices(t)[0]
	for _, h := range []hooks{{}, {callbacks: true}} {
		t.Run(map[bool]string{false: "driver", true: "callbacks"}[h.callbacks], func(t *testing.T) {
			testCloseWhileWaiting(t, base, h)
		})
	}
}

func testCloseWhileWaiting(t *testing.T, base *clDevice, h hooks) {
	before := cl.Live()
	func() {
		d := pretend(t, base, h, 0)
		var wg sync.WaitGroup
		for range 4 {
			q, err := d.NewQueue()
			require.NoError(t, err)
			buf, err := d.Alloc(64)
			require.NoError(t, err)
			q.(device.Profiler).Profile(true)
			slowLaunch(t, d, q, buf.Ptr, 20)
			tm := q.(device.Profiler).Last()
			ev, err := q.Record()
			require.NoError(t, err)
			for range 4 {
				wg.Add(2)
				go func() { defer wg.Done(); ev.Wait() }()
				go func() { defer wg.Done(); tm.Times() }()
			}
		}
		time.Sleep(5 * time.Millisecond)
		assert.NoError(t, d.Close(), "Close while waiting")
		waitAll(t, &wg, "waits across Close")
	}()
	after := cl.Live()
	assert.Equal(t, before, after, "live OpenCL objects %+v after Close, %+v before", after, before)
}
