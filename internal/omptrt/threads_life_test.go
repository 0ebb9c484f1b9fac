package omptrt

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
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

// TestConstructIsALifeOnItsThread: each construct, on whatever thread
// its goroutine runs, is a life of that thread: thread_begin and the
// implicit task begin before its target begin, their ends after its
// target end, all on one thread; a routine a callback calls inside it
// makes no life of its own; between constructs get_thread_data answers
// ompt_data_none, and the next life begins with ompt_data_none again.
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
// at once: every thread_end and implicit_task end comes on the thread of
// its begin (the tool checks each), lives never nest on a thread, and
// nothing comes after finalize.
func TestManyGoroutinesEachThreadEndsOnItself(t *testing.T) {
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{2})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if i%3 == 0 {
					nowaitOn(0x77)
				} else {
					region(ompt.KindTarget, g%2, 1)
				}
			}
		}()
	}
	wg.Wait()
	Finalize()
	events, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
	// per thread, lives alternate begin and end, and each target event
	// falls inside one
	open := map[string]int{}
	begins, ends := 0, 0
	for i, e := range events {
		ev, tid, _ := strings.Cut(e, "@")
		switch {
		case ev == "thread_begin":
			begins++
			open[tid]++
			require.Equal(t, 1, open[tid], "event %d: thread_begin on thread %s inside a life", i, tid)
		case ev == "thread_end":
			ends++
			open[tid]--
			require.Zero(t, open[tid], "event %d: thread_end on thread %s outside a life", i, tid)
		case ev == "finalize":
			require.Equal(t, len(events)-1, i, "finalize is the last event")
		default:
			require.Equal(t, 1, open[tid], "event %d: %s on thread %s outside a life", i, ev, tid)
		}
	}
	assert.Equal(t, begins, ends, "thread_end against thread_begin")
	assert.GreaterOrEqual(t, begins, 8*200, "lives: one per construct at least")
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
// finalizer, and nothing after; another tool in the same life gets its
// ends when the construct ends.
func TestFinalizeToolFromATargetCallback(t *testing.T) {
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
	evs, _ = split(firstOf(other.got()))
	one := []string{"thread_begin", "implicit_task begin", "target begin", "target end", "implicit_task end", "thread_end"}
	assert.Equal(t, append(append([]string(nil), one...), one...), evs, "the other tool's events")
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
