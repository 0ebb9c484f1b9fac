package omptrt

import (
	"fmt"
	"sort"

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
// after the callback returns; Finalize waits for it.
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
		mu.Unlock()
		finishDetach(t, last)
		return
	}
	ch := make(chan struct{})
	detaching = append(detaching, ch)
	mu.Unlock()
	go func() {
		defer close(ch)
		finishDetach(t, last)
	}()
}

// detaching are the detaches running on goroutines of their own; closed
// when done. Under mu.
var detaching []chan struct{}

// waitDetaching waits for the detaches begun from delivery goroutines.
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
// waitCallbacks waits for the constructs in progress on other
// goroutines: their threads' lives end before them, so t's thread_end
// for each comes before this returns; the calling thread's own life
// ends for t in finishThread.
func finishDetach(t *tool, last bool) {
	waitCallbacks()
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
