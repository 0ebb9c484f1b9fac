//go:build cgo

package cuda

import (
	"errors"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
)

// Stream-ordered reuse of freed memory.
//
// cuMemFree waits for the device's work; the plugin's Free does not, since
// it keeps the block for the next Alloc of its size class. A block freed
// while a queue's work still uses it (a nowait region's kernel reading it,
// say) must not be handed to an Alloc whose new owner writes it from
// another queue. So Free records, on each queue that enqueued work on the
// block and has some not yet synchronised, a fence: an event after that
// work. The block is handed out again only once every fence has completed
// (cuEventQuery, without waiting); until then an Alloc of its class takes
// another block or new memory. trim and Close wait for the fences.
//
// A queue that has been synchronised since its last operation, the common
// case of a construct that frees after its queue's Sync, needs no fence:
// Free then makes no driver call.

// block is a freed allocation in the cache.
type block struct {
	p      device.DevicePtr
	fences []fence
}

// fence is an event recorded after the work of a queue that used a block.
type fence struct {
	g *gpu // the queue's device, which owns the event
	e cu.Event
}

// fences returns a fence for each queue of users that may still have work
// in flight. Called by Free with the block's device's mu held.
func fences(users []*queue) []fence {
	var fs []fence
	for _, q := range users {
		if f, ok := q.fence(); ok {
			fs = append(fs, f)
		}
	}
	return fs
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

// ready reports whether the work before every fence of b is done, giving
// back the events of the fences that have completed. A fence whose query
// fails keeps the block out of use until trim. Called with the device's mu
// held.
func (b *block) ready() bool {
	for n := len(b.fences); n > 0; n = len(b.fences) {
		f := b.fences[n-1]
		if cu.EventQuery(f.g.ctx, f.e) != nil {
			return false
		}
		f.g.events.put(f.g.ctx, f.e)
		b.fences = b.fences[:n-1]
	}
	return true
}

// wait waits for every fence of b and gives their events back.
func (b *block) wait() error {
	var errs []error
	for _, f := range b.fences {
		errs = append(errs, f.g.fail("free", cu.EventSynchronize(f.g.ctx, f.e)))
		f.g.events.put(f.g.ctx, f.e)
	}
	b.fences = nil
	return errors.Join(errs...)
}
