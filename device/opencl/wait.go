//go:build cgo

package opencl

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// Waits. NVIDIA's clFinish and clWaitForEvents busy-wait a core each for
// as long as the work takes (public OpenMM and John-the-Ripper reports), so
// 16-64 constructs waiting at once would burn as many cores. On GPUs and
// other non-CPU devices the plugin waits for its commands another way
// (GOMPT_OPENCL_WAIT=callback, the default there): it polls the event's status for
// spinWait, which keeps the wait for a short command as quick as a spin,
// then blocks the goroutine until the driver calls back
// (clSetEventCallback) with the command's final status, polling the
// status from 1 ms to every 50 ms meanwhile in case it never does. A queue's Sync
// waits likewise for a marker enqueued after everything else. Only the
// device's internal timestamp commands (probes, clock calibration) still
// use clWaitForEvents, whose spin keeps their brackets narrow.
//
// On CPU devices (GOMPT_OPENCL_WAIT=driver, the default there) the plugin
// uses clWaitForEvents and clFinish: POCL's block on a condition variable
// and cost the waiting thread less CPU than the callback's wake-up
// (ompt-bench wait_1ms: 13-14 us per wait against 29-44 us with callbacks;
// raw_cl_wait_1ms 15-18 us), and a Sync through a marker and a callback
// made empty_target 32 us against 82 us.

// spinWait is how long a wait polls an event's status before it blocks.
const spinWait = 20 * time.Microsecond

// waiter is a reusable wake-up for one blocked wait.
type waiter struct {
	ch    chan int32
	fn    func(int32) // sends on ch; made once, so a wait allocates no closure
	timer *time.Timer // the polling's, stopped between waits
}

var waiters = sync.Pool{New: func() any {
	w := &waiter{ch: make(chan int32, 1), timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	w.fn = func(st int32) { w.ch <- st }
	return w
}}

// waitEvent blocks until ev's command has finished, successfully or not
// (the caller reads its status), without keeping a core busy past
// spinWait. q, when not 0, is the queue of ev's command: it is flushed
// first, so the command reaches the device. Safe for concurrent use, also
// by several goroutines on one event.
func (d *clDevice) waitEvent(q cl.CommandQueue, ev cl.Event) error {
	if !d.waitCB {
		if werr := cl.WaitForEvents(ev); werr != nil && cl.StatusOf(werr) != cl.EXEC_STATUS_ERROR_IN_LIST {
			return werr
		}
		return nil
	}
	if done, err := finished(ev); done || err != nil {
		return err
	}
	if q != 0 {
		if err := cl.Flush(q); err != nil {
			return err
		}
	}
	for start := time.Now(); time.Since(start) < spinWait; {
		runtime.Gosched()
		if done, err := finished(ev); done || err != nil {
			return err
		}
	}
	w := waiters.Get().(*waiter)
	if err := cl.OnComplete(ev, w.fn); err != nil {
		waiters.Put(w)
		// No callbacks (an OpenCL 1.0 driver): the driver's own wait.
		if werr := cl.WaitForEvents(ev); werr != nil && cl.StatusOf(werr) != cl.EXEC_STATUS_ERROR_IN_LIST {
			return werr
		}
		return nil
	}
	// Some drivers never call back for a failed event (POCL for a user
	// event set to an error), so the wait also polls, with backoff.
	poll := pollFirst
	w.timer.Reset(poll)
	for {
		select {
		case <-w.ch:
			w.timer.Stop()
			waiters.Put(w)
			return nil
		case <-w.timer.C:
		}
		if done, err := finished(ev); done || err != nil {
			// The callback may still come: w is not reused (its channel
			// has room for that one send), and its handle stays.
			polled.Add(1)
			return err
		}
		poll = min(2*poll, pollMax)
		w.timer.Reset(poll)
	}
}

// The wait's polling for drivers that do not call back: from pollFirst,
// doubling to pollMax. polled counts the waits that ended by polling.
const (
	pollFirst = time.Millisecond
	pollMax   = 50 * time.Millisecond
)

var polled atomic.Uint64

// finished reports whether ev's command has finished (completed or
// failed).
func finished(ev cl.Event) (bool, error) {
	st, err := cl.GetEventStatus(ev)
	return err == nil && st <= cl.COMPLETE, err
}

// finish waits for every command enqueued on q so far (as clFinish does,
// without its spin on some drivers): it waits for a marker enqueued after
// them. A marker that failed, as it may when a command before it did,
// gives its status as the error.
func (q *queue) finish() error {
	if !q.d.waitCB {
		return cl.Finish(q.q)
	}
	ev, err := cl.EnqueueMarkerWithWaitList(q.q)
	if err != nil {
		return err
	}
	defer cl.ReleaseEvent(ev)
	if err := q.d.waitEvent(q.q, ev); err != nil {
		return err
	}
	st, err := cl.GetEventStatus(ev)
	if err != nil {
		return err
	}
	if st < 0 {
		return &cl.Error{Func: "clFinish", Status: st}
	}
	return nil
}

// waitMode is how the plugin waits, as waitEnv chooses: "callback",
// "driver", or "auto" (callback on non-CPU devices).
var waitMode = sync.OnceValue(func() string { return autoChoice(waitEnv, "callback", "driver") })

// useCallbacks reports whether a device of type typ ("gpu", "cpu", ...)
// waits through callbacks.
func useCallbacks(typ string) bool {
	return choose(waitMode(), "callback", "driver", typ != "cpu")
}
