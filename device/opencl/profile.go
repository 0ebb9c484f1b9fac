//go:build cgo

package opencl

import (
	"sync"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// Native record types of the operations a queue times (device.Native.Type).
const (
	typeWrite  = "opencl write"
	typeRead   = "opencl read"
	typeCopy   = "opencl copy"
	typeKernel = "opencl kernel"
)

var _ device.Profiler = (*queue)(nil)

// timing is the device.Timing of one profiled operation: the command's own
// cl_event (not a marker), owned by the timing until it is read. Times, the
// queue's Sync and its Release read it once and release the event; the
// result is kept. Times may be called from any goroutine, any number of
// times.
type timing struct {
	q     *queue
	seq   uint64 // the operation's number on the queue
	typ   string
	teams int // work-groups launched (for a launch)

	host hostTiming // host-times mode only (hosttimes.go)

	mu     sync.Mutex
	ev     cl.Event // 0 once read
	done   bool
	prof   Profile
	native device.Native
	err    error
}

// Profiling (device.Profiler, the queue's generic.Queue): while on, each
// CopyIn, CopyOut, Copy and Launch keeps its command's event, and Last
// returns its timing; off costs a branch per operation.

// event returns where an enqueue stores its command's event: nil (no event
// is made) unless the queue is profiling.
func (q *queue) event(ev *cl.Event) *cl.Event {
	if !q.Profiling() {
		return nil
	}
	if q.d.hostTimes {
		q.begin = hostNow() // the operation cannot start before its enqueue
	}
	return ev
}

// track records ev, the event of the operation just enqueued (after
// commit/enqueued counted it), as the queue's last timing.
func (q *queue) track(ev cl.Event, typ string, teams int) {
	t := &timing{q: q, ev: ev, typ: typ, teams: teams}
	if q.d.hostTimes {
		t.host.begin = q.begin
		t.watch(ev)
	}
	q.mu.Lock()
	t.seq = q.seq
	old := q.timings.Add(t) // beyond generic.MaxTimings: the oldest half
	q.mu.Unlock()
	q.SetLast(t)
	for _, o := range old {
		o.finish()
	}
}

// finishTimings reads and releases the events of every timing not yet
// read. The queue has finished (queue.finish), so none blocks.
func (q *queue) finishTimings() {
	q.mu.Lock()
	ts := q.timings.Take()
	q.mu.Unlock()
	for _, t := range ts {
		t.finish()
	}
}

// Times implements device.Timing: it waits for the operation
// (waitEvent: see wait.go) and returns its CL_PROFILING_COMMAND_START and END.
// These are on the device clock that Device.Now reads (the device's
// profiling timer, see Now), so no conversion is needed. native holds the
// four counters (Record), the queue's number as HWID and, for a
// launch, the number of work-groups as Teams. A failed operation returns
// its error, which the queue's next Sync also reports unless an earlier
// Sync did.
func (t *timing) Times() (begin, end int64, native device.Native, err error) {
	if err := t.finish(); err != nil {
		return 0, 0, device.Native{}, err
	}
	return t.prof.Start, t.prof.End, t.native, nil
}

// finish waits for the operation, reads its counters and releases its
// event, once.
func (t *timing) finish() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return t.err
	}
	t.done = true
	q := t.q
	t.prof, t.err = q.d.readEvent(q.q, t.ev)
	cl.ReleaseEvent(t.ev)
	t.ev = 0
	if t.err == nil && q.d.hostTimes {
		t.prof = t.hostTimes()
	}
	if t.err == nil && (t.prof.Start == 0 || t.prof.End < t.prof.Start) {
		t.err = q.d.errorf("event time", device.CodeUnsupported,
			"the driver gave no profiling times for an %s command (start %d, end %d)", t.typ, t.prof.Start, t.prof.End)
	}
	p := t.prof
	rec := Record{Queued: uint64(p.Queued), Submit: uint64(p.Submit), Start: uint64(p.Start), End: uint64(p.End)}
	t.native = rec.Native(t.typ, q.num, t.teams)
	q.mu.Lock()
	if t.err == nil {
		q.completed(t.seq)
	} else if q.err == nil {
		q.err = t.err
	}
	q.mu.Unlock()
	return t.err
}

// readEvent waits for ev, a command of queue q (0: flushed already), and
// returns its profiling counters (none on a device in host-times mode),
// or the error of its command (or of one before it).
func (d *clDevice) readEvent(q cl.CommandQueue, ev cl.Event) (Profile, error) {
	var p Profile
	werr := d.waitEvent(q, ev)
	st, serr := cl.GetEventStatus(ev)
	switch {
	case werr != nil:
		return p, d.wrap("wait", werr)
	case serr != nil:
		return p, d.wrap("wait", serr)
	case st < 0:
		return p, d.errorf("wait", cl.StatusCode(st), "the operation or one before it failed: %s (%d)", cl.StatusName(st), st)
	}
	if d.hostTimes {
		return p, nil
	}
	for _, c := range []struct {
		param uint32
		dst   *int64
	}{
		{cl.PROFILING_COMMAND_QUEUED, &p.Queued},
		{cl.PROFILING_COMMAND_SUBMIT, &p.Submit},
		{cl.PROFILING_COMMAND_START, &p.Start},
		{cl.PROFILING_COMMAND_END, &p.End},
	} {
		v, err := cl.GetEventProfilingInfo(ev, c.param)
		if err != nil {
			return p, d.wrap("event time", err)
		}
		*c.dst = int64(v)
	}
	return p, nil
}

// groups returns the number of work-groups of an NDRange.
func groups(dims int, global, local [3]uintptr) int {
	n := 1
	for i := 0; i < dims; i++ {
		if local[i] > 0 {
			n *= int(global[i] / local[i])
		}
	}
	return n
}
