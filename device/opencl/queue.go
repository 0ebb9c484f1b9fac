//go:build cgo

package opencl

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/generic"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// pin is host memory of a non-blocking copy, pinned until the queue has
// passed seq (the number of operations enqueued up to and including it).
type pin struct {
	seq uint64
	p   runtime.Pinner
}

// queue is an in-order OpenCL command queue with profiling. One goroutine
// enqueues at a time (the device.Queue contract); events recorded on it
// may be waited from other goroutines, so its bookkeeping has a lock.
// Lock order: event.mu before queue.mu.
type queue struct {
	d *clDevice
	q cl.CommandQueue

	mu       sync.Mutex
	seq      uint64                   // operations enqueued
	done     uint64                   // operations known complete
	pins     []*pin                   // pinned host memory of operations after done
	events   []*event                 // recorded events not yet finalised
	timings  generic.Timings[*timing] // profiled operations not yet read
	err      error                    // first asynchronous error not yet reported
	released bool

	args   []cl.Arg   // launch scratch, used by the enqueuing goroutine only
	global [3]uintptr // launch NDRange scratch, likewise
	local  [3]uintptr
	subs   []cl.Mem                 // sub-buffers and staging buffers of the launch being enqueued
	bufs   []bufArg                 // buffer arguments of the launch being enqueued
	ends   []uint64                 // where each of bufs' ranges ends (stage)
	pool   []*pin                   // spare pins
	kerns  map[cl.Program]cl.Kernel // the queue's own kernel objects (kernel.go); under mu

	fault cl.Mem // the fault record of the checked kernels it launches (0 until the first)

	num   uint64   // the queue's number on its device (1, 2, ...): native records' HWID
	begin int64    // host-times mode: the reading before the timed enqueue under way
	marks brackets // host-times mode: the ends fixed so far (hosttimes.go)

	// The launch checks (Launch), the profiling state (Profile, Last,
	// used by the enqueuing goroutine only) and the fault log.
	generic.Queue
}

func (q *queue) live(op string) error {
	q.mu.Lock()
	r := q.released
	q.mu.Unlock()
	if r {
		return q.d.errorf(op, device.CodeInvalidArgument, "queue already released")
	}
	return nil
}

// pin pins host memory b before it is handed to a non-blocking command.
// The caller then commits it (the command was enqueued) or drops it.
func (q *queue) pin(b []byte) *pin {
	q.mu.Lock()
	var p *pin
	if n := len(q.pool); n > 0 {
		p, q.pool = q.pool[n-1], q.pool[:n-1]
	} else {
		p = new(pin)
	}
	q.mu.Unlock()
	p.p.Pin(unsafe.SliceData(b))
	return p
}

// commit records p as held by the operation just enqueued.
func (q *queue) commit(p *pin) {
	q.mu.Lock()
	q.seq++
	p.seq = q.seq
	q.pins = append(q.pins, p)
	q.mu.Unlock()
}

// drop unpins p, whose command was not enqueued.
func (q *queue) drop(p *pin) {
	p.p.Unpin()
	q.mu.Lock()
	q.pool = append(q.pool, p)
	q.mu.Unlock()
}

func (q *queue) enqueued() {
	q.mu.Lock()
	q.seq++
	q.mu.Unlock()
}

// completed unpins the memory of every operation up to seq. Called with
// q.mu held.
func (q *queue) completed(seq uint64) {
	if seq <= q.done {
		return
	}
	q.done = seq
	i := 0
	for ; i < len(q.pins) && q.pins[i].seq <= seq; i++ {
		q.pins[i].p.Unpin()
		q.pool = append(q.pool, q.pins[i])
	}
	// Keep the slice's start, so appends reuse its memory.
	n := copy(q.pins, q.pins[i:])
	clear(q.pins[n:])
	q.pins = q.pins[:n]
}

// CopyIn copies src to dst without blocking; src is pinned until a later
// Sync or Wait returns. A large copy on a device that stages (staging.go)
// goes through pinned buffers and returns when src is no longer needed.
func (q *queue) CopyIn(dst device.DevicePtr, src []byte) error {
	if err := q.live("copy to device"); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	m, off, _, err := q.d.resolve("copy to device", dst, len(src))
	if err != nil {
		return err
	}
	if slots := q.staging(len(src)); len(slots) > 0 {
		err := q.stagedIn(m, off, src, slots)
		q.d.pool.Put(slots)
		return q.d.wrap("copy to device", err)
	}
	p := q.pin(src)
	var ev cl.Event
	evp := q.event(&ev)
	if err := cl.EnqueueWriteBuffer(q.q, m, false, uintptr(off), uintptr(len(src)), unsafe.Pointer(unsafe.SliceData(src)), evp); err != nil {
		q.drop(p)
		return q.d.wrap("copy to device", err)
	}
	q.commit(p)
	if evp != nil {
		q.track(ev, typeWrite, 0)
	}
	return nil
}

// CopyOut copies src to dst without blocking; dst is pinned until a later
// Sync or Wait returns. A large copy on a device that stages (staging.go)
// goes through pinned buffers and returns when dst holds the data.
func (q *queue) CopyOut(dst []byte, src device.DevicePtr) error {
	if err := q.live("copy from device"); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	m, off, _, err := q.d.resolve("copy from device", src, len(dst))
	if err != nil {
		return err
	}
	if slots := q.staging(len(dst)); len(slots) > 0 {
		err := q.stagedOut(dst, m, off, slots)
		q.d.pool.Put(slots)
		return q.d.wrap("copy from device", err)
	}
	p := q.pin(dst)
	var ev cl.Event
	evp := q.event(&ev)
	if err := cl.EnqueueReadBuffer(q.q, m, false, uintptr(off), uintptr(len(dst)), unsafe.Pointer(unsafe.SliceData(dst)), evp); err != nil {
		q.drop(p)
		return q.d.wrap("copy from device", err)
	}
	q.commit(p)
	if evp != nil {
		q.track(ev, typeRead, 0)
	}
	return nil
}

// Copy copies n bytes between two buffers of this device
// (clEnqueueCopyBuffer). Overlapping ranges of one buffer, which OpenCL
// refuses, are copied as memmove would (generic.Move): dst == src copies
// nothing, others go in pieces that do not overlap.
func (q *queue) Copy(dst, src device.DevicePtr, n int) error {
	if err := q.live("copy on device"); err != nil {
		return err
	}
	if n < 0 {
		return q.d.errorf("copy on device", device.CodeInvalidArgument, "size %d is negative", n)
	}
	if n == 0 {
		return nil
	}
	dm, doff, _, err := q.d.resolve("copy on device", dst, n)
	if err != nil {
		return err
	}
	sm, soff, _, err := q.d.resolve("copy on device", src, n)
	if err != nil {
		return err
	}
	if dm == sm && doff < soff+uint64(n) && soff < doff+uint64(n) {
		alloc := func(n int) (device.DevicePtr, error) {
			b, err := q.d.Alloc(n)
			return b.Ptr, err
		}
		return generic.Move(dst, src, n, q.Copy, alloc, q.d.Free)
	}
	var ev cl.Event
	evp := q.event(&ev)
	if err := cl.EnqueueCopyBuffer(q.q, sm, dm, uintptr(soff), uintptr(doff), uintptr(n), evp); err != nil {
		return q.d.wrap("copy on device", err)
	}
	q.enqueued()
	if evp != nil {
		q.track(ev, typeCopy, 0)
	}
	return nil
}

// Record enqueues a profiled marker (or, where the driver's markers carry
// no times, the empty kernel) and returns its event.
func (q *queue) Record() (device.Event, error) {
	if err := q.live("record"); err != nil {
		return nil, err
	}
	ev, err := q.d.stamp(q.q)
	if err != nil {
		return nil, q.d.wrap("record", err)
	}
	// Submit the work now, so a Wait from another goroutine makes progress.
	if err := cl.Flush(q.q); err != nil {
		cl.ReleaseEvent(ev)
		return nil, q.d.wrap("record", err)
	}
	q.mu.Lock()
	e := &event{q: q, ev: ev, seq: q.seq}
	q.events = append(q.events, e)
	q.mu.Unlock()
	return e, nil
}

// WaitEvent implements device.Waiter: a barrier on the queue makes its
// later commands wait for ev, an event recorded on another queue of the
// same device (clEnqueueBarrierWithWaitList). It declines other devices'
// events, events already finalised (complete: nothing to wait for, but the
// caller checks their error), and libraries without the barrier.
func (q *queue) WaitEvent(ev device.Event) (bool, error) {
	if err := q.live("wait for event"); err != nil {
		return false, err
	}
	e, ok := ev.(*event)
	if !ok || e.q.d != q.d {
		return false, nil
	}
	if e.q == q {
		return true, nil // in order already
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return false, nil
	}
	ok, err := cl.EnqueueBarrierWithWaitList(q.q, e.ev)
	if err != nil {
		return false, q.d.wrap("wait for event", err)
	}
	if ok {
		q.enqueued()
	}
	return ok, nil
}

// Idle implements device.Idler: true when every operation enqueued is
// known complete (the queue has synced since).
func (q *queue) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.done == q.seq
}

// Sync waits for all enqueued work, unpins host memory, finalises the
// events recorded so far, reads the timings of the operations profiled so
// far (releasing their events) and returns the first error among them.
func (q *queue) Sync() error {
	if err := q.live("sync"); err != nil {
		return err
	}
	return q.sync()
}

func (q *queue) sync() error {
	// Nothing enqueued since the queue was last known idle, and no event
	// to finalise: finish has nothing to wait for (a mapped region
	// syncs before its free and again when it ends).
	q.mu.Lock()
	idle := q.done == q.seq && len(q.events) == 0
	q.mu.Unlock()
	var ferr error
	if !idle {
		ferr = q.finish()
	}
	q.mu.Lock()
	evs := q.events
	q.events = nil
	q.mu.Unlock()
	for _, e := range evs {
		e.finish(false)
	}
	q.finishTimings()
	var kerr error
	if ferr == nil && q.FaultsPending() {
		kerr = q.readFaults()
	}
	q.mu.Lock()
	q.completed(q.seq)
	err := q.err
	q.err = nil
	q.mu.Unlock()
	if ferr != nil {
		return q.d.wrap("sync", ferr)
	}
	if err == nil {
		err = kerr
	}
	return err
}

// faultRecord returns the queue's fault record, made (zeroed) at its
// first checked launch.
func (q *queue) faultRecord() (cl.Mem, error) {
	if q.fault != 0 {
		return q.fault, nil
	}
	m, err := cl.CreateBuffer(q.d.ctx, cl.MEM_READ_WRITE, device.FaultRecordSize)
	if err != nil {
		return 0, err
	}
	var zero [4]int64
	if err := cl.EnqueueWriteBuffer(q.q, m, true, 0, device.FaultRecordSize, unsafe.Pointer(&zero), nil); err != nil {
		cl.ReleaseMemObject(m)
		return 0, err
	}
	q.fault = m
	return m, nil
}

// readFaults reads the fault record after the checked kernels launched
// since it was last read have completed, zeroes it again where a check
// failed, and returns the failure.
func (q *queue) readFaults() error {
	return q.ReadFaults(func(rec *[4]int64) error {
		return q.d.wrap("sync: reading the kernels' fault record",
			cl.EnqueueReadBuffer(q.q, q.fault, true, 0, device.FaultRecordSize, unsafe.Pointer(rec), nil))
	}, func() error {
		var zero [4]int64
		return q.d.wrap("sync: clearing the kernels' fault record",
			cl.EnqueueWriteBuffer(q.q, q.fault, true, 0, device.FaultRecordSize, unsafe.Pointer(&zero), nil))
	})
}

// Release waits for the queue's work and releases it.
func (q *queue) Release() error {
	if err := q.live("release queue"); err != nil {
		return err
	}
	err := q.release()
	// Out of the device's list once its work is done: till then, a
	// buffer freed meanwhile may be in use (clDevice.MayReuse).
	q.d.mu.Lock()
	delete(q.d.queues, q)
	q.d.mu.Unlock()
	return err
}

func (q *queue) release() error {
	q.mu.Lock()
	if q.released {
		q.mu.Unlock()
		return nil
	}
	q.released = true
	q.mu.Unlock()
	err := q.sync()
	if kerr := q.releaseKernels(); kerr != nil && err == nil {
		err = kerr
	}
	if q.fault != 0 {
		if ferr := cl.ReleaseMemObject(q.fault); ferr != nil && err == nil {
			err = q.d.wrap("release queue: its fault record", ferr)
		}
		q.fault = 0
	}
	if rerr := cl.ReleaseCommandQueue(q.q); rerr != nil && err == nil {
		err = q.d.wrap("release queue", rerr)
	}
	return err
}

// event is a marker in a queue. Its cl_event is released as soon as it is
// known complete (by Wait, Time, or the queue's Sync or Release); its time
// and status are kept.
type event struct {
	q   *queue
	seq uint64

	mu   sync.Mutex
	ev   cl.Event // 0 once finalised
	prof Profile
	end  int64
	err  error
	done bool
}

// EventProfile returns the profiling counters of an event recorded on an
// OpenCL queue, waiting for it. Safe for concurrent use.
func EventProfile(ev device.Event) (Profile, error) {
	e, ok := ev.(*event)
	if !ok {
		return Profile{}, fmt.Errorf("opencl: EventProfile: %T is not an OpenCL event", ev)
	}
	if err := e.finish(false); err != nil {
		return Profile{}, err
	}
	return e.prof, nil
}

// finish waits for the marker (unless the queue already finished it),
// reads its end time and status, and releases it. With report set, the
// queue's pending asynchronous error is also returned; it stays pending,
// so the queue's own next Sync reports it too (another construct's Wait
// on this event must not take the owner's error).
func (e *event) finish(report bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		e.done = true
		e.prof, e.err = e.q.d.readEvent(e.q.q, e.ev)
		if e.err == nil && e.q.d.hostTimes {
			t := e.q.marks.fix(2*e.seq+1, hostNow())
			e.prof = Profile{Queued: t, Submit: t, Start: t, End: t}
		}
		e.end = e.prof.End
		cl.ReleaseEvent(e.ev)
		e.ev = 0
		e.q.mu.Lock()
		if e.err == nil {
			e.q.completed(e.seq)
		} else if e.q.err == nil && !report {
			e.q.err = e.err
		}
		e.q.mu.Unlock()
	}
	if !report {
		return e.err
	}
	if e.err != nil {
		return e.err
	}
	e.q.mu.Lock()
	err := e.q.err
	e.q.mu.Unlock()
	return err
}

// Wait blocks until the event has completed.
func (e *event) Wait() error { return e.finish(true) }

// Time returns CL_PROFILING_COMMAND_END of the marker, waiting for it.
func (e *event) Time() (int64, error) {
	if err := e.finish(false); err != nil {
		return 0, err
	}
	return e.end, nil
}
