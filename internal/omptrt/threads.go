package omptrt

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gompt/gompt/internal/omptrt/toolslot"
	"github.com/gompt/gompt/ompt"
)

// OpenMP threads. Each OS thread on which gompt dispatches an event is an
// OpenMP thread to the tools, as a native thread that enters LLVM's
// libomp is: at its first event it gets thread_begin(ompt_thread_initial)
// with a thread_data of its own, and an implicit initial task
// (implicit_task begin, ompt_task_initial, parallelism 1, index 1) with
// its own task_data and the parallel_data of its implicit parallel
// region. ompt_get_thread_data, ompt_get_task_info and
// ompt_get_parallel_info answer for the calling OS thread, NULL / 0 on a
// thread the runtime never saw (one a tool made, say). Threads are never
// forgotten: at Finalize (and before a tool that calls
// ompt_finalize_tool is finalized) each gets implicit_task end and
// thread_end, dispatched from the finalizing goroutine (Go cannot run
// code on a chosen OS thread).
//
// The dispatching goroutine holds its thread while an event is
// dispatched (a construct's from its begin to its end, see Target.own),
// so the thread that gets thread_begin is the one its callbacks run on.

// threadRec is one OpenMP thread.
type threadRec struct {
	tid    uint64
	taskID uint64        // the runtime's id of its initial task (trace records' task_id)
	slots  []threadSlots // per tool, by tool.idx
}

// threadSlots are one tool's slots of one thread. keep is a face's word
// (package toolslot: ompt/cabi hangs the C tool's C slots there).
type threadSlots struct {
	thread, task, parallel ompt.Data
	frame                  ompt.Frame
	begun                  bool // thread_begin was dispatched to the tool
	keep                   unsafe.Pointer
}

func init() {
	var s threadSlots
	toolslot.ThreadOffset = unsafe.Offsetof(s.keep) - unsafe.Offsetof(s.thread)
	toolslot.TaskOffset = unsafe.Offsetof(s.keep) - unsafe.Offsetof(s.task)
	toolslot.ParallelOffset = unsafe.Offsetof(s.keep) - unsafe.Offsetof(s.parallel)
}

// threadSlots returns tool t's slots of the calling OS thread, nil if the
// runtime never saw the thread.
func (t *tool) threadSlots() *threadSlots {
	th := lookupThread(threadID())
	if th == nil || t.idx >= len(th.slots) {
		return nil
	}
	return &th.slots[t.idx]
}

// The threads, by OS thread id: an open-addressed table read without a
// lock (one probe, usually), and the list for Finalize.
const threadTabSize = 4096

var (
	threadTab  [threadTabSize]atomic.Pointer[threadRec]
	threadMu   sync.Mutex // serializes inserts; guards threadList, threadMore
	threadList []*threadRec
	threadMore = map[uint64]*threadRec{} // when the table is full
	threadFull atomic.Bool
	numTools   int // tools found at Start: the length of each thread's slots; set before any event
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

// enterThread returns the calling OS thread's record, making it (and
// dispatching thread_begin and implicit_task begin to the tools of d) at
// the thread's first event. The caller holds its OS thread.
func enterThread(d *dispatcher) *threadRec {
	tid := threadID()
	if th := lookupThread(tid); th != nil {
		return th
	}
	th, begun := addThread(tid, d.tools, true)
	beginThread(th, begun)
	return th
}

// addThread makes and publishes the record of thread tid (another
// goroutine's insert of the same tid wins, and addThread returns its
// record and no tools). With mark, the tools of tools that are not
// detached are marked as given thread_begin and returned, for
// beginThread.
func addThread(tid uint64, tools []*tool, mark bool) (*threadRec, []*tool) {
	threadMu.Lock()
	defer threadMu.Unlock()
	if th := lookupThreadLocked(tid); th != nil {
		return th, nil
	}
	th := &threadRec{tid: tid, taskID: nextID(), slots: make([]threadSlots, numTools)}
	for _, t := range tools {
		if t.native && t.idx < len(th.slots) && toolslot.NewThread != nil {
			th.slots[t.idx].keep = toolslot.NewThread()
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
	if !mark {
		return th, nil
	}
	return th, markBegun(th, tools)
}

// markBegun marks th as begun for the tools of list that are not
// detached and returns them; threadMu is held.
func markBegun(th *threadRec, list []*tool) []*tool {
	var begun []*tool
	for _, t := range list {
		if !t.done.Load() && t.idx < len(th.slots) && !th.slots[t.idx].begun {
			th.slots[t.idx].begun = true
			begun = append(begun, t)
		}
	}
	return begun
}

// lookupThreadLocked is lookupThread with threadMu held.
func lookupThreadLocked(tid uint64) *threadRec {
	if th := probeThread(tid); th != nil {
		return th
	}
	return threadMore[tid]
}

// beginThread dispatches thread_begin and implicit_task begin for th to
// the tools of list, on th's thread.
func beginThread(th *threadRec, list []*tool) {
	for _, t := range list {
		s := &th.slots[t.idx]
		if f, ok := t.callback(ompt.CallbackThreadBegin).(ompt.ThreadBeginCallback); ok {
			func() { defer t.guard(); f(ompt.ThreadInitial, &s.thread) }()
		}
		if f, ok := t.callback(ompt.CallbackImplicitTask).(ompt.ImplicitTaskCallback); ok {
			func() { defer t.guard(); f(ompt.ScopeBegin, &s.parallel, &s.task, 1, 1, ompt.TaskInitial) }()
		}
	}
}

// endThreads dispatches implicit_task end and thread_end to tool t for
// every thread it got thread_begin for, before its finalizer.
func endThreads(t *tool) {
	var list []*threadSlots
	threadMu.Lock()
	for _, th := range threadList {
		if t.idx < len(th.slots) && th.slots[t.idx].begun {
			th.slots[t.idx].begun = false
			list = append(list, &th.slots[t.idx])
		}
	}
	threadMu.Unlock()
	it, _ := t.callback(ompt.CallbackImplicitTask).(ompt.ImplicitTaskCallback)
	te, _ := t.callback(ompt.CallbackThreadEnd).(ompt.ThreadEndCallback)
	for _, s := range list {
		if it != nil {
			if err := catch(func() { it(ompt.ScopeEnd, &s.parallel, &s.task, 0, 1, ompt.TaskInitial) }); err != nil {
				vlogf("Tool %q: implicit_task callback panicked: %v.", t.name, err)
			}
		}
		if te != nil {
			if err := catch(func() { te(&s.thread) }); err != nil {
				vlogf("Tool %q: thread_end callback panicked: %v.", t.name, err)
			}
		}
	}
}
