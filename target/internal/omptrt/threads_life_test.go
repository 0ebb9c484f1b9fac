package omptrt

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// lifeTool is a Go tool that records each event it gets with the OS
// thread it came on ("ev@tid"), and checks, in the thread callbacks,
// what a tool with per-thread state relies on.
type lifeTool struct {
	mu      sync.Mutex
	events  []string
	errs    []string
	lookup  ompt.LookupFunc
	getData ompt.GetThreadDataFunc
	done    bool
	// inTarget, if set, runs inside each target begin callback
	inTarget func(*lifeTool)
	// onTargetEnd, if set, runs inside each target end callback
	onTargetEnd func(*lifeTool)
}

func (l *lifeTool) add(ev string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		l.errs = append(l.errs, ev+" after finalize")
	}
	l.events = append(l.events, fmt.Sprintf("%s@%d", ev, unix.Gettid()))
}

func (l *lifeTool) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, fmt.Sprintf(format, args...))
}

func (l *lifeTool) got() ([]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...), append([]string(nil), l.errs...)
}

func (l *lifeTool) start(int, string) *ompt.StartResult {
	return &ompt.StartResult{
		Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l.lookup = lookup
			l.getData = lookup("ompt_get_thread_data").(ompt.GetThreadDataFunc)
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(_ int, d *ompt.Data) {
				if d.Value != 0 {
					l.fail("thread_begin: thread_data %#x, not ompt_data_none", d.Value)
				}
				d.Value = uint64(unix.Gettid())
				l.add("thread_begin")
			}))
			set(ompt.CallbackImplicitTask, ompt.ImplicitTaskCallback(func(e ompt.Endpoint, _, task *ompt.Data, _, _ uint32, _ int) {
				if e == ompt.ScopeBegin {
					task.Value = uint64(unix.Gettid())
				} else if task.Value != uint64(unix.Gettid()) {
					l.fail("implicit_task end on thread %d of a task begun on %d", unix.Gettid(), task.Value)
				}
				l.add("implicit_task " + e.String())
			}))
			set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(d *ompt.Data) {
				if d.Value != uint64(unix.Gettid()) {
					l.fail("thread_end on thread %d of a thread begun on %d", unix.Gettid(), d.Value)
				}
				l.add("thread_end")
			}))
			set(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, e ompt.Endpoint, _ int, _ *ompt.Data, _ uint64, _ uintptr) {
				if d := l.getData(); d == nil || d.Value != uint64(unix.Gettid()) {
					l.fail("target %v on thread %d outside its life", e, unix.Gettid())
				}
				l.add("target " + e.String())
				if e == ompt.ScopeBegin && l.inTarget != nil {
					l.inTarget(l)
				}
				if e == ompt.ScopeEnd && l.onTargetEnd != nil {
					l.onTargetEnd(l)
				}
			}))
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(int, string, *ompt.DeviceHandle, ompt.LookupFunc, string) {
				l.add("device_initialize")
			}))
			set(ompt.CallbackDeviceFinalize, ompt.DeviceFinalizeCallback(func(int) { l.add("device_finalize") }))
			set(ompt.CallbackTaskCreate, ompt.TaskCreateCallback(func(_ *ompt.Data, _ *ompt.Frame, _ *ompt.Data, _ int, deps bool, _ uintptr) {
				l.add(fmt.Sprintf("task_create deps=%v", deps))
			}))
			set(ompt.CallbackTaskSchedule, ompt.TaskScheduleCallback(func(_ *ompt.Data, status int, _ *ompt.Data) {
				l.add(fmt.Sprintf("task_schedule %d", status))
			}))
			set(ompt.CallbackDependences, ompt.DependencesCallback(func(_ *ompt.Data, deps []ompt.Dependence) {
				l.add(fmt.Sprintf("dependences %d", len(deps)))
			}))
			return 1
		},
		Finalize: func(*ompt.Data) {
			l.add("finalize")
			l.mu.Lock()
			l.done = true
			l.mu.Unlock()
		},
	}
}

// split turns "ev@tid" events into the events and their threads.
func split(events []string) (evs []string, tids []string) {
	for _, e := range events {
		ev, tid, _ := strings.Cut(e, "@")
		evs, tids = append(evs, ev), append(tids, tid)
	}
	return evs, tids
}

// TestConstructIsALifeOnItsThread: a goroutine locked to its thread
// (runtime.LockOSThread of its own: it may exit locked, and the thread
// die with it) makes each construct a life of that thread: thread_begin
// and the implicit task begin before its target begin, their ends after
// its target end, all on one thread; a routine a callback calls inside
// it makes no life of its own; between constructs get_thread_data
// answers ompt_data_none, and the next life begins with ompt_data_none
// again.
func TestConstructIsALifeOnItsThread(t *testing.T) {
	reset(t, nil)
	l := &lifeTool{}
	l.inTarget = func(l *lifeTool) { // a device memory routine from inside a callback
		r := RoutineBegin(0x99)
		r.DataOpBegin(ompt.DataOpAlloc, 0, ompt.InitialDevice, 0, 0, 8)
		r.DataOpEnd(0xd000)
		r.End()
	}
	ompt.RegisterTool("life", l.start)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	Start(fakeRuntime{1})
	for range 2 {
		region(ompt.KindTarget, 0, 1)
		d := l.getData()
		require.NotNil(t, d, "get_thread_data between lives, on a thread that had one")
		assert.Zero(t, d.Value, "get_thread_data between lives: ompt_data_none")
	}
	evs, tids := split(firstOf(l.got()))
	want := []string{"thread_begin", "implicit_task begin", "target begin", "target end", "implicit_task end", "thread_end"}
	assert.Equal(t, append(append([]string(nil), want...), want...), evs, "two constructs, two lives")
	me := fmt.Sprint(unix.Gettid())
	for i, tid := range tids {
		assert.Equal(t, me, tid, "event %d (%s): its thread", i, evs[i])
	}
	_, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
}

func firstOf(a, _ []string) []string { return a }

// TestManyGoroutinesEachThreadEndsOnItself: constructs on 8 goroutines
// at once, none locked to its thread: an OpenMP thread's life is its OS
// thread's, so each thread begins once, however many constructs run on
// it, and every thread_end and implicit_task end comes on the thread of
// its begin (the tool checks each), at Finalize, after the thread's
// last target event and before the finalizer; nothing comes after
// finalize.
func TestManyGoroutinesEachThreadEndsOnItself(t *testing.T) {
	requireLivesPerThread(t)
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{2})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	const goroutines, each = 8, 2500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if i%3 == 0 {
					nowaitOn(0x77)
				} else {
					region(ompt.KindTarget, g%2, 1)
				}
			}
		}()
	}
	wg.Wait()
	beforeFinalize := len(firstOf(l.got()))
	Finalize()
	events, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
	open := map[string]int{}
	begun := map[string]int{}
	targets := 0
	for i, e := range events {
		ev, tid, _ := strings.Cut(e, "@")
		switch {
		case ev == "thread_begin":
			begun[tid]++
			open[tid]++
			require.Equal(t, 1, begun[tid], "event %d: a second thread_begin on thread %s", i, tid)
		case ev == "thread_end":
			open[tid]--
			require.Zero(t, open[tid], "event %d: thread_end on thread %s outside a life", i, tid)
			require.GreaterOrEqual(t, i, beforeFinalize, "event %d: thread_end on thread %s before Finalize", i, tid)
		case ev == "finalize":
			require.Equal(t, len(events)-1, i, "finalize is the last event")
		default:
			require.Equal(t, 1, open[tid], "event %d: %s on thread %s outside a life", i, ev, tid)
			if strings.HasPrefix(ev, "target ") {
				targets++
			}
		}
	}
	assert.Equal(t, 2*goroutines*each, targets, "target begin and end of every construct")
	for tid, n := range open {
		assert.Zero(t, n, "thread %s: a life without its end", tid)
	}
	assert.NotEmpty(t, begun, "threads")
	assert.LessOrEqual(t, len(begun), 64, "lives for %d constructs: one per OS thread", goroutines*each)
}

// requireLivesPerThread fails a test of lives per OS thread on a Go
// release where the runtime's fields they need are not found (see
// validateLives): lives would be one per hold there, and this Go
// release needs a look at tid_linux_fast.go. Elsewhere (no fast path
// for this platform or toolchain) it skips the test.
func requireLivesPerThread(t *testing.T) {
	t.Helper()
	if !threadFieldsBuild {
		t.Skip("lives are one per hold on this platform and toolchain")
	}
	threadID() // validates
	require.True(t, livesPerThread.Load(), "lives per OS thread on %s: g.lockedm not found", runtime.Version())
}

// TestNowaitTaskEventsInTheTaskLife: a nowait construct's encountering
// goroutine holds no life for it; task_create, dependences and
// task_schedule come with the target events in the life of the thread
// that runs the task, before its target begin, and task_create says the
// task has dependences.
func TestNowaitTaskEventsInTheTaskLife(t *testing.T) {
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	runtime.LockOSThread() // the encountering thread; the task runs on another
	defer runtime.UnlockOSThread()
	Start(fakeRuntime{1})
	tg := TargetBegin(ompt.KindTargetNowait, 0, 0x77)
	tg.Dependences([]ompt.Dependence{{Addr: 0x1000, Type: ompt.DependenceIn}})
	evs, _ := split(firstOf(l.got()))
	assert.Empty(t, evs, "events on the encountering thread")
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tg.SubmitBegin(1)
		tg.SubmitEnd()
		tg.End()
	}()
	<-done
	evs, tids := split(firstOf(l.got()))
	assert.Equal(t, []string{"thread_begin", "implicit_task begin", "task_create deps=true", "dependences 1", "task_schedule 7",
		"target begin", "target end", "task_schedule 1", "implicit_task end", "thread_end"}, evs, "the task's events")
	for i := range tids {
		assert.Equal(t, tids[0], tids[i], "event %d (%s): its thread", i, evs[i])
	}
	assert.NotEqual(t, fmt.Sprint(unix.Gettid()), tids[0], "the task's thread is the encountering one")
}

// TestDeviceEventOutsideAConstructIsALife: a device event that comes
// outside any construct (device_initialize at a device's first use,
// device_finalize at shutdown) comes in a life of the calling thread.
func TestDeviceEventOutsideAConstructIsALife(t *testing.T) {
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{1})
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
		require.NoError(t, DeviceFinalize(0))
	}()
	<-done
	evs, tids := split(firstOf(l.got()))
	life := []string{"thread_begin", "implicit_task begin", "", "implicit_task end", "thread_end"}
	var want []string
	for _, ev := range []string{"device_initialize", "device_finalize"} {
		life[2] = ev
		want = append(want, life...)
	}
	assert.Equal(t, want, evs, "events")
	for i := range tids {
		assert.Equal(t, tids[0], tids[i], "event %d (%s): its thread", i, evs[i])
	}
}

// TestFinalizeToolFromATargetCallback: a tool that calls
// ompt_finalize_tool from its target begin gets its thread's
// implicit_task end and thread_end there, on that thread, before its
// finalizer, and nothing after; another tool in the same life stays in
// it, through the next construct, and gets its ends at its own
// finalize.
func TestFinalizeToolFromATargetCallback(t *testing.T) {
	requireLivesPerThread(t)
	reset(t, nil)
	quitter, other := &lifeTool{}, &lifeTool{}
	quitter.inTarget = func(l *lifeTool) { l.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)() }
	ompt.RegisterTool("quitter", quitter.start)
	ompt.RegisterTool("other", other.start)
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	region(ompt.KindTarget, 0, 1)
	evs, tids := split(firstOf(quitter.got()))
	assert.Equal(t, []string{"thread_begin", "implicit_task begin", "target begin", "implicit_task end", "thread_end", "finalize"}, evs, "the quitter's events")
	for i := range tids {
		assert.Equal(t, tids[0], tids[i], "quitter's event %d (%s): its thread", i, evs[i])
	}
	_, errs := quitter.got()
	assert.Empty(t, errs, "what the quitter found wrong")
	Finalize()
	evs, tids = split(firstOf(other.got()))
	lives := map[string][]string{}
	for i, ev := range evs[:len(evs)-1] {
		lives[tids[i]] = append(lives[tids[i]], ev)
	}
	for tid, l := range lives {
		n := len(l)
		require.GreaterOrEqual(t, n, 4, "thread %s: %v", tid, l)
		assert.Equal(t, []string{"thread_begin", "implicit_task begin"}, l[:2], "thread %s: its life begins", tid)
		assert.Equal(t, []string{"implicit_task end", "thread_end"}, l[n-2:], "thread %s: its life ends", tid)
		for _, ev := range l[2 : n-2] {
			assert.Contains(t, []string{"target begin", "target end"}, ev, "thread %s: inside its life", tid)
		}
	}
	assert.Equal(t, "finalize", evs[len(evs)-1], "the other tool's last event")
	assert.Equal(t, 4, strings.Count(strings.Join(evs, ","), "target "), "the other tool's target events")
}

// TestFinalizeWaitsForLivesOnOtherThreads: Finalize, called while a
// construct is in progress on another goroutine (blocked in a tool
// callback), waits for it: that thread's implicit_task end and
// thread_end come on it, when the construct ends, before the tool's
// finalizer.
func TestFinalizeWaitsForLivesOnOtherThreads(t *testing.T) {
	reset(t, nil)
	l := &lifeTool{}
	entered, release := make(chan struct{}), make(chan struct{})
	l.inTarget = func(*lifeTool) {
		close(entered)
		<-release
	}
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{1})
	done := make(chan struct{})
	go func() {
		defer close(done)
		region(ompt.KindTarget, 0, 1)
	}()
	<-entered
	finalized := make(chan struct{})
	go func() { defer close(finalized); Finalize() }()
	select {
	case <-finalized:
		assert.Fail(t, "Finalize returned while a construct was in progress")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-done
	<-finalized
	evs, tids := split(firstOf(l.got()))
	// no target callback reaches a tool being finalized; its thread's
	// ends still come, on that thread
	require.Equal(t, []string{"thread_begin", "implicit_task begin", "target begin", "implicit_task end", "thread_end", "finalize"}, evs, "events")
	for i := range 5 {
		assert.Equal(t, tids[0], tids[i], "event %d (%s): its thread", i, evs[i])
	}
	_, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
}

// TestFinalizeFromInsideACallback: Finalize (target.Shutdown) called
// from a Go tool's target end callback, inside the construct's life,
// ends that life for every tool on this thread before the finalizers;
// the construct then ends quietly.
func TestFinalizeFromInsideACallback(t *testing.T) {
	reset(t, nil)
	l := &lifeTool{}
	once := sync.Once{}
	l.onTargetEnd = func(*lifeTool) { once.Do(Finalize) }
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	region(ompt.KindTarget, 0, 1) // no tool any more
	evs, tids := split(firstOf(l.got()))
	assert.Equal(t, []string{"thread_begin", "implicit_task begin", "target begin", "target end", "implicit_task end", "thread_end", "finalize"}, evs, "events")
	for i := range tids {
		assert.Equal(t, tids[0], tids[i], "event %d (%s): its thread", i, evs[i])
	}
	_, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
}

// TestThreadThatDiedHoldingIsNew: a thread record whose holds belong to
// a goroutine that is gone (it exited locked to its thread inside a
// construct; the kernel gave a new thread the same id) is a new thread
// to the next hold: a new life begins, with thread_begin, and the dead
// life's ends are not dispatched (they cannot come on their thread).
func TestThreadThatDiedHoldingIsNew(t *testing.T) {
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	Start(fakeRuntime{1})
	// the dead thread: a life held by a goroutine that no longer runs
	th := addThread(threadID())
	th.holds.Store(1)
	th.holder = 1 // no goroutine has this address
	th.slots[0].stage = lifeTask
	th.slots[0].thread.Value = 0xdead
	th.slots[0].ends = &threadEntry{t: toolsFound[0]}
	region(ompt.KindTarget, 0, 1)
	evs, _ := split(firstOf(l.got()))
	assert.Equal(t, []string{"thread_begin", "implicit_task begin", "target begin", "target end", "implicit_task end", "thread_end"}, evs, "events")
	assert.Zero(t, th.holds.Load(), "holds after the construct")
	_, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
}

// TestToolWithoutThreadCallbacksKeepsItsThreadData: a tool that
// registers none of the thread callbacks is never told a life ended, so
// what it stores in thread_data (here lazily, at its first target
// callback on the thread) stays there for the next construct on the
// same thread: one per OS thread, not one per construct.
func TestToolWithoutThreadCallbacksKeepsItsThreadData(t *testing.T) {
	reset(t, nil)
	made := 0
	ompt.RegisterTool("lazy", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			get := l("ompt_get_thread_data").(ompt.GetThreadDataFunc)
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTarget, ompt.TargetCallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64, uintptr) {
				if d := get(); d.Value == 0 {
					made++
					d.Value = uint64(made)
				}
			}))
			return 1
		}}
	})
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	Start(fakeRuntime{1})
	for range 5 {
		region(ompt.KindTarget, 0, 1)
	}
	assert.Equal(t, 1, made, "thread states the tool made for one OS thread")
}

// TestLockedGoroutineEndsTheLifeWithItsConstruct: a goroutine that locks
// its thread (runtime.LockOSThread of its own) may exit locked, and the
// thread die with it, so the life it holds a construct in ends with the
// construct, on that thread, even one that other goroutines' constructs
// began earlier and left open. Here the goroutine runs a construct
// unlocked (its thread's life stays open), locks, runs one more and
// exits locked: every thread_begin still gets its thread_end, that
// thread's before the goroutine exits, and Finalize neither waits for
// the dead thread nor ends it anywhere else.
func TestLockedGoroutineEndsTheLifeWithItsConstruct(t *testing.T) {
	requireLivesPerThread(t)
	_, read := verboseLog(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{1})
	var lockedTid string
	done := make(chan int)
	go func() {
		region(ompt.KindTarget, 0, 1)
		runtime.LockOSThread() // and never unlocked: the thread dies with the goroutine
		lockedTid = fmt.Sprint(unix.Gettid())
		region(ompt.KindTarget, 0, 1)
		done <- len(firstOf(l.got()))
	}()
	atExit := <-done
	Finalize()
	events, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
	open := map[string]int{}
	for i, e := range events {
		ev, tid, _ := strings.Cut(e, "@")
		switch ev {
		case "thread_begin":
			open[tid]++
		case "thread_end":
			open[tid]--
			if tid == lockedTid {
				assert.Less(t, i, atExit, "the locked thread's thread_end: before its goroutine exited")
			}
		}
	}
	for tid, n := range open {
		assert.Zero(t, n, "thread %s: thread_begin against thread_end", tid)
	}
	assert.Zero(t, open[lockedTid], "the locked thread's life")
	assert.NotContains(t, read(), "not ended", "the sweep's log")
}

// TestNewThreadWithTheSameID: an open life whose thread died (its
// goroutine exited locked to it) and whose id the kernel gave a new
// thread is not the new thread's: the next hold finds another thread
// (threadSelf) on the record and begins a new life, thread_begin with
// ompt_data_none; the dead life's ends are never dispatched, and the
// tool is no longer counted in it.
func TestNewThreadWithTheSameID(t *testing.T) {
	requireLivesPerThread(t)
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	runtime.LockOSThread() // the life ends with the construct: the test sees it whole
	defer runtime.UnlockOSThread()
	Start(fakeRuntime{1})
	th := addThread(threadID())
	th.live, th.self = true, 1 // no thread has this g0
	th.slots[0].stage = lifeTask
	th.slots[0].thread.Value = 0xdead
	th.slots[0].ends = &threadEntry{t: toolsFound[0]}
	th.entered = 1
	toolsFound[0].lives.Add(1)
	region(ompt.KindTarget, 0, 1)
	evs, _ := split(firstOf(l.got()))
	assert.Equal(t, []string{"thread_begin", "implicit_task begin", "target begin", "target end", "implicit_task end", "thread_end"}, evs, "events")
	assert.Zero(t, toolsFound[0].lives.Load(), "lives the tool is counted in")
	_, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
}

// TestLivesNotReachedAreLogged: a life whose thread Finalize cannot
// reach (here a record of a thread that does not exist) does not hold
// Finalize: the sweep stops within its bounds, says so in the
// OMP_TOOL_VERBOSE_INIT log, and the tool's finalizer runs; no
// thread_end comes for that life anywhere.
func TestLivesNotReachedAreLogged(t *testing.T) {
	requireLivesPerThread(t)
	_, read := verboseLog(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{1})
	th := addThread(1 << 40) // no thread has this id
	th.live = true
	th.slots[0].stage = lifeTask
	th.slots[0].ends = &threadEntry{t: toolsFound[0]}
	th.entered = 1
	toolsFound[0].lives.Add(1)
	Finalize()
	evs, _ := split(firstOf(l.got()))
	assert.Equal(t, []string{"finalize"}, evs, "events")
	assert.Contains(t, read(), `Tool "life": 1 thread lives not ended: their threads were not reached.`, "the log")
}

// TestFinalizeToolFromALifeEnd: a tool that calls ompt_finalize_tool
// from its own thread_end, or from its implicit_task end (its thread_end
// then comes inside it, on that thread), here where a locked
// goroutine's construct ends its life, is not waited for in that
// callback; its lives on other threads end on them first, and the
// finalizer comes last.
func TestFinalizeToolFromALifeEnd(t *testing.T) {
	requireLivesPerThread(t)
	for _, from := range []string{"thread_end", "implicit_task end"} {
		_, read := verboseLog(t, nil)
		var (
			mu     sync.Mutex
			events []string
			quit   atomic.Bool
			lookup ompt.LookupFunc
		)
		add := func(ev string) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}
		quitIf := func(ev string) {
			if ev == from && quit.Load() {
				lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
			}
		}
		ompt.RegisterTool("quitter", func(int, string) *ompt.StartResult {
			return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
				lookup = l
				set := l("ompt_set_callback").(ompt.SetCallbackFunc)
				set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(int, *ompt.Data) { add("thread_begin") }))
				set(ompt.CallbackImplicitTask, ompt.ImplicitTaskCallback(func(e ompt.Endpoint, _, _ *ompt.Data, _, _ uint32, _ int) {
					quitIf("implicit_task " + e.String())
				}))
				set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(*ompt.Data) {
					add("thread_end")
					quitIf("thread_end")
				}))
				return 1
			}, Finalize: func(*ompt.Data) { add("finalize") }}
		})
		Start(fakeRuntime{1})
		var wg sync.WaitGroup
		for range 4 { // lives left open on other threads
			wg.Go(func() {
				for range 50 {
					region(ompt.KindTarget, 0, 1)
				}
			})
		}
		wg.Wait()
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			quit.Store(true)
			region(ompt.KindTarget, 0, 1)
		}()
		<-done
		mu.Lock()
		got := append([]string(nil), events...)
		mu.Unlock()
		require.NotEmpty(t, got, "from %s", from)
		assert.Equal(t, "finalize", got[len(got)-1], "from %s: the last event", from)
		all := strings.Join(got, ",")
		assert.Equal(t, strings.Count(all, "thread_begin"), strings.Count(all, "thread_end"), "from %s: thread_end against thread_begin: %v", from, got)
		assert.NotContains(t, read(), "not ended", "from %s: the sweep's log", from)
		Finalize()
	}
}

// TestLivesPerHoldWithoutTheRuntimeFields: where the runtime's fields
// lives per OS thread need are not found (livesPerThread false), a
// life is one outermost hold, as before them: each construct on 8
// goroutines begins and ends one, on its thread.
func TestLivesPerHoldWithoutTheRuntimeFields(t *testing.T) {
	requireLivesPerThread(t)
	livesPerThread.Store(false)
	defer livesPerThread.Store(true)
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{1})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				region(ompt.KindTarget, 0, 1)
			}
		})
	}
	wg.Wait()
	evs, tids := split(firstOf(l.got()))
	one := []string{"thread_begin", "implicit_task begin", "target begin", "target end", "implicit_task end", "thread_end"}
	byThread := map[string][]string{}
	for i, ev := range evs {
		byThread[tids[i]] = append(byThread[tids[i]], ev)
	}
	lives := 0
	for tid, l := range byThread {
		require.Zero(t, len(l)%len(one), "thread %s: %v", tid, l)
		for i := 0; i < len(l); i += len(one) {
			assert.Equal(t, one, l[i:i+len(one)], "thread %s: life %d", tid, i/len(one))
			lives++
		}
	}
	assert.Equal(t, 8*100, lives, "lives: one per construct")
	_, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
	Finalize()
}

// TestNoThreadEndAfterFinalizeOfALifeNotReached: a life the tool's
// finalize could not reach (its thread locked by a goroutine blocked
// throughout) gets no end after the tool's finalizer either: when that
// goroutine's next construct (another tool keeps the interface active)
// ends the life, the finalized tool is not called.
func TestNoThreadEndAfterFinalizeOfALifeNotReached(t *testing.T) {
	requireLivesPerThread(t)
	_, read := verboseLog(t, nil)
	l, other := &lifeTool{}, &lifeTool{}
	ompt.RegisterTool("life", l.start)
	ompt.RegisterTool("other", other.start)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	Start(fakeRuntime{1})
	// a life open on this thread, as constructs of unlocked goroutines
	// leave it; this goroutine then locked the thread
	th := addThread(threadID())
	th.live, th.self = true, threadSelf()
	th.slots[0].stage = lifeTask
	th.slots[0].ends = toolsFound[0].threadEntry()
	th.entered = 1
	toolsFound[0].lives.Add(1)
	done := make(chan struct{})
	go func() { defer close(done); l.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)() }()
	<-done // this thread stayed locked, its goroutine blocked
	assert.Contains(t, read(), `Tool "life": 1 thread lives not ended`, "the log")
	region(ompt.KindTarget, 0, 1)
	evs, _ := split(firstOf(l.got()))
	assert.Equal(t, []string{"finalize"}, evs, "the finalized tool's events")
	_, errs := l.got()
	assert.Empty(t, errs, "what the finalized tool found wrong")
	assert.Zero(t, toolsFound[0].lives.Load(), "lives the finalized tool is counted in")
	evs, _ = split(firstOf(other.got()))
	assert.Equal(t, []string{"thread_begin", "implicit_task begin", "target begin", "target end", "implicit_task end", "thread_end"}, evs, "the other tool's events")
	Finalize()
}

// TestMainThreadLifeStaysOpenForItsLockedGoroutine: on the main thread,
// which Go never ends, the life of a goroutine locked to it stays open
// from construct to construct, and ends at Finalize called there, on
// that thread, before the finalizer. (The test's goroutine plays the
// main thread.)
func TestMainThreadLifeStaysOpenForItsLockedGoroutine(t *testing.T) {
	requireLivesPerThread(t)
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	mainThread = threadID()
	defer func() { mainThread = 0 }()
	Start(fakeRuntime{1})
	for range 3 {
		region(ompt.KindTarget, 0, 1)
	}
	Finalize()
	evs, tids := split(firstOf(l.got()))
	assert.Equal(t, []string{"thread_begin", "implicit_task begin", "target begin", "target end", "target begin", "target end",
		"target begin", "target end", "implicit_task end", "thread_end", "finalize"}, evs, "events")
	me := fmt.Sprint(unix.Gettid())
	for i, tid := range tids {
		assert.Equal(t, me, tid, "event %d (%s): its thread", i, evs[i])
	}
	_, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
}
