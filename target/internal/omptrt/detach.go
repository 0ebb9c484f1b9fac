package omptrt

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/gompt/gompt/ompt"
)

// detach removes t from dispatch and finalizes it, once: Finalize and
// ompt_finalize_tool. OpenMP 5.2 (ompt_finalize_tool): outstanding events
// are delivered first, then the finalizer runs, and no callback follows
// it. So: no target callback reaches t from here on; every trace session
// t started is stopped (its last records delivered); device_finalize is
// dispatched to t for each device it got device_initialize for and no
// device_finalize yet; then its finalizer runs. Called from inside a
// buffer callback (a delivery goroutine, which the stop would wait for),
// detach returns at once and the rest runs on a goroutine of its own,
// after the callback returns; Finalize waits for it. Called from inside a
// construct's callback, it does the same when the other constructs in
// progress have not ended within calledBackWait: one may wait for what
// the caller's construct holds.
func detach(t *tool) {
	mu.Lock()
	if t.detached {
		mu.Unlock()
		return
	}
	t.detached = true
	t.done.Store(true)
	for i, a := range active {
		if a == t {
			active = append(active[:i:i], active[i+1:]...)
			break
		}
	}
	publishLocked()
	last := len(active) == 0
	if !inDelivery() {
		ch := make(chan struct{})
		running[ch] = getg()
		mu.Unlock()
		handed := false
		defer func() { // a callback's runtime.Goexit too
			if !handed {
				mu.Lock()
				delete(running, ch)
				mu.Unlock()
				close(ch)
			}
		}()
		waited := false
		if inCallback() {
			// From a callback of a construct, which may hold what another
			// construct waits for (a device's present table around a
			// map's data ops, a dependence): wait for the others a while,
			// then finish on a goroutine of its own once they have ended,
			// after this callback returns; Finalize waits for it.
			if waited = waitCallbacksFor(calledBackWait); !waited {
				mu.Lock()
				delete(running, ch)
				detaching = append(detaching, ch)
				mu.Unlock()
				handed = true
				go func() {
					defer close(ch)
					finishDetach(t, last, false)
				}()
				// The calling thread's life ends here, on it, as
				// finishThread would end it: the goroutine above, on
				// another thread, cannot, and the sweep cannot reach a
				// thread its goroutine keeps locked (the main thread's).
				// That goroutine waits for this construct, so these ends
				// come before the finalizer.
				endLifeOfCaller(t)
				return
			}
		}
		finishDetach(t, last, waited)
		return
	}
	ch := make(chan struct{})
	detaching = append(detaching, ch)
	mu.Unlock()
	go func() {
		defer close(ch)
		finishDetach(t, last, false)
	}()
}

// calledBackWait bounds how long ompt_finalize_tool, called from inside a
// construct's callback, waits for the other constructs in progress before
// it returns and leaves the finalizer to run once they have ended.
var calledBackWait = 200 * time.Millisecond

// detaching are the detaches running on goroutines of their own; closed
// when done. Under mu.
var detaching []chan struct{}

// running are the detaches in progress on the goroutines that called
// them (ompt_finalize_tool on a thread of the tool's own, say), by the
// channel closed when each is done. Under mu.
var running = map[chan struct{}]uintptr{}

// waitDetaches waits for the detaches in progress on other goroutines,
// and for those handed to goroutines of their own, until none is left:
// Finalize does not return before their tools' finalizers have run. A
// detach that hands its finish off moves from running to detaching, and
// may do so after a first look at detaching, so both are read together,
// again after each wait.
func waitDetaches() {
	g := getg()
	for {
		mu.Lock()
		list := detaching
		detaching = nil
		for ch, og := range running {
			if og != g {
				list = append(list, ch)
			}
		}
		mu.Unlock()
		if len(list) == 0 {
			return
		}
		for _, ch := range list {
			<-ch
		}
	}
}

// waitDetaching waits for the detaches handed to goroutines of their
// own so far (Finalize from a callback, which those may be waiting for,
// waits for no more).
func waitDetaching() {
	mu.Lock()
	list := detaching
	detaching = nil
	mu.Unlock()
	for _, ch := range list {
		<-ch
	}
}

// finishDetach delivers t's outstanding events and calls its finalizer.
// last: no tool is left, so sessions that belong to no tool end too.
// waited: the constructs in progress have been waited for already.
// waitCallbacks waits for the constructs in progress on other
// goroutines; the calling thread's own life ends for t in finishThread,
// and the lives t is in on other threads in endLives.
func finishDetach(t *tool, last, waited bool) {
	if !waited {
		waitCallbacks()
	}
	hs := deviceHandles()
	sort.Slice(hs, func(i, j int) bool { return hs[i].num < hs[j].num })
	for _, h := range hs {
		if o := h.tr.owner.Load(); o == t || (o == nil && last) {
			if _, err := h.tr.stop(); err != nil {
				fmt.Fprintf(stderr, "gompt: %v\n", err)
			}
		}
	}
	finishThread(t, hs)
	endLives(t)
	t.final.Store(true)
	waitEnds(t)
	if t.res.Finalize == nil {
		return
	}
	if err := catch(func() { t.res.Finalize(&t.res.ToolData) }); err != nil {
		vlogf("Tool %q: finalizer panicked: %v.", t.name, err)
		fmt.Fprintf(stderr, "gompt: OMPT tool %q: finalizer panicked: %v\n", t.name, err)
	}
}

// finishThread dispatches to t, on the calling thread, device_finalize
// for each device of hs it got device_initialize for and no
// device_finalize yet, then implicit_task end and thread_end if t is in
// the thread's life (it entered it, or enters it here for the
// device_finalize): the last per-thread events before its finalizer.
// Other tools stay in the life.
func finishThread(t *tool, hs []*devState) {
	f, _ := t.callback(ompt.CallbackDeviceFinalize).(ompt.DeviceFinalizeCallback)
	var due []int
	for _, h := range hs {
		if t.devFinal(h.num) && f != nil {
			due = append(due, h.num)
		}
	}
	s := hostScope(nil)
	defer s.End()
	sl := &s.th.slots[t.idx]
	if len(due) > 0 && sl.stage == lifeNone {
		s.th.enterTool(sl, t.threadEntry())
	}
	for _, n := range due {
		if err := catch(func() { f(n) }); err != nil {
			vlogf("Tool %q: device_finalize callback panicked: %v.", t.name, err)
		}
	}
	if sl.stage != lifeNone {
		s.th.leave(sl)
	}
}

// endLifeOfCaller ends t's life on the calling thread, which the caller
// holds (it is in a callback of a construct), if t is in one there:
// implicit_task end and thread_end.
func endLifeOfCaller(t *tool) {
	s := hostScope(nil)
	defer s.End()
	if sl := &s.th.slots[t.idx]; sl.stage != lifeNone {
		s.th.leave(sl)
	}
}

// endLives ends t's life on every other OS thread whose life it is in,
// on that thread, before t's finalizer: implicit_task end and
// thread_end. Go runs no code on a chosen thread, so goroutines take the
// threads in turn: each locks the thread it starts on, ends t's life
// there if it is in one, and stays locked, its thread asleep, until the
// sweep is over, so the next one starts on another thread (the runtime
// wakes an idle one, or makes one when none is idle). That reaches every
// thread that is idle, or goes idle meanwhile; not one held by a
// goroutine locked to it, or busy running goroutines throughout. The
// sweep stops when t is in no life (ends running elsewhere included);
// once visits land on threads made for them (no thread was idle), each
// waits a little longer for busy threads to go idle, and after
// sweepNew of them, or after sweepWait in all, the lives left are
// logged (OMP_TOOL_VERBOSE_INIT) and never ended, as those of threads
// that died.
func endLives(t *tool) {
	if t.lives.Load() == 0 {
		return
	}
	made0, _ := runtime.ThreadCreateProfile(nil)
	deadline := time.Now().Add(sweepWait)
	release := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(release)
		wg.Wait()
	}()
	own := endingHere(t)
	pause := sweepPause
	for made := 0; t.lives.Load() > own; {
		if made > sweepNew || time.Now().After(deadline) {
			vlogf("Tool %q: %d thread lives not ended: their threads were not reached.", t.name, t.lives.Load()-own)
			return
		}
		done := make(chan bool, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ended := false
			func() {
				defer func() { done <- ended }() // a thread_end that calls runtime.Goexit ends the wait too
				ended = endLifeHere(t)
			}()
			<-release
		}()
		if !<-done {
			if n, _ := runtime.ThreadCreateProfile(nil); n-made0 > made {
				made = n - made0
				time.Sleep(pause)
				pause = min(2*pause, sweepPauseMax)
			}
		}
	}
}

// sweepNew, sweepPause, sweepPauseMax and sweepWait bound endLives.
const (
	sweepNew      = 16
	sweepPause    = 50 * time.Microsecond
	sweepPauseMax = 5 * time.Millisecond
	sweepWait     = 250 * time.Millisecond
)

// endLifeHere ends t's life on the calling goroutine's OS thread, to
// which it is locked, if t is in one, and says whether it did. Its lock
// keeps the thread from the runtime's holds, so a hold in progress on
// the record means its holder died with a thread of the same id, and
// another threadSelf a life of a thread that died.
func endLifeHere(t *tool) bool {
	th := lookupThread(threadID())
	if th == nil || th.holds.Load() != 0 {
		return false
	}
	// the visit reads the record as a holder would: its store of the
	// count (still 0) orders the reads before the thread's next holder's
	// writes, for the race detector (holdCount)
	defer th.holds.Store(0)
	if !th.live || th.self != threadSelf() || th.slots[t.idx].stage == lifeNone {
		return false
	}
	s := hostScope(nil)
	s.th.keep = true // the sweep's own lock: the other tools' lives stay open
	if sl := &s.th.slots[t.idx]; sl.stage != lifeNone {
		s.th.leave(sl)
	}
	s.End()
	return true
}

// The ends in progress, by tool and goroutine: ending counts the
// thread_end callbacks whose lives are still counted in the tool's lives
// (a tool that finalizes itself from its own thread_end, with
// ompt_finalize_tool, does not wait for that one: endLives), leaving the
// leaves from before they read final to their return (waitEnds).
var (
	endingMu sync.Mutex
	ending   = map[endingKey]int{}
	leaving  = map[endingKey]int{}
)

type endingKey struct {
	t *tool
	g uintptr
}

func markEnding(t *tool, d int)  { mark(ending, t, d) }
func markLeaving(t *tool, d int) { mark(leaving, t, d) }

// mark adds d to the calling goroutine's count of t in m.
func mark(m map[endingKey]int, t *tool, d int) {
	k := endingKey{t, getg()}
	endingMu.Lock()
	if m[k] += d; m[k] == 0 {
		delete(m, k)
	}
	endingMu.Unlock()
}

// waitEnds waits for the ends of t's lives in progress on other
// goroutines (a locked goroutine's construct ending a life the sweep
// could not reach): each began before t.final was set, and its
// callbacks return before t's finalizer is called. One that begins
// after sees final and makes none.
func waitEnds(t *tool) {
	g := getg()
	for {
		busy := false
		endingMu.Lock()
		for k := range leaving {
			if k.t == t && k.g != g {
				busy = true
				break
			}
		}
		endingMu.Unlock()
		if !busy {
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func endingHere(t *tool) int64 {
	endingMu.Lock()
	defer endingMu.Unlock()
	return int64(ending[endingKey{t, getg()}])
}
