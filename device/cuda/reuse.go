//go:build cgo

package cuda

import (
	"errors"

	"github.com/gompt/gompt/device/cuda/internal/cu"
	"github.com/gompt/gompt/device/generic"
)

// Stream-ordered reuse of freed memory.
//
// cuMemFree waits for the device's work; the device's Free does not,
// since the generic layer's cache (generic.Device, its one allocation
// policy: size classes, a byte limit) keeps the block for the next Alloc
// of its size class. A block freed while a queue's work still uses it (a
// nowait region's kernel reading it, say) must not be handed to an Alloc
// whose new owner writes it from another queue. So the gpu is a
// generic.Fencer: at Free (Fence) it records, on each queue that enqueued
// work on the block and has some not yet synchronised, a fence: an event
// after that work. The block is handed out again only once every fence
// has completed (Reuse, with cuEventQuery, without waiting); until then
// an Alloc of its class takes another block or new memory. Trim, and so
// Close, wait for the fences (Wait) before cuMemFree.
//
// A queue that has been synchronised since its last operation, the common
// case of a construct that frees after its queue's Sync, needs no fence:
// Free then makes no driver call.

var _ generic.Fencer[*allocation] = (*gpu)(nil)

// fence is an event recorded after the work of a queue that used a block.
type fence struct {
	g *gpu // the queue's device, which owns the event
	e cu.Event
}

// Fence implements generic.Fencer: a fence in a for each queue that used
// it and may still have work in flight. A closed or broken device keeps
// no block: the error sends it to MemFree, which says why. Called with
// the generic device's lock held.
func (g *gpu) Fence(a *allocation) error {
	if err := g.usable("free"); err != nil {
		return err
	}
	for _, q := range a.usersOf() {
		if f, ok := q.fence(); ok {
			a.fences = append(a.fences, f)
		}
	}
	return nil
}

// Reuse implements generic.Fencer: whether the work before every fence of
// a is done, giving back the events of the fences that have completed; a
// fence whose query fails keeps the block out of use until Trim. A
// closed or broken device reuses no block (its Alloc then says why).
// When a may be reused, it becomes a fresh allocation's handle, used by
// no queue yet. Called with the generic device's lock held.
func (g *gpu) Reuse(a *allocation) bool {
	if g.closed.Load() || g.fault.Load() != nil {
		return false
	}
	for n := len(a.fences); n > 0; n = len(a.fences) {
		f := a.fences[n-1]
		if cu.EventQuery(f.g.ctx, f.e) != nil {
			return false
		}
		f.g.events.put(f.g.ctx, f.e)
		a.fences = a.fences[:n-1]
	}
	a.users.Store(nil)
	return true
}

// Wait implements generic.Fencer: it waits for every fence of a, a block
// leaving the cache, and gives their events back.
func (g *gpu) Wait(a *allocation) error {
	var errs []error
	for _, f := range a.fences {
		errs = append(errs, f.g.fail("free", cu.EventSynchronize(f.g.ctx, f.e)))
		f.g.events.put(f.g.ctx, f.e)
	}
	a.fences = nil
	return errors.Join(errs...)
}

// fence records an event after the work enqueued on q so far, unless q
// is idle or released. When no event can be recorded it waits for the
// stream instead. Safe to call from any goroutine, concurrently with the
// goroutine that uses q.
func (q *queue) fence() (fence, bool) {
	if q.enqueued.Load() == q.synced.Load() {
		return fence{}, false
	}
	q.fenceMu.Lock()
	defer q.fenceMu.Unlock()
	if q.dead { // Release waited for the work
		return fence{}, false
	}
	g := q.g
	e, err := g.events.get(g.ctx)
	if err == nil {
		if err = cu.EventRecord(g.ctx, e, q.s); err != nil {
			g.events.put(g.ctx, e)
		}
	}
	if err != nil {
		g.fail("free", err)              // a sticky error marks the device
		cu.StreamSynchronize(g.ctx, q.s) // on failure the stream's work has ended too
		return fence{}, false
	}
	return fence{g: g, e: e}, true
}
