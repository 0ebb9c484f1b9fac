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
)

// queue is one non-blocking CUDA stream (device.Queue). It is used by one
// goroutine at a time.
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

	num     uint64    // the queue's number on its device (1, 2, ...): native records' HWID
	prof    bool      // time each operation (device.Profiler)
	vals    []uint64  // launch argument scratch (packArgs)
	quiet   bool      // nothing was enqueued since the last Sync that succeeded: Sync has nothing to wait for
	last    *timing   // the timing of the operation enqueued last while profiling
	timings []*timing // timed operations not yet read
}

// NewQueue creates a queue on a new CU_STREAM_NON_BLOCKING stream, which
// does not synchronise with the legacy default stream.
func (g *gpu) NewQueue() (device.Queue, error) {
	g.mu.Lock()
	err := g.usable("new queue")
	g.mu.Unlock()
	if err != nil {
		return nil, err
	}
	s, err := cu.StreamCreate(g.ctx, cu.STREAM_NON_BLOCKING)
	if err != nil {
		return nil, g.fail("new queue", err)
	}
	q := &queue{g: g, s: s, num: g.nqueues.Add(1), quiet: true}
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

// CopyIn copies src to device memory at dst. Small copies go to the driver
// directly; large ones through the device's staging buffers (see
// stagingMin). It may return before the copy completes.
func (q *queue) CopyIn(dst device.DevicePtr, src []byte) error {
	const op = "copy to device"
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
	if len(src) >= stagingMin {
		if slots := q.g.staging.get(q.g, stagingDepth); len(slots) > 0 {
			err := q.stagedIn(cu.DevicePtr(dst), src, slots)
			q.g.staging.put(slots)
			q.endTiming(tm, typeHtoD, 0, err)
			return q.g.fail(op, err)
		}
	}
	p := unsafe.Pointer(unsafe.SliceData(src))
	q.keep(p)
	err := cu.MemcpyHtoDAsync(q.g.ctx, cu.DevicePtr(dst), p, len(src), q.s)
	q.endTiming(tm, typeHtoD, 0, err)
	return q.g.fail(op, err)
}

// CopyOut copies device memory at src to dst. A large copy returns when dst
// holds the data; a small one may return before.
func (q *queue) CopyOut(dst []byte, src device.DevicePtr) error {
	const op = "copy from device"
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
	if len(dst) >= stagingMin {
		if slots := q.g.staging.get(q.g, stagingDepth); len(slots) > 0 {
			err := q.stagedOut(dst, cu.DevicePtr(src), slots)
			q.g.staging.put(slots)
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
// memmove would (device.Move): dst == src copies nothing, others go in
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
		return device.Move(dst, src, n, q.Copy, alloc, q.g.Free)
	}
	tm := q.startTiming()
	err := cu.MemcpyDtoDAsync(q.g.ctx, cu.DevicePtr(dst), cu.DevicePtr(src), n, q.s)
	q.endTiming(tm, typeDtoD, 0, err)
	return q.g.fail(op, err)
}

var _ PeerCopier = (*queue)(nil)

// CopyPeer implements PeerCopier. src must be a device of this plugin.
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

// Launch enqueues f over shape with args. Buffer arguments must point into
// live allocations of this device (checked, so a stray pointer is an error
// here rather than a fault that would end the context). See geometry for
// how the shape becomes a grid.
func (q *queue) Launch(f device.Function, shape device.Shape, args []device.Arg) error {
	fn, ok := f.(*function)
	if !ok || fn.g != q.g {
		name := "<nil>"
		if f != nil && f.Kernel() != nil {
			name = f.Kernel().Name
		}
		return device.Errorf(q.g.id, "launch "+name, device.CodeInvalidArgument,
			"function was not loaded on this device (%T)", f)
	}
	op := fn.op
	if err := q.enqueue(op); err != nil {
		return err
	}
	if len(args) > cu.MaxParams {
		return device.Errorf(q.g.id, op, device.CodeInvalidArgument, "%d arguments: at most %d are supported", len(args), cu.MaxParams)
	}
	vals, err := packArgs(q.vals, fn.k, args)
	if err != nil {
		return device.Errorf(q.g.id, op, device.CodeInvalidArgument, "%v", err)
	}
	q.vals = vals
	for i, p := range fn.k.Params {
		if p.Kind == device.ParamBuffer {
			if err := q.g.use(op, q, args[i].Ptr, 0); err != nil {
				// use's error already names the device and the
				// launch (and says so if the device is closed): add which
				// argument, once.
				if e, ok := err.(*device.Error); ok {
					e.Err = fmt.Errorf("argument %d (%s): %w", i, p.Name, e.Err)
				}
				return err
			}
		}
	}
	lim := limits{maxBlock: min(q.g.maxBlock, fn.maxThreads), maxGrid: q.g.maxGrid}
	if fn.k.MaxThreads > 0 {
		lim.maxBlock = min(lim.maxBlock, fn.k.MaxThreads)
	}
	grid, block, err := geometry(shape, lim)
	if err != nil {
		return device.Errorf(q.g.id, op, device.CodeInvalidArgument, "%v", err)
	}
	tm := q.startTiming()
	err = cu.LaunchKernel(q.g.ctx, fn.fn, grid, block, q.s, vals)
	q.endTiming(tm, typeKernel, gridTeams(grid), err)
	return q.g.fail(op, err)
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
	ev := &event{h: h, rec: rec}
	runtime.AddCleanup(ev, func(h *eventHandle) { h.release() }, h)
	return ev, nil
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
	}
	q.pin.Unpin()
	q.pinned = 0
	q.finishTimings()
	q.quiet = err == nil
	return q.g.fail(op, err)
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
		for _, t := range q.timings {
			t.mu.Lock()
			if !t.done {
				t.release()
				t.err, t.done = q.g.broken("wait"), true
			}
			t.mu.Unlock()
		}
		q.timings = nil
	} else {
		err = q.Sync()
	}
	q.released = true
	q.fenceMu.Lock()
	q.dead = true
	e := cu.StreamDestroy(q.g.ctx, q.s)
	q.fenceMu.Unlock()
	if !wasBroken {
		err = errors.Join(err, q.g.fail("release", e))
	}
	q.g.mu.Lock()
	delete(q.g.queues, q)
	q.g.mu.Unlock()
	return err
}
