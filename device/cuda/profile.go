//go:build cgo

package cuda

import (
	"sync"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
)

var _ device.Profiler = (*queue)(nil)

// timing is the device.Timing of one profiled operation: two pooled CUDA
// events recorded on the queue's stream just before and just after the
// operation, owned by the timing until it is read. Times, the queue's Sync
// and its Release read it once and give the events back to the device's
// pool; the result is kept. Times may be called from any goroutine, any
// number of times.
type timing struct {
	q          *queue
	typ        string
	teams      int
	rec0, rec1 int64 // host times (hostNow) just before recording e0 and e1

	mu         sync.Mutex
	e0, e1     cu.Event // nil once read
	done       bool
	begin, end int64
	err        error
}

// Profiling (device.Profiler, the queue's generic.Queue): while on, each
// CopyIn, CopyOut, Copy and Launch is bracketed by CUDA events on the
// stream and Last returns its timing; off costs a branch per operation.

// startTiming records the begin event of the operation about to be
// enqueued, if the queue is profiling; nil otherwise.
func (q *queue) startTiming() *timing {
	if !q.Profiling() {
		return nil
	}
	return q.beginTiming()
}

func (q *queue) beginTiming() *timing {
	g := q.g
	t := &timing{q: q}
	e, err := g.events.get(g.ctx)
	if err == nil {
		t.rec0 = g.clock.now()
		if err = cu.EventRecord(g.ctx, e, q.s); err != nil {
			g.events.put(g.ctx, e)
		} else {
			t.e0 = e
		}
	}
	if err != nil {
		t.err, t.done = g.fail("profile", err), true
	}
	return t
}

// endTiming records the end event of the operation just enqueued and makes
// t the queue's last timing; when the operation failed to enqueue (opErr),
// t is dropped and its event given back.
func (q *queue) endTiming(t *timing, typ string, teams int, opErr error) {
	if t != nil {
		q.finishEnqueue(t, typ, teams, opErr)
	}
}

func (q *queue) finishEnqueue(t *timing, typ string, teams int, opErr error) {
	g := q.g
	if opErr != nil {
		t.release()
		return
	}
	t.typ, t.teams = typ, teams
	q.SetLast(t)
	if t.done {
		return // the begin event failed: Times returns why
	}
	e, err := g.events.get(g.ctx)
	if err == nil {
		t.rec1 = g.clock.now()
		if err = cu.EventRecord(g.ctx, e, q.s); err != nil {
			g.events.put(g.ctx, e)
		} else {
			t.e1 = e
		}
	}
	if err != nil {
		t.release()
		t.err, t.done = g.fail("profile", err), true
		return
	}
	for _, o := range q.timings.Add(t) { // beyond generic.MaxTimings: the oldest half
		o.finish()
	}
}

// release gives t's events back to the pool.
func (t *timing) release() {
	g := t.q.g
	if t.e0 != nil {
		g.events.put(g.ctx, t.e0)
		t.e0 = nil
	}
	if t.e1 != nil {
		g.events.put(g.ctx, t.e1)
		t.e1 = nil
	}
}

// finishTimings reads every timing not yet read, giving their events back.
// Called by Sync, after the stream has synchronised.
func (q *queue) finishTimings() {
	for _, t := range q.timings.Take() {
		t.finish()
	}
}

// Times implements device.Timing: it waits for the end event
// (cuEventSynchronize) and returns the device times (as Device.Now, the
// plugin's clock: see clock) of the events before and after the
// operation. native is the plugin's record (Record): the same
// interval, the CUstream and CUcontext, the queue's number as HWID and, for
// a launch, the grid's blocks as Teams.
func (t *timing) Times() (begin, end int64, native device.Native, err error) {
	if err := t.finish(); err != nil {
		return 0, 0, device.Native{}, err
	}
	q := t.q
	native = nativeRecord(t.begin, t.end, uint64(uintptr(unsafe.Pointer(q.s))), uint64(uintptr(unsafe.Pointer(q.g.ctx))),
		t.typ, q.num, t.teams)
	return t.begin, t.end, native, nil
}

// finish waits for the operation, converts its events' times and gives
// the events back, once.
func (t *timing) finish() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return t.err
	}
	t.done = true
	g := t.q.g
	err := g.broken("wait")
	if err == nil {
		err = g.fail("wait", cu.EventSynchronize(g.ctx, t.e1))
	}
	if err != nil {
		t.err = err
	} else if t.begin, err = g.clock.time(g.ctx, t.e0, t.rec0); err != nil {
		t.err = g.fail("event time", err)
	} else if t.end, err = g.clock.time(g.ctx, t.e1, t.rec1); err != nil {
		t.err = g.fail("event time", err)
	}
	t.end = max(t.end, t.begin)
	t.release()
	return t.err
}
