package omptrt

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt/toolslot"
)

// OpenMP threads. Go cannot run code on a chosen OS thread, so every
// per-thread event is dispatched while the runtime holds the thread it
// describes (runtime.LockOSThread): for a construct, a device memory
// routine or a device event. Holds nest (a callback that calls into
// gompt); the outermost one counts.
//
// An OpenMP thread's life is an OS thread's, as with LLVM's libomp: it
// begins at the first hold of the thread, and each tool with thread
// callbacks (thread_begin, implicit_task, thread_end) that is not
// detached enters it at the first hold that dispatches to it
// (thread_begin(ompt_thread_initial) and implicit_task begin of the
// thread's initial task, in its own thread_data, task_data and
// parallel_data). The life goes on between holds, while the thread runs
// other goroutines, and ends:
//   - for a tool being finalized (ompt_finalize_tool, Finalize), before
//     its finalizer: detach ends it on the finalizing thread itself
//     (finishThread) and on every other thread it can reach (endLives:
//     goroutines that take each idle OS thread in turn);
//   - at the end of the outermost hold, when the goroutine that holds the
//     thread was locked to it before (runtime.LockOSThread of its own):
//     such a goroutine may exit locked, and the thread dies with it; but
//     not on the main thread (mainThread), which Go parks instead;
//   - on every hold's end, where lives per OS thread cannot be had
//     (livesPerThread false: a Go release or platform where the runtime's
//     g.lockedm and m.g0 are not found; tid_linux_fast.go).
// At its end every tool that entered gets implicit_task end and
// thread_end, on that thread, with the callbacks it had when it entered,
// and its slots go back to ompt_data_none. A life detach could not
// reach (its thread busy or locked throughout) that ends after the
// tool's finalizer is due is only cleared: no callback follows it.
//
// A tool with none of the thread callbacks is never told a thread began
// or ended: its slots keep what it stores there, across lives.
//
// ompt_get_thread_data, ompt_get_task_info and ompt_get_parallel_info
// answer for the calling OS thread: its slots, inside a life and between
// lives (then ompt_data_none for a tool with thread callbacks), NULL / 0
// on a thread the runtime never held (one a tool made, say).
//
// A thread whose goroutine exits locked to it dies, with its life if it
// has one: its ends cannot come on it any more, and are never dispatched
// anywhere else. That is a goroutine that exits while the runtime holds
// the thread (a callback that calls runtime.Goexit, a panic that skips
// End and is recovered further up), or one that locked the thread after
// constructs of other goroutines ran on it. A new OS thread with its id
// (the kernel reuses ids) is a new OpenMP thread: Target.hold finds the
// dead holder, or another m.g0, and starts afresh.

// threadRec is one OS thread the runtime has held.
type threadRec struct {
	tid uint64
	// holds counts the runtime's holds of the thread in progress. Only
	// a goroutine locked to the thread reads or changes holds and the
	// fields below, so one thread's holders follow each other (holdCount
	// says how the race detector learns that).
	holds   holdCount
	holder  uintptr     // the goroutine of the holds in progress
	entered int32       // slots in the life (stage != lifeNone)
	leaving bool        // the life's ends are being dispatched: no tool enters
	live    bool        // a life is open: between holds too, when lives are per OS thread
	in      *dispatcher // every tool of it with thread callbacks is in the life (enter)
	keep    bool        // the outermost hold in progress leaves the life open at its end
	self    uint64      // threadSelf of the thread whose life is open (livesPerThread)
	taskID  uint64      // the runtime's id of the life's initial task (trace records' task_id)
	slots   []threadSlots
}

// threadSlots are one tool's slots of one thread. keep is a face's word
// (package toolslot: target/internal/cabi hangs the C tool's C slots there).
type threadSlots struct {
	thread, task, parallel ompt.Data
	frame                  ompt.Frame
	keep                   unsafe.Pointer
	stage                  uint8        // lifeNone, lifeThread (thread_begin dispatched), lifeTask (implicit_task begin too)
	ends                   *threadEntry // the callbacks of its thread_end and implicit_task end: those it had when it entered
}

const (
	lifeNone = iota
	lifeThread
	lifeTask
)

// threadEntry is one tool's thread callbacks in a dispatcher (nil where
// it registered none).
type threadEntry struct {
	t      *tool
	native bool
	begin  ompt.ThreadBeginCallback
	task   ompt.ImplicitTaskCallback
	end    ompt.ThreadEndCallback
}

func init() {
	var s threadSlots
	toolslot.ThreadOffset = unsafe.Offsetof(s.keep) - unsafe.Offsetof(s.thread)
	toolslot.TaskOffset = unsafe.Offsetof(s.keep) - unsafe.Offsetof(s.task)
	toolslot.ParallelOffset = unsafe.Offsetof(s.keep) - unsafe.Offsetof(s.parallel)
}

// threadSlots returns tool t's slots of the calling OS thread, nil if the
// runtime never held the thread.
func (t *tool) threadSlots() *threadSlots {
	th := lookupThread(threadID())
	if th == nil || t.idx >= len(th.slots) {
		return nil
	}
	return &th.slots[t.idx]
}

// inCallback reports whether the calling goroutine may be inside a
// tool callback: it holds its OS thread for the runtime (a construct, a
// device event, a life's end), or it delivers trace buffers.
func inCallback() bool {
	if th := lookupThread(threadID()); th != nil && th.holds.Load() > 0 && th.holder == getg() {
		return true
	}
	return inDelivery()
}

// livesPerThread: an OpenMP thread's life is its OS thread's, not one
// hold's (set once the runtime's fields it needs are found).
var livesPerThread atomic.Bool

// The threads, by OS thread id: an open-addressed table read without a
// lock (one probe, usually), and the list of all of them.
const threadTabSize = 4096

var (
	threadTab  [threadTabSize]atomic.Pointer[threadRec]
	threadMu   sync.Mutex // serializes inserts; guards threadList, threadMore
	threadList []*threadRec
	threadMore = map[uint64]*threadRec{} // when the table is full
	threadFull atomic.Bool
	// toolsFound are the tools found at Start, by index: each thread has
	// slots for each. Set before any event.
	toolsFound []*tool
)

func threadHash(tid uint64) uint64 { return (tid * 0x9e3779b97f4a7c15) >> 52 } // 12 bits

func lookupThread(tid uint64) *threadRec {
	if th := probeThread(tid); th != nil || !threadFull.Load() {
		return th
	}
	threadMu.Lock()
	defer threadMu.Unlock()
	return threadMore[tid]
}

// probeThread looks tid up in the lock-free table only.
func probeThread(tid uint64) *threadRec {
	for i, n := threadHash(tid), 0; n < threadTabSize; i, n = (i+1)%threadTabSize, n+1 {
		th := threadTab[i].Load()
		if th == nil {
			break
		}
		if th.tid == tid {
			return th
		}
	}
	return nil
}

// addThread makes and publishes the record of thread tid; another
// goroutine's insert of the same tid wins (a thread is only ever added
// by itself, but a test adds made-up ids).
func addThread(tid uint64) *threadRec {
	threadMu.Lock()
	defer threadMu.Unlock()
	if th := lookupThreadLocked(tid); th != nil {
		return th
	}
	th := &threadRec{tid: tid, slots: make([]threadSlots, len(toolsFound))}
	for i, t := range toolsFound {
		if t.native && toolslot.NewThread != nil {
			th.slots[i].keep = toolslot.NewThread()
		}
	}
	inserted := false
	for i, n := threadHash(tid), 0; n < threadTabSize; i, n = (i+1)%threadTabSize, n+1 {
		if threadTab[i].Load() == nil {
			threadTab[i].Store(th)
			inserted = true
			break
		}
	}
	if !inserted {
		threadMore[tid] = th
		threadFull.Store(true)
	}
	threadList = append(threadList, th)
	sawThread()
	return th
}

// lookupThreadLocked is lookupThread with threadMu held.
func lookupThreadLocked(tid uint64) *threadRec {
	if th := probeThread(tid); th != nil {
		return th
	}
	return threadMore[tid]
}

// newThread returns the record of thread tid, which probeThread did not
// find in the lock-free table: the one in the overflow map, or a new one.
func newThread(tid uint64) *threadRec {
	if th := lookupThread(tid); th != nil {
		return th
	}
	return addThread(tid)
}

// leaveAll ends the life of th for every tool in it.
func (th *threadRec) leaveAll() {
	th.leaving = true
	for i := range th.slots {
		if th.slots[i].stage != lifeNone {
			th.leave(&th.slots[i])
		}
	}
	th.leaving = false
}

// forget drops the life of a thread that died with it: no callback.
func (th *threadRec) forget() {
	for i := range th.slots {
		if s := &th.slots[i]; s.stage != lifeNone {
			s.ends.t.lives.Add(-1)
			s.clear()
		}
	}
	th.entered = 0
	th.leaving = false
	th.holder = 0
	th.live = false
	th.in = nil
}

// enter makes every tool of d with thread callbacks that is not detached
// and not yet in the held thread's life enter it: thread_begin and
// implicit_task begin.
func (th *threadRec) enter(d *dispatcher) {
	if th.leaving || th.in == d {
		return
	}
	all := true
	for i := range d.threads {
		e := &d.threads[i]
		if s := &th.slots[e.t.idx]; s.stage == lifeNone && !e.t.done.Load() {
			th.enterTool(s, e)
			all = all && (s.stage != lifeNone || e.t.done.Load())
		}
	}
	if all {
		th.in = d // every tool of d is in: the next holds skip the loop until one leaves
	}
}

// enterTool dispatches thread_begin and implicit_task begin to e's tool,
// whose slots of th are s, cleared first.
func (th *threadRec) enterTool(s *threadSlots, e *threadEntry) {
	// a life begins with ompt_data_none: not what the tool stored while
	// it had no thread callbacks (or between lives)
	s.clear()
	s.stage = lifeThread
	s.ends = e
	th.entered++
	e.t.lives.Add(1)
	if e.begin != nil {
		callThreadBegin(e, &s.thread)
	}
	// the tool may have been finalized (ompt_finalize_tool from its
	// thread_begin: its thread_end came then) or detached (a panic)
	if s.stage == lifeThread && !e.t.done.Load() {
		s.stage = lifeTask
		if e.task != nil {
			callImplicitTask(e, ompt.ScopeBegin, s, 1)
		}
	}
}

// leave dispatches implicit_task end and thread_end for the tool whose
// slots of the held thread th are s, as far as it entered, and clears
// the slots; only clears them once the tool's finalizer is due. A tool finalized from inside its implicit_task end got its
// thread_end there.
func (th *threadRec) leave(s *threadSlots) {
	e := s.ends
	th.in = nil
	// counted before final is read: a finalize that sets final after
	// this finds the ends in progress and waits for them (waitEnds), so
	// either the callbacks return before the finalizer or none is made
	markLeaving(e.t, 1)
	defer markLeaving(e.t, -1) // a callback's runtime.Goexit too
	if e.t.final.Load() {
		// a life detach could not reach: the tool's finalizer has run
		// or is running, and no callback follows it
		th.entered--
		s.clear()
		e.t.lives.Add(-1)
		return
	}
	if s.stage == lifeTask {
		s.stage = lifeThread
		if e.task != nil {
			callImplicitTask(e, ompt.ScopeEnd, s, 0)
		}
	}
	if s.stage == lifeThread {
		s.stage = lifeNone
		th.entered--
		markEnding(e.t, 1)
		if e.end != nil {
			callThreadEnd(e, &s.thread)
		}
		s.clear()
		e.t.lives.Add(-1) // after the callback: detach waits for it (endLives)
		markEnding(e.t, -1)
	}
}

// clear puts s back to ompt_data_none, outside any life.
func (s *threadSlots) clear() {
	s.thread, s.task, s.parallel, s.frame = ompt.Data{}, ompt.Data{}, ompt.Data{}, ompt.Frame{}
	s.stage, s.ends = lifeNone, nil
	if s.keep != nil && toolslot.ResetThread != nil {
		toolslot.ResetThread(s.keep)
	}
}

// The thread callbacks: a native tool's called directly, a Go tool's
// under its guard (a panic detaches the tool). The ends of a life a
// tool entered still come after a panic: its per-thread state stays
// balanced.

func callThreadBegin(e *threadEntry, d *ompt.Data) {
	if e.native {
		e.begin(ompt.ThreadInitial, d)
		return
	}
	ok := false
	defer e.t.guardNamed("thread_begin", &ok)
	e.begin(ompt.ThreadInitial, d)
	ok = true
}

func callImplicitTask(e *threadEntry, ep ompt.Endpoint, s *threadSlots, n uint32) {
	if e.native {
		e.task(ep, &s.parallel, &s.task, n, 1, ompt.TaskInitial)
		return
	}
	ok := false
	defer e.t.guardNamed("implicit_task", &ok)
	e.task(ep, &s.parallel, &s.task, n, 1, ompt.TaskInitial)
	ok = true
}

func callThreadEnd(e *threadEntry, d *ompt.Data) {
	if e.native {
		e.end(d)
		return
	}
	ok := false
	defer e.t.guardNamed("thread_end", &ok)
	e.end(d)
	ok = true
}

// guardNamed is guard for a thread callback: the OMP_TOOL_VERBOSE_INIT
// log names the callback.
func (t *tool) guardNamed(name string, returned *bool) {
	if *returned {
		return
	}
	t.callbackFailed(recover(), name)
}

// threadEntry returns t's thread callbacks as registered now.
func (t *tool) threadEntry() *threadEntry {
	mu.Lock()
	defer mu.Unlock()
	return t.threadEntryLocked()
}

// threadEntryLocked is threadEntry with mu held.
func (t *tool) threadEntryLocked() *threadEntry {
	e := &threadEntry{t: t, native: t.native}
	e.begin, _ = t.cbs[ompt.CallbackThreadBegin].(ompt.ThreadBeginCallback)
	e.task, _ = t.cbs[ompt.CallbackImplicitTask].(ompt.ImplicitTaskCallback)
	e.end, _ = t.cbs[ompt.CallbackThreadEnd].(ompt.ThreadEndCallback)
	return e
}
