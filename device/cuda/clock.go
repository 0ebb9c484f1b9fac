//go:build cgo

package cuda

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/gompt/gompt/device/cuda/internal/cu"
)

// epoch is the zero of device time: every CUDA device reports nanoseconds
// since the package was initialised, on the host's monotonic clock.
var epoch = time.Now()

func hostNow() int64 { return int64(time.Since(epoch)) }

// hostClock and clockTimer are what devices opened from now on use as the
// host clock and as the period of the timer that resynchronises their
// clocks (0: no timer). Tests replace them before opening a device.
var (
	hostClock  = hostNow
	clockTimer = resyncEvery
)

const (
	// resyncEvery is the period of the timer that takes a new reference.
	// It keeps every event within a second or so of a reference, where
	// cuEventElapsedTime's float32 milliseconds round by at most 30 ns
	// (they stay under 1 us up to 16 s).
	resyncEvery = time.Second
	// refsKept is how many references the fit of rate and offset uses: the
	// rate is estimated over about refsKept seconds.
	refsKept = 8
	// resyncWait bounds how long a resynchronisation polls for its
	// reference event before it gives up (the GPU may be busy with other
	// queues' work that holds the copy and compute engines, in which case
	// the event's time would be late anyway).
	resyncWait = 5 * time.Millisecond
	// firstWait bounds the wait for the first reference, when the context
	// is new and its first work may be slow to start.
	firstWait = 2 * time.Second
	// staleRef is how old the newest reference may be when a time is read
	// before the read takes a new one (the timer is late or off).
	staleRef = 8 * time.Second
)

// errResyncLate is the error of a resynchronisation that gave up.
var errResyncLate = errors.New("device clock: the reference event did not complete in time")

// ref is a reference: an event recorded on the clock's idle stream, its
// time on the GPU's clock (ns since the first reference, the sum of
// cuEventElapsedTime between successive references, in float64), and the
// host time just before its record.
type ref struct {
	e cu.Event
	g float64
	h int64
}

// clock converts CUDA events to device time, which is host time (hostNow)
// as seen from the GPU. A timer takes a reference every resyncEvery; the
// last refsKept references are fitted by least squares with a line from the
// GPU's clock to the host's, so the GPU timer's rate (a few to a few hundred
// ppm off the host's) and offset are both estimated, as ompt_translate_time
// does for other devices. An event's time is the line at the GPU time of
// the event, taken from the reference nearest to it (so cuEventElapsedTime
// spans at most about a second). A reference that lies far off the line
// (a step of either clock) starts the fit afresh, keeping the rate.
//
// The host reading of a reference is a lower bound of its completion, so
// device times lag the truth by the record latency, a few microseconds on a
// GPU; Event.Time and Timing.Times also clamp an event's time between the
// host time of its Record and the host time it is read at.
//
// Readers hold mu for arithmetic and one cuEventElapsedTime; resync holds
// syncMu across its driver calls and mu only to add the reference, and
// polls its event rather than waiting, so a read never waits behind
// another queue's kernel.
type clock struct {
	now func() int64 // host time
	s   cu.Stream    // where references are recorded

	syncMu sync.Mutex // one resync at a time

	mu     sync.Mutex
	refs   []ref   // oldest first, at most refsKept
	gm, hm float64 // the fit's centre: host = hm + slope*(g-gm)
	slope  float64
	closed bool

	stop, done chan struct{} // the timer's, when it runs
}

// init creates the clock's stream and first reference, and starts the
// timer that calls resync every clockTimer; resync's errors go to onErr.
func (c *clock) init(ctx cu.Context, onErr func(error)) error {
	c.now, c.slope = hostClock, 1
	s, err := cu.StreamCreate(ctx, cu.STREAM_NON_BLOCKING)
	if err != nil {
		return err
	}
	c.s = s
	if err := c.resync(ctx, firstWait); err != nil {
		cu.StreamDestroy(ctx, s)
		c.s = nil
		return err
	}
	if every := clockTimer; every > 0 {
		c.stop, c.done = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(c.done)
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-c.stop:
					return
				case <-t.C:
					if err := c.resync(ctx, resyncWait); err != nil && err != errResyncLate {
						onErr(err)
					}
				}
			}
		}()
	}
	return nil
}

// resync takes a new reference: the best of three tries, by the width of
// the host window around the record. Each try polls its event and gives up
// after wait (errResyncLate), leaving the references as they were.
func (c *clock) resync(ctx cu.Context, wait time.Duration) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	var best cu.Event
	var bestH, bestW int64
	for try := 0; try < 3; try++ {
		e, err := cu.EventCreate(ctx, cu.EVENT_DEFAULT)
		if err != nil {
			if best != nil {
				cu.EventDestroy(ctx, best)
			}
			return err
		}
		before := c.now()
		err = cu.EventRecord(ctx, e, c.s)
		if err == nil {
			err = poll(ctx, e, wait)
		}
		width := c.now() - before
		if err != nil {
			cu.EventDestroy(ctx, e) // a late one is destroyed when it completes
			if best != nil {
				cu.EventDestroy(ctx, best)
			}
			return err
		}
		if best == nil || width < bestW {
			if best != nil {
				cu.EventDestroy(ctx, best)
			}
			best, bestH, bestW = e, before, width
		} else {
			cu.EventDestroy(ctx, e)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cu.EventDestroy(ctx, best)
		return errors.New("device clock is closed")
	}
	return c.add(ctx, best, bestH)
}

// poll waits for e by querying it, for at most wait.
func poll(ctx cu.Context, e cu.Event, wait time.Duration) error {
	start := time.Now()
	for spin := 0; ; spin++ {
		err := cu.EventQuery(ctx, e)
		var ce *cu.Error
		if !errors.As(err, &ce) || ce.Result != cu.ERROR_NOT_READY {
			return err
		}
		if time.Since(start) > wait {
			return errResyncLate
		}
		if spin < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// add adds the completed reference event e, recorded just after host time
// h, and refits. Called with mu held.
func (c *clock) add(ctx cu.Context, e cu.Event, h int64) error {
	if len(c.refs) == 0 {
		c.refs = append(c.refs, ref{e: e, h: h})
		c.gm, c.hm = 0, float64(h)
		return nil
	}
	last := c.refs[len(c.refs)-1]
	ms, err := cu.EventElapsedTime(ctx, last.e, e)
	if err != nil {
		cu.EventDestroy(ctx, e)
		return err
	}
	g := last.g + float64(ms)*1e6
	// Far off the line, by more than 50 us and a rate error of 500 ppm
	// since the last reference, one of the clocks has stepped.
	if off := float64(h) - c.at(g); math.Abs(off) > 50e3+500e-6*float64(h-last.h) {
		for _, r := range c.refs {
			cu.EventDestroy(ctx, r.e)
		}
		c.refs = c.refs[:0]
	}
	if len(c.refs) == refsKept {
		cu.EventDestroy(ctx, c.refs[0].e)
		c.refs = append(c.refs[:0], c.refs[1:]...)
	}
	c.refs = append(c.refs, ref{e: e, g: g, h: h})
	c.fit()
	return nil
}

// fit sets the line through the references by least squares; with one
// reference, the line goes through it with the slope it had.
func (c *clock) fit() {
	n := float64(len(c.refs))
	var gm, hm float64
	for _, r := range c.refs {
		gm += r.g
		hm += float64(r.h)
	}
	gm, hm = gm/n, hm/n
	var sgg, sgh float64
	for _, r := range c.refs {
		dg := r.g - gm
		sgg += dg * dg
		sgh += dg * (float64(r.h) - hm)
	}
	c.gm, c.hm = gm, hm
	if slope := sgh / sgg; sgg > 0 && math.Abs(slope-1) < 1e-3 {
		c.slope = slope
	}
}

// at returns the host time of GPU time g on the line.
func (c *clock) at(g float64) float64 { return c.hm + c.slope*(g-c.gm) }

// translate returns the device time of the completed event e, recorded at
// host time recorded, unclamped.
func (c *clock) translate(ctx cu.Context, e cu.Event, recorded int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.refs) == 0 {
		return 0, errors.New("device clock is closed")
	}
	r := c.refs[0]
	for _, o := range c.refs[1:] {
		if abs(o.h-recorded) < abs(r.h-recorded) {
			r = o
		}
	}
	ms, err := cu.EventElapsedTime(ctx, r.e, e)
	if err != nil {
		return 0, err
	}
	return int64(math.Round(c.at(r.g + float64(ms)*1e6))), nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// time returns the device time of the completed event e, recorded at host
// time recorded, clamped between recorded and the host time now. When the
// newest reference is older than staleRef, it resyncs first.
func (c *clock) time(ctx cu.Context, e cu.Event, recorded int64) (int64, error) {
	c.mu.Lock()
	stale := len(c.refs) > 0 && c.now()-c.refs[len(c.refs)-1].h > int64(staleRef)
	c.mu.Unlock()
	if stale {
		c.resync(ctx, resyncWait) // on failure keep the old references
	}
	t, err := c.translate(ctx, e, recorded)
	if err != nil {
		return 0, err
	}
	return min(max(t, recorded), c.now()), nil
}

func (c *clock) close(ctx cu.Context) error {
	if c.stop != nil {
		close(c.stop)
		<-c.done
		c.stop = nil
	}
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for _, r := range c.refs {
		errs = append(errs, cu.EventDestroy(ctx, r.e))
	}
	c.refs = nil
	if c.s != nil {
		errs = append(errs, cu.StreamDestroy(ctx, c.s))
		c.s = nil
	}
	return errors.Join(errs...)
}

// Now returns the device time in nanoseconds: host monotonic time since the
// package started, the scale Event.Time reports CUDA events on.
func (g *gpu) Now() (int64, error) { return g.clock.now(), nil }

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
	q    *queue   // the queue it was recorded on (WaitEvent)
	outs []outRef // the queue's deferred copies out before the event (see bounce.go)
	rec  int64    // host time just before cuEventRecord
	mu   sync.Mutex
	done bool
	t    int64
	err  error
}

// Wait blocks until the event completes and returns the error of the
// queue's work before it; the small copies out enqueued before the event
// have then written their slices (see bounce.go). The first Wait also
// reads the event's time and gives the CUDA event back to the pool. After
// the device's Close it fails with CodeInvalidDevice without calling the
// driver.
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
	} else {
		finishRefs(ev.outs) // their DMA is done: their slices may be read now
		if t, err := g.clock.time(g.ctx, ev.h.e, ev.rec); err != nil {
			ev.err = g.fail("event time", err)
		} else {
			ev.t = t
		}
	}
	ev.outs = nil // else the queue's Sync or Release finishes them
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
