//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
	"github.com/gompt/gompt/device/generic"
)

// queue is one non-blocking CUDA stream (device.Queue). It is used by one
// goroutine at a time. Its generic.Queue has the launch checks (Launch)
// and the profiling state (Profile, Last) and fault log.
type queue struct {
	g        *gpu
	s        cu.Stream
	pin      runtime.Pinner // Go memory of direct copies, until the next Sync
	pinned   int
	released bool

	// enqueued counts the operations enqueued; synced is its value before
	// the last Sync that succeeded. Equal, the queue is idle. Read by Free
	// from any goroutine.
	enqueued, synced atomic.Uint64
	// fenceMu orders fence's use of the stream before its destruction by
	// Release, which sets dead.
	fenceMu sync.Mutex
	dead    bool

	num     uint64                   // the queue's number on its device (1, 2, ...): native records' HWID
	vals    []uint64                 // launch argument scratch (packArgs)
	quiet   bool                     // nothing was enqueued since the last Sync that succeeded: Sync has nothing to wait for
	timings generic.Timings[*timing] // timed operations not yet read

	fault cu.DevicePtr // the fault record of the checked kernels it launches (0 until the first)

	// Small copies (see bounce.go).
	ring   *bounceRing // made at the first small copy
	noRing bool        // the ring could not be made: small copies go direct
	outs   []*out      // deferred copies into Go slices, in order
	spare  []*out      // finished outs for reuse
	outSeq uint64      // the number of the next out

	generic.Queue
}

// NewQueue creates a queue on a new CU_STREAM_NON_BLOCKING stream, which
// does not synchronise with the legacy default stream.
func (g *gpu) NewQueue() (device.Queue, error) {
	if err := g.usable("new queue"); err != nil {
		return nil, err
	}
	s, err := cu.StreamCreate(g.ctx, cu.STREAM_NON_BLOCKING)
	if err != nil {
		return nil, g.fail("new queue", err)
	}
	q := &queue{g: g, s: s, num: g.nqueues.Add(1), quiet: true}
	q.Queue.Init(q, generic.QueueConfig{ID: g.id, Info: &g.info})
	g.mu.Lock()
	g.queues[q] = struct{}{}
	g.mu.Unlock()
	return q, nil
}

func (q *queue) usable(op string) error {
	if q.released {
		return device.Errorf(q.g.id, op, device.CodeInvalidArgument, "queue is released")
	}
	return q.g.broken(op)
}

// enqueue is usable for an operation that enqueues work: the next Sync
// has something to wait for.
func (q *queue) enqueue(op string) error {
	if err := q.usable(op); err != nil {
		return err
	}
	q.quiet = false
	q.enqueued.Add(1)
	return nil
}

// keep pins Go memory that an enqueued copy reads or writes until Sync. When
// many pins pile up on a queue that is never synchronised, they are dropped
// once the stream is idle.
func (q *queue) keep(p unsafe.Pointer) {
	q.pin.Pin(p)
	q.pinned++
	if q.pinned > 1024 && cu.StreamQuery(q.g.ctx, q.s) == nil {
		q.pin.Unpin()
		q.pinned = 0
	}
}

// CopyIn copies src to device memory at dst. Below stagingMin bytes src
// is copied into the queue's pinned bounce ring (see bounce.go) and the DMA
// goes from there, so the copy does not wait for the queue's earlier work;
// larger copies go through the device's staging buffers (see plan.go). It
// may return before the copy completes, but src is free again when it
// returns, except where the ring cannot be made (src is then pinned and
// the driver copies from it).
func (q *queue) CopyIn(dst device.DevicePtr, src []byte) error {
	const op = "copy to device"
	if err := q.settle(src); err != nil { // src is a pending CopyOut's slice
		return err
	}
	if err := q.enqueue(op); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	if err := q.g.use(op, q, dst, len(src)); err != nil {
		return err
	}
	tm := q.startTiming()
	if len(src) < stagingMin {
		b, err := q.bounce(len(src))
		if err != nil {
			q.endTiming(tm, typeHtoD, 0, err)
			return q.g.fail(op, err)
		}
		if b != nil {
			copy(b, src)
			err := cu.MemcpyHtoDAsync(q.g.ctx, cu.DevicePtr(dst), unsafe.Pointer(unsafe.SliceData(b)), len(b), q.s)
			q.endTiming(tm, typeHtoD, 0, err)
			return q.g.fail(op, err)
		}
	} else if slots := q.g.staging.Get(stagingDepth, q.g.newSlot); len(slots) > 0 {
		err := q.stagedIn(cu.DevicePtr(dst), src, slots)
		q.g.staging.Put(slots)
		q.endTiming(tm, typeHtoD, 0, err)
		return q.g.fail(op, err)
	}
	p := unsafe.Pointer(unsafe.SliceData(src))
	q.keep(p)
	err := cu.MemcpyHtoDAsync(q.g.ctx, cu.DevicePtr(dst), p, len(src), q.s)
	q.endTiming(tm, typeHtoD, 0, err)
	return q.g.fail(op, err)
}

// CopyOut copies device memory at src to dst. Below stagingMin bytes the
// DMA goes into the queue's pinned bounce ring and CopyOut returns at once:
// dst is written at the queue's next Sync, at the Wait of an event
// recorded after it, or earlier (see bounce.go). A large copy returns when
// dst holds the data.
func (q *queue) CopyOut(dst []byte, src device.DevicePtr) error {
	const op = "copy from device"
	small := len(dst) < stagingMin && !q.noRing
	if !small { // written at once: after the pending outs to dst
		if err := q.settle(dst); err != nil {
			return err
		}
	}
	if err := q.enqueue(op); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if err := q.g.use(op, q, src, len(dst)); err != nil {
		return err
	}
	tm := q.startTiming()
	if small {
		b, err := q.bounce(len(dst))
		if err != nil {
			q.endTiming(tm, typeDtoH, 0, err)
			return q.g.fail(op, err)
		}
		if b != nil {
			err := cu.MemcpyDtoHAsync(q.g.ctx, unsafe.Pointer(unsafe.SliceData(b)), cu.DevicePtr(src), len(b), q.s)
			if err == nil {
				q.deferOut(dst, b)
			}
			q.endTiming(tm, typeDtoH, 0, err)
			return q.g.fail(op, err)
		}
	} else if len(dst) >= stagingMin {
		if slots := q.g.staging.Get(stagingDepth, q.g.newSlot); len(slots) > 0 {
			err := q.stagedOut(dst, cu.DevicePtr(src), slots)
			q.g.staging.Put(slots)
			q.endTiming(tm, typeDtoH, 0, err)
			return q.g.fail(op, err)
		}
	}
	p := unsafe.Pointer(unsafe.SliceData(dst))
	q.keep(p)
	err := cu.MemcpyDtoHAsync(q.g.ctx, p, cu.DevicePtr(src), len(dst), q.s)
	q.endTiming(tm, typeDtoH, 0, err)
	return q.g.fail(op, err)
}

// Copy copies n bytes between two places of this device (cuMemcpyDtoDAsync).
// Overlapping ranges, whose copy CUDA leaves undefined, are copied as
// memmove would (generic.Move): dst == src copies nothing, others go in
// pieces that do not overlap.
func (q *queue) Copy(dst, src device.DevicePtr, n int) error {
	const op = "copy on device"
	if err := q.enqueue(op); err != nil {
		return err
	}
	if n < 0 {
		return device.Errorf(q.g.id, op, device.CodeInvalidArgument, "negative size %d", n)
	}
	if n == 0 {
		return nil
	}
	if err := q.g.use(op, q, dst, n); err != nil {
		return err
	}
	if err := q.g.use(op, q, src, n); err != nil {
		return err
	}
	if dst < src+device.DevicePtr(n) && src < dst+device.DevicePtr(n) {
		alloc := func(n int) (device.DevicePtr, error) {
			b, err := q.g.Alloc(n)
			return b.Ptr, err
		}
		return generic.Move(dst, src, n, q.Copy, alloc, q.g.Free)
	}
	tm := q.startTiming()
	err := cu.MemcpyDtoDAsync(q.g.ctx, cu.DevicePtr(dst), cu.DevicePtr(src), n, q.s)
	q.endTiming(tm, typeDtoD, 0, err)
	return q.g.fail(op, err)
}

var _ device.PeerCopier = (*queue)(nil)

// CopyPeer implements device.PeerCopier with cuMemcpyPeerAsync (the
// driver uses NVLink or PCIe peer access where it can, and stages through
// host memory where it cannot). src must be a device of this plugin.
func (q *queue) CopyPeer(dst device.DevicePtr, src device.Device, srcPtr device.DevicePtr, n int) error {
	const op = "copy between devices"
	if err := q.enqueue(op); err != nil {
		return err
	}
	sg, err := gpuOf(src)
	if err != nil {
		return device.Errorf(q.g.id, op, device.CodeInvalidArgument, "%v", err)
	}
	if n < 0 {
		return device.Errorf(q.g.id, op, device.CodeInvalidArgument, "negative size %d", n)
	}
	if n == 0 {
		return nil
	}
	if err := q.g.use(op, q, dst, n); err != nil {
		return err
	}
	if err := sg.use(op, q, srcPtr, n); err != nil {
		return err
	}
	return q.g.fail(op, cu.MemcpyPeerAsync(q.g.ctx, cu.DevicePtr(dst), q.g.ctx, cu.DevicePtr(srcPtr), sg.ctx, n, q.s))
}

// KernelOf implements generic.Launcher: f must have been loaded on
// this device, and the queue usable.
func (q *queue) KernelOf(f device.Function) (*device.Kernel, error) {
	fn, ok := f.(*function)
	if !ok || fn.g != q.g {
		name := "<nil>"
		if f != nil && f.Kernel() != nil {
			name = f.Kernel().Name
		}
		return nil, device.Errorf(q.g.id, "launch "+name, device.CodeInvalidArgument,
			"function was not loaded on this device (%T)", f)
	}
	if err := q.enqueue(fn.op); err != nil {
		return nil, err
	}
	return fn.k, nil
}

// EnqueueLaunch implements generic.Launcher: it enqueues f over shape with
// args. Buffer arguments must point into live allocations of this device
// (checked, so a stray pointer is an error here rather than a fault that
// would end the context). See geometry for how the shape becomes a grid.
func (q *queue) EnqueueLaunch(f device.Function, k *device.Kernel, shape *device.Shape, args []device.Arg) (faults bool, err error) {
	fn := f.(*function) // KernelOf's
	op := fn.op
	if len(args) > cu.MaxParams {
		return false, device.Errorf(q.g.id, op, device.CodeInvalidArgument, "%d arguments: at most %d are supported", len(args), cu.MaxParams)
	}
	vals, err := packArgs(q.vals, k, args)
	if err != nil {
		return false, device.Errorf(q.g.id, op, device.CodeInvalidArgument, "%v", err)
	}
	q.vals = vals
	if k.Checked() {
		m, err := q.faultRecord()
		if err != nil {
			return false, q.g.fail(op+": creating the queue's fault record", err)
		}
		vals[len(vals)-1] = uint64(m)
		faults = true
	}
	for i, p := range k.Params {
		if p.Kind == device.ParamBuffer {
			if err := q.g.use(op, q, args[i].Ptr, 0); err != nil {
				// use's error already names the device and the
				// launch (and says so if the device is closed): add which
				// argument, once.
				if e, ok := err.(*device.Error); ok {
					e.Err = fmt.Errorf("argument %d (%s): %w", i, p.Name, e.Err)
				}
				return faults, err
			}
		}
	}
	lim := limits{maxBlock: min(q.g.maxBlock, fn.maxThreads), maxGrid: q.g.maxGrid, team: k.TeamSize()}
	if k.MaxThreads > 0 {
		lim.maxBlock = min(lim.maxBlock, k.MaxThreads)
	}
	grid, block, err := geometry(*shape, lim)
	if err != nil {
		return faults, device.Errorf(q.g.id, op, device.CodeInvalidArgument, "%v", err)
	}
	tm := q.startTiming()
	err = cu.LaunchKernel(q.g.ctx, fn.fn, grid, block, q.s, vals)
	q.endTiming(tm, typeKernel, gridTeams(grid), err)
	return faults, q.g.fail(op, err)
}

// Record returns an event that completes when the queue's work so far has.
func (q *queue) Record() (device.Event, error) {
	const op = "record"
	if err := q.enqueue(op); err != nil {
		return nil, err
	}
	e, err := q.g.events.get(q.g.ctx)
	if err != nil {
		return nil, q.g.fail(op, err)
	}
	rec := q.g.clock.now()
	if err := cu.EventRecord(q.g.ctx, e, q.s); err != nil {
		q.g.events.put(q.g.ctx, e)
		return nil, q.g.fail(op, err)
	}
	h := &eventHandle{g: q.g, e: e}
	q.g.events.lend(h)
	ev := &event{h: h, q: q, rec: rec, outs: q.refs()}
	runtime.AddCleanup(ev, func(h *eventHandle) { h.release() }, h)
	return ev, nil
}

var _ device.Waiter = (*queue)(nil)

// WaitEvent implements device.Waiter with cuStreamWaitEvent: the work
// enqueued on the queue after the call waits on the device for the work
// before ev, an event recorded on another queue of this device; the caller
// does not wait. It reports false, changing nothing, so that the caller
// waits for ev itself, for an event of another device or plugin, where the
// driver lacks cuStreamWaitEvent (an optional entry point), for an event
// already waited for (its CUDA event is back in the pool, maybe recorded
// again since; its Wait returns at once), and for an event after small
// copies out whose slices are not yet written (see below). On a broken
// device it fails at once with the device's error.
//
// The deferred copies out (bounce.go). A small CopyOut enqueued before ev
// writes its Go slice only when the host learns that its DMA is done: at
// the Sync of its queue or the Wait of an event recorded after it, never
// on the device. A wait on the device would order this queue's device
// work after that DMA into the ring, but not the copy from the ring into
// the slice, which the host makes. What a dependent construct does next
// with the slice happens on the host at the call: a CopyIn copies its
// source into this queue's ring (or the staging buffers) as it is called
// and would read the slice's old bytes; a CopyOut into it would be
// overwritten later by the pending copy. The target runtime makes such
// calls right after WaitEvent (awaitDevice before a CopyIn), waiting for
// ev on the host only before copies out. So such an event is declined:
// the caller's Wait finishes the copies, then its reads and writes
// follow. An event whose copies out are all finished (or that has none)
// is safe to wait for on the device: everything the queue did to Go
// memory before it is done already (large and direct copies out return
// with their slice written; copies in have read theirs), so only device
// memory is left to order, which the driver does.
//
// Reuse of freed memory (reuse.go) needs nothing more: a block freed after
// this queue used it is fenced by an event recorded on this queue, which
// the driver completes only after the wait, so after ev's work; the
// queue that recorded ev fences its own use of the block.
func (q *queue) WaitEvent(ev device.Event) (bool, error) {
	const op = "wait for event"
	if err := q.usable(op); err != nil {
		return false, err
	}
	e, ok := ev.(*event)
	if !ok || e.h.g != q.g {
		return false, nil
	}
	if e.q == q {
		return true, nil // in order already
	}
	if !cu.HasStreamWaitEvent() {
		return false, nil
	}
	// e.mu keeps a concurrent Wait from giving the CUDA event back to the
	// pool (where a Record may record it again) before the driver has
	// taken the wait: the driver waits for the record of the time of the
	// call.
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done || !outsFinished(e.outs) {
		return false, nil
	}
	if err := q.enqueue(op); err != nil {
		return false, err
	}
	if err := cu.StreamWaitEvent(q.g.ctx, q.s, e.h.e); err != nil {
		return false, q.g.fail(op, err)
	}
	return true, nil
}

// Sync waits for the queue's work and returns the first error of it; the
// Go memory of direct copies is unpinned, and the timings of the
// operations profiled so far are read (their events go back to the pool).
func (q *queue) Sync() error {
	const op = "sync"
	if err := q.usable(op); err != nil {
		return err
	}
	if q.quiet {
		return nil // idle since the last Sync: one driver call less per construct
	}
	n := q.enqueued.Load()
	err := cu.StreamSynchronize(q.g.ctx, q.s)
	if err == nil {
		q.synced.Store(n)
		q.drained()
	}
	q.pin.Unpin()
	q.pinned = 0
	q.finishTimings()
	q.quiet = err == nil
	if err == nil && q.FaultsPending() {
		return q.readFaults()
	}
	return q.g.fail(op, err)
}

// faultRecord returns the queue's fault record, made (zeroed) at its
// first checked launch.
func (q *queue) faultRecord() (cu.DevicePtr, error) {
	if q.fault != 0 {
		return q.fault, nil
	}
	m, err := cu.MemAlloc(q.g.ctx, device.FaultRecordSize)
	if err != nil {
		return 0, err
	}
	var zero [4]int64
	if err := cu.MemcpyHtoD(q.g.ctx, m, unsafe.Pointer(&zero), device.FaultRecordSize); err != nil {
		cu.MemFree(q.g.ctx, m)
		return 0, err
	}
	q.fault = m
	return m, nil
}

// readFaults reads the fault record once the stream has synchronised,
// zeroes it again where a check failed, and returns the failure.
func (q *queue) readFaults() error {
	return q.ReadFaults(func(rec *[4]int64) error {
		return q.g.fail("sync: reading the kernels' fault record",
			cu.MemcpyDtoH(q.g.ctx, unsafe.Pointer(rec), q.fault, device.FaultRecordSize))
	}, func() error {
		var zero [4]int64
		return q.g.fail("sync: clearing the kernels' fault record",
			cu.MemcpyHtoD(q.g.ctx, q.fault, unsafe.Pointer(&zero), device.FaultRecordSize))
	})
}

// Release waits for the queue's work and destroys its stream. Releasing
// twice does nothing. On a device already broken (see gpu.broken) it only
// destroys the stream and is quiet: the error has been reported.
func (q *queue) Release() error {
	if q.released {
		return nil
	}
	var err error
	wasBroken := q.g.fault.Load() != nil
	if wasBroken {
		q.pin.Unpin()
		q.pinned = 0
		for _, t := range q.timings.Take() {
			t.mu.Lock()
			if !t.done {
				t.release()
				t.err, t.done = q.g.broken("wait"), true
			}
			t.mu.Unlock()
		}
	} else {
		err = q.Sync()
	}
	// The deferred copies out are finished (written only where the Sync
	// succeeded) before the ring goes.
	re := q.freeRing(!wasBroken && err == nil)
	if q.fault != 0 {
		if ferr := cu.MemFree(q.g.ctx, q.fault); ferr != nil && !wasBroken {
			re = errors.Join(re, ferr)
		}
		q.fault = 0
	}
	q.released = true
	q.fenceMu.Lock()
	q.dead = true
	e := cu.StreamDestroy(q.g.ctx, q.s)
	q.fenceMu.Unlock()
	if !wasBroken {
		err = errors.Join(err, q.g.fail("release", e))
		if q.g.fault.Load() == nil {
			err = errors.Join(err, q.g.fail("release", re))
		}
	}
	q.g.mu.Lock()
	delete(q.g.queues, q)
	q.g.mu.Unlock()
	return err
}
