//go:build cgo

package cuda

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/device/cuda/internal/cu"
)

// Small copies of pageable Go memory through a pinned bounce ring.
//
// NVIDIA's "API synchronization behavior" lets the driver synchronise with
// the stream when an asynchronous copy involves pageable memory: a small
// host-to-device copy from Go memory, and any device-to-host copy into it,
// may wait for the work enqueued before it (a running kernel) and so cannot
// overlap it. So a copy below stagingMin goes through page-locked memory
// that the queue owns: a ring of bounceSegs segments of bounceSeg bytes,
// made at the queue's first small copy.
//
//   - CopyIn copies the Go slice into the ring and enqueues the DMA from
//     there: it returns at once, and the Go slice is free again.
//   - CopyOut enqueues the DMA into the ring and returns at once; the copy
//     from the ring into the Go slice is deferred (an out) until a point
//     where the DMA is known to be done: the queue's next successful Sync,
//     the Wait of an event recorded after the copy (from any goroutine), or
//     the reuse of the ring segment, which waits for it. The contract of
//     device.Queue (the slice is unread until a later Sync or Wait) is what
//     makes this correct. A later copy on the same queue that reads or
//     writes an out's slice by another path first syncs the queue (see
//     settle), so the slice still sees the queue's order.
//
// Copies fill a segment one after the other; when the next copy does not
// fit, an event is recorded on the stream (after every copy in the
// segment) and the copy goes to the next segment, which is reused once its
// own event has completed (waiting for it only when the ring has gone
// round while the stream is still busy) and the outs enqueued before that
// event have been finished. A successful Sync finishes every out and
// empties the ring. An out whose wait fails stays pending (a later Sync or
// Wait that succeeds finishes it); Release finishes every out, copying
// only what is known to be there, before it frees the ring. When the ring
// cannot be made (no page-locked memory), small copies go to the driver
// straight from the Go slice, as before.
const (
	bounceSeg  = stagingMin // a copy below stagingMin fits in one segment
	bounceSegs = 4          // 1 MiB page-locked per queue that makes small copies
	bounceAln  = 64         // copies start at multiples of this in a segment
)

type bounceRing struct {
	mem  unsafe.Pointer // bounceSegs*bounceSeg bytes from cuMemAllocHost
	buf  []byte         // the same memory
	segs [bounceSegs]bounceSegment
	cur  int // the segment being filled
	off  int // bytes of it used
}

type bounceSegment struct {
	ev     cu.Event // recorded after the segment's copies when the ring moved on
	busy   bool     // ev is recorded and not yet known complete
	outSeq uint64   // the outs numbered below this were enqueued before ev
}

// out is a copy into a Go slice deferred until its DMA into the ring is
// known to be complete. finish may be called from several goroutines (the
// queue's and those that Wait for an event); the first does the work. The
// queue reuses a finished out for a later copy with a new number, so a
// late finish through an event names the copy it means (outRef).
type out struct {
	mu   sync.Mutex
	done bool
	dst  []byte // the program's slice; nil once done
	src  []byte // the ring's bytes
	seq  uint64 // the queue's number of the copy
}

// outRef is an event's reference to one copy of an out.
type outRef struct {
	o   *out
	seq uint64
}

// finish copies out number seq into its slice, once, when copyData is
// true (its DMA has completed); with copyData false it only marks it done
// (its data cannot be had: the error was reported). It does nothing when
// the out has finished, or holds another copy now.
func (o *out) finish(seq uint64, copyData bool) {
	o.mu.Lock()
	if !o.done && o.seq == seq {
		if copyData {
			copy(o.dst, o.src)
		}
		o.done, o.dst, o.src = true, nil, nil
	}
	o.mu.Unlock()
}

// finishRefs finishes the copies of refs in order.
func finishRefs(refs []outRef) {
	for _, r := range refs {
		r.o.finish(r.seq, true)
	}
}

// outsFinished reports whether every copy of refs has finished (written
// its slice or given up), so that nothing is left for a Wait to write.
func outsFinished(refs []outRef) bool {
	for _, r := range refs {
		r.o.mu.Lock()
		pending := !r.o.done && r.o.seq == r.seq
		r.o.mu.Unlock()
		if pending {
			return false
		}
	}
	return true
}

// deferOut notes a copy of the ring's src into dst to finish later.
func (q *queue) deferOut(dst, src []byte) {
	var o *out
	if n := len(q.spare); n > 0 {
		o, q.spare = q.spare[n-1], q.spare[:n-1]
	} else {
		o = new(out)
	}
	o.mu.Lock()
	o.done, o.dst, o.src, o.seq = false, dst, src, q.outSeq
	o.mu.Unlock()
	q.outSeq++
	q.outs = append(q.outs, o)
}

// refs returns references to the pending outs, for an event recorded
// after them; nil when there are none.
func (q *queue) refs() []outRef {
	if len(q.outs) == 0 {
		return nil
	}
	rs := make([]outRef, len(q.outs))
	for i, o := range q.outs {
		rs[i] = outRef{o, o.seq}
	}
	return rs
}

// finishOuts finishes the first n pending outs in order and keeps them for
// reuse.
func (q *queue) finishOuts(n int, copyData bool) {
	for _, o := range q.outs[:n] {
		o.finish(o.seq, copyData)
	}
	q.spare = append(q.spare, q.outs[:n]...)
	clear(q.outs[:n])
	q.outs = q.outs[:copy(q.outs, q.outs[n:])]
}

// bounce returns n bytes of the queue's ring for a copy about to be
// enqueued, making the ring at the first call; nil (and no error) when the
// ring cannot be made, in which case the copy goes direct. It waits for a
// segment only when the ring has gone round to a segment whose copies the
// stream has not yet done.
func (q *queue) bounce(n int) ([]byte, error) {
	r := q.ring
	if r == nil {
		if q.noRing {
			return nil, nil
		}
		if r = q.makeRing(); r == nil {
			q.noRing = true
			return nil, nil
		}
		q.ring = r
	}
	if r.off+n > bounceSeg {
		if err := q.nextSegment(); err != nil {
			return nil, err
		}
	}
	lo := r.cur*bounceSeg + r.off
	r.off += (n + bounceAln - 1) &^ (bounceAln - 1)
	return r.buf[lo : lo+n : lo+n], nil
}

// makeRing allocates the ring and its events, or returns nil.
func (q *queue) makeRing() *bounceRing {
	ctx := q.g.ctx
	mem, err := cu.MemAllocHost(ctx, bounceSegs*bounceSeg)
	if err != nil {
		return nil
	}
	r := &bounceRing{mem: mem, buf: unsafe.Slice((*byte)(mem), bounceSegs*bounceSeg)}
	for i := range r.segs {
		if r.segs[i].ev, err = cu.EventCreate(ctx, cu.EVENT_DISABLE_TIMING); err != nil {
			for _, s := range r.segs[:i] {
				cu.EventDestroy(ctx, s.ev)
			}
			cu.MemFreeHost(ctx, mem)
			return nil
		}
	}
	return r
}

// nextSegment closes the segment being filled (recording its event after
// its copies) and makes the next one the one to fill, once the copies that
// used it last are done and their outs finished.
func (q *queue) nextSegment() error {
	r, ctx := q.ring, q.g.ctx
	s := &r.segs[r.cur]
	if r.off > 0 {
		if err := cu.EventRecord(ctx, s.ev, q.s); err != nil {
			// Without the event, wait for the stream itself: the segment
			// is then free, and so are the others.
			if e := cu.StreamSynchronize(ctx, q.s); e != nil {
				return err
			}
			q.drained()
			return nil
		}
		s.busy, s.outSeq = true, q.outSeq
	}
	next := (r.cur + 1) % bounceSegs
	ns := &r.segs[next]
	if ns.busy {
		if err := cu.EventSynchronize(ctx, ns.ev); err != nil {
			return err
		}
		ns.busy = false
		q.finishBefore(ns.outSeq)
	}
	r.cur, r.off = next, 0
	return nil
}

// finishBefore finishes the queue's outs numbered below seq, whose DMA is
// known to be complete.
func (q *queue) finishBefore(seq uint64) {
	n := 0
	for n < len(q.outs) && q.outs[n].seq < seq {
		n++
	}
	q.finishOuts(n, true)
}

// drained is called when the stream has completed everything enqueued on
// it: every out is finished and the ring is empty.
func (q *queue) drained() {
	q.finishOuts(len(q.outs), true)
	if r := q.ring; r != nil {
		for i := range r.segs {
			r.segs[i].busy = false
		}
		r.cur, r.off = 0, 0
	}
}

// settle syncs the queue when p overlaps the slice of a pending out, so
// that a copy that reads p, or writes it by a path that is not deferred,
// is ordered after the out as the queue's order says.
func (q *queue) settle(p []byte) error {
	if len(q.outs) == 0 || len(p) == 0 {
		return nil
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	hi := lo + uintptr(len(p))
	for _, o := range q.outs {
		o.mu.Lock()
		olo := uintptr(unsafe.Pointer(unsafe.SliceData(o.dst)))
		ohi := olo + uintptr(len(o.dst))
		pending := !o.done
		o.mu.Unlock()
		if pending && lo < ohi && olo < hi {
			return q.Sync()
		}
	}
	return nil
}

// freeRing finishes every out (copying only when the stream's work is
// known done) and gives the ring back to the driver. Called by Release
// before it destroys the stream, once the stream's work has ended (a
// successful Sync: copyData) or may not have: then it waits for the DMAs
// of the ring first (on a broken device those waits fail at once).
func (q *queue) freeRing(copyData bool) error {
	q.finishOuts(len(q.outs), copyData)
	q.spare = nil
	r := q.ring
	if r == nil {
		return nil
	}
	q.ring = nil
	ctx := q.g.ctx
	var errs []error
	if !copyData && r.off > 0 {
		s := &r.segs[r.cur]
		if err := cu.EventRecord(ctx, s.ev, q.s); err != nil {
			errs = append(errs, err, cu.StreamSynchronize(ctx, q.s))
		} else {
			s.busy = true
		}
	}
	for _, s := range r.segs {
		if s.busy && !copyData {
			errs = append(errs, cu.EventSynchronize(ctx, s.ev))
		}
		errs = append(errs, cu.EventDestroy(ctx, s.ev))
	}
	errs = append(errs, cu.MemFreeHost(ctx, r.mem))
	return errors.Join(errs...)
}
