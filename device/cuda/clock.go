//go:build cgo

package cuda

import (
	"errors"
	"sync"
	"time"

	"github.com/gompt/gompt/device/cuda/internal/cu"
)

// epoch is the zero of device time: every CUDA device reports nanoseconds
// since the package was initialised, on the host's monotonic clock.
var epoch = time.Now()

func hostNow() int64 { return int64(time.Since(epoch)) }

// resyncEvery is how old the reference event may get before the clock takes
// a new one: it bounds the drift between the GPU's and the host's clocks and
// keeps cuEventElapsedTime's float milliseconds precise (about 60 ns at 1 s).
const resyncEvery = time.Second

// maxSlew is the most a resynchronisation moves device time.
const maxSlew = 2 * time.Microsecond

// clock converts CUDA events to device time. Device time is host monotonic
// time (hostNow) as seen from the GPU: a reference event is recorded on an
// idle stream between two host readings, and an event's time is the first
// reading plus cuEventElapsedTime from the reference to it. The first
// reading is a lower bound of the reference's completion, so an event's time
// never runs ahead of Now; the error is the record latency, a few
// microseconds. An event's time is also clamped between the host time of its
// Record and the host time it is read at, bounds it cannot be outside of.
//
// The reference is retaken when older than resyncEvery, to follow the drift
// between the GPU's clock and the host's. The new reference continues the
// old mapping and moves it toward the new reading by at most maxSlew, so a
// resynchronisation never makes device time step by more than that.
type clock struct {
	mu    sync.Mutex
	s     cu.Stream
	ref   cu.Event
	refNS int64
}

func (c *clock) init(ctx cu.Context) error {
	s, err := cu.StreamCreate(ctx, cu.STREAM_NON_BLOCKING)
	if err != nil {
		return err
	}
	c.s = s
	if err := c.resync(ctx); err != nil {
		cu.StreamDestroy(ctx, s)
		c.s = nil
		return err
	}
	return nil
}

// resync takes a new reference: the best of three tries, by the width of
// the host window around the record. On failure the reference is unchanged
// and the events of the tries are destroyed.
func (c *clock) resync(ctx cu.Context) error {
	var best cu.Event
	var bestNS, bestWidth int64
	fail := func(err error) error {
		if best != nil {
			cu.EventDestroy(ctx, best)
		}
		return err
	}
	for try := 0; try < 3; try++ {
		e, err := cu.EventCreate(ctx, cu.EVENT_DEFAULT)
		if err != nil {
			return fail(err)
		}
		before := hostNow()
		err = cu.EventRecord(ctx, e, c.s)
		if err == nil {
			err = cu.EventSynchronize(ctx, e)
		}
		width := hostNow() - before
		if err != nil {
			cu.EventDestroy(ctx, e)
			return fail(err)
		}
		if best == nil || width < bestWidth {
			if best != nil {
				cu.EventDestroy(ctx, best)
			}
			best, bestNS, bestWidth = e, before, width
		} else {
			cu.EventDestroy(ctx, e)
		}
	}
	if c.ref != nil {
		if ms, err := cu.EventElapsedTime(ctx, c.ref, best); err == nil {
			cont := c.refNS + int64(float64(ms)*1e6)
			bestNS = cont + max(-int64(maxSlew), min(bestNS-cont, int64(maxSlew)))
		}
		cu.EventDestroy(ctx, c.ref)
	}
	c.ref, c.refNS = best, bestNS
	return nil
}

// time returns the device time of the completed event e, recorded at host
// time recorded.
func (c *clock) time(ctx cu.Context, e cu.Event, recorded int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ref == nil {
		return 0, errors.New("device clock is closed")
	}
	if hostNow()-c.refNS > int64(resyncEvery) {
		c.resync(ctx) // on failure keep the old reference
	}
	ms, err := cu.EventElapsedTime(ctx, c.ref, e)
	if err != nil {
		return 0, err
	}
	t := c.refNS + int64(float64(ms)*1e6)
	return min(max(t, recorded), hostNow()), nil
}

func (c *clock) close(ctx cu.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	if c.ref != nil {
		errs = append(errs, cu.EventDestroy(ctx, c.ref))
		c.ref = nil
	}
	if c.s != nil {
		errs = append(errs, cu.StreamDestroy(ctx, c.s))
		c.s = nil
	}
	return errors.Join(errs...)
}

// Now returns the device time in nanoseconds: host monotonic time since the
// package started, the scale Event.Time reports CUDA events on.
func (g *gpu) Now() (int64, error) { return hostNow(), nil }

// eventPool keeps timing events for reuse by Record, and knows the events
// that Record's device.Events hold, so that Close can destroy them.
type eventPool struct {
	mu     sync.Mutex
	free   []cu.Event
	lent   map[*eventHandle]struct{} // events of Record not given back
	closed bool
}

func (p *eventPool) get(ctx cu.Context) (cu.Event, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		e := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return e, nil
	}
	p.mu.Unlock()
	return cu.EventCreate(ctx, cu.EVENT_DEFAULT)
}

func (p *eventPool) put(ctx cu.Context, e cu.Event) {
	p.mu.Lock()
	if !p.closed && len(p.free) < 256 {
		p.free = append(p.free, e)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	cu.EventDestroy(ctx, e)
}

// lend records that h holds its event until h.release.
func (p *eventPool) lend(h *eventHandle) {
	p.mu.Lock()
	if p.lent == nil {
		p.lent = map[*eventHandle]struct{}{}
	}
	p.lent[h] = struct{}{}
	p.mu.Unlock()
}

// giveBack takes back the event of h, unless close has destroyed it.
func (p *eventPool) giveBack(h *eventHandle) {
	p.mu.Lock()
	_, ok := p.lent[h]
	delete(p.lent, h)
	p.mu.Unlock()
	if ok {
		p.put(h.g.ctx, h.e)
	}
}

// isClosed reports whether close has run: the events lent then are gone.
func (p *eventPool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// close destroys the pooled events and those still lent to Record's
// events, whose queues have been released (so their work is done).
func (p *eventPool) close(g *gpu) error {
	p.mu.Lock()
	free, lent := p.free, p.lent
	p.free, p.lent, p.closed = nil, nil, true
	p.mu.Unlock()
	for h := range lent {
		free = append(free, h.e)
	}
	var errs []error
	for _, e := range free {
		errs = append(errs, g.fail("close", cu.EventDestroy(g.ctx, e)))
	}
	return errors.Join(errs...)
}

// eventHandle owns a pooled CUDA event until the event is waited for or
// garbage, or the device closes. The pool's lent set makes the first two
// paths give it back once, and tells them whether Close has destroyed it.
type eventHandle struct {
	g *gpu
	e cu.Event
}

func (h *eventHandle) release() { h.g.events.giveBack(h) }

// event is a point in a queue (device.Event). Wait and Time may be called
// from any goroutine, any number of times.
type event struct {
	h    *eventHandle
	rec  int64 // host time just before cuEventRecord
	mu   sync.Mutex
	done bool
	t    int64
	err  error
}

// Wait blocks until the event completes and returns the error of the
// queue's work before it. The first Wait also reads the event's time and
// gives the CUDA event back to the pool. After the device's Close it fails
// with CodeInvalidDevice without calling the driver.
func (ev *event) Wait() error {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.done {
		return ev.err
	}
	g := ev.h.g
	if g.events.isClosed() { // the CUDA event is gone with the device
		ev.err = g.errClosed("wait")
	} else if err := g.broken("wait"); err != nil {
		ev.err = err
	} else if err := cu.EventSynchronize(g.ctx, ev.h.e); err != nil {
		ev.err = g.fail("wait", err)
	} else if t, err := g.clock.time(g.ctx, ev.h.e, ev.rec); err != nil {
		ev.err = g.fail("event time", err)
	} else {
		ev.t = t
	}
	ev.done = true
	ev.h.release()
	return ev.err
}

// Time returns the device time (as Now) at which the event completed.
func (ev *event) Time() (int64, error) {
	if err := ev.Wait(); err != nil {
		return 0, err
	}
	return ev.t, nil
}
