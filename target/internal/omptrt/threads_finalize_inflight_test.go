package omptrt

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// finishes fails the test if f does not return within d.
func finishes(t *testing.T, d time.Duration, what string, f func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		t.Errorf("%s: still running after %v", what, d)
		return false
	}
}

// TestFinalizeFromThreadEndDoesNotHang: a tool whose thread_end calls
// Finalize (target.Shutdown: "the last thread ended, shut down") while
// Finalize's own sweep dispatches that thread_end does not hang the
// program.
func TestFinalizeFromThreadEndDoesNotHang(t *testing.T) {
	requireLivesPerThread(t)
	reset(t, nil)
	var once sync.Once
	ompt.RegisterTool("shutter", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(int, *ompt.Data) {}))
			set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(*ompt.Data) { once.Do(Finalize) }))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	done := make(chan struct{})
	go func() { defer close(done); region(ompt.KindTarget, 0, 1) }() // a life left open
	<-done
	finishes(t, 5*time.Second, "Finalize", Finalize)
}

// TestNoThreadEndRunsOnAfterTheFinalizer: a life the sweep cannot reach
// (its thread locked by a goroutine) that its goroutine's next construct
// ends during the sweep gets its thread_end then; a thread_end that
// takes a while (a tool flushing the thread's buffer) must have returned
// before the tool's finalizer is called, not run alongside it.
func TestNoThreadEndRunsOnAfterTheFinalizer(t *testing.T) {
	requireLivesPerThread(t)
	reset(t, nil)
	var (
		mu       sync.Mutex
		events   []string
		final    bool
		bad      []string
		lookup   ompt.LookupFunc
		slowTid  atomic.Int64
		t0       = time.Now()
		sweeping = make(chan struct{})
		swOnce   sync.Once
	)
	add := func(ev string) {
		mu.Lock()
		defer mu.Unlock()
		if final {
			bad = append(bad, ev+" after finalize")
		}
		events = append(events, ev+"@"+time.Since(t0).String())
	}
	ompt.RegisterTool("slow", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			lookup = l
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(int, *ompt.Data) { add("thread_begin") }))
			set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(*ompt.Data) {
				if int64(unix.Gettid()) == slowTid.Load() {
					time.Sleep(600 * time.Millisecond)
				}
				add("thread_end")
			}))
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(int, string, *ompt.DeviceHandle, ompt.LookupFunc, string) {}))
			set(ompt.CallbackDeviceFinalize, ompt.DeviceFinalizeCallback(func(int) { swOnce.Do(func() { close(sweeping) }) }))
			return 1
		}, Finalize: func(*ompt.Data) {
			mu.Lock()
			final = true
			events = append(events, "finalize@"+time.Since(t0).String())
			mu.Unlock()
		}}
	})
	other := &lifeTool{} // keeps the interface active after "slow" is finalized
	ompt.RegisterTool("other", other.start)
	Start(fakeRuntime{1})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	ready, gDone := make(chan bool), make(chan struct{})
	go func() {
		defer close(gDone)
		region(ompt.KindTarget, 0, 1) // unlocked: the life stays open
		tid := unix.Gettid()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		same := tid == unix.Gettid()
		slowTid.Store(int64(tid))
		ready <- same
		<-sweeping
		region(ompt.KindTarget, 0, 1) // locked: ends the life, during the sweep
	}()
	if !<-ready {
		t.Skip("the goroutine moved between its construct and its lock")
	}
	fin := make(chan struct{})
	go func() {
		defer close(fin)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	}()
	<-fin
	<-gDone
	time.Sleep(700 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, bad, "events: %v", events)
	Finalize()
}

// TestFinalizeFromACallbackFinalizeWaitsForDoesNotHang: a construct is
// in a target callback when Finalize (target.Shutdown) starts on another
// goroutine, which waits for the construct; the callback then calls
// Finalize itself (two goroutines shutting down, one of them inside a
// construct). Neither may wait for the other forever.
func TestFinalizeFromACallbackFinalizeWaitsForDoesNotHang(t *testing.T) {
	reset(t, nil)
	l := &lifeTool{}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	l.inTarget = func(*lifeTool) {
		once.Do(func() {
			close(entered)
			<-release
			Finalize()
		})
	}
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{1})
	go region(ompt.KindTarget, 0, 1)
	<-entered
	go func() { time.Sleep(20 * time.Millisecond); close(release) }()
	finishes(t, 5*time.Second, "Finalize", Finalize)
}

// TestFinalizeWhileConstructsRun: ompt_finalize_tool from 4 goroutines
// at once, then Finalize, while 8 goroutines keep running constructs
// (some locked around them, some nowait): both return promptly, and
// neither tool sees an event after its finalizer or outside a life.
func TestFinalizeWhileConstructsRun(t *testing.T) {
	requireLivesPerThread(t)
	_, read := verboseLog(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	other := &lifeTool{}
	ompt.RegisterTool("other", other.start)
	Start(fakeRuntime{1})
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				if g%3 == 0 && i%5 == 0 {
					runtime.LockOSThread()
					region(ompt.KindTarget, 0, 1)
					runtime.UnlockOSThread()
				} else if i%7 == 0 {
					nowaitOn(0x77)
				} else {
					region(ompt.KindTarget, 0, 1)
				}
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	var fw sync.WaitGroup
	for range 4 {
		fw.Go(func() { l.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)() })
	}
	fw.Wait()
	t.Logf("finalize_tool took %v", time.Since(t0))
	time.Sleep(50 * time.Millisecond)
	t1 := time.Now()
	finishes(t, 5*time.Second, "Finalize", Finalize)
	t.Logf("Finalize took %v", time.Since(t1))
	assert.Less(t, time.Since(t0), 3*time.Second, "the finalizes")
	stop.Store(true)
	wg.Wait()
	_, errs := l.got()
	assert.Empty(t, errs)
	_, errs = other.got()
	assert.Empty(t, errs)
	evs, _ := split(firstOf(l.got()))
	b, e := 0, 0
	for _, ev := range evs {
		switch ev {
		case "thread_begin":
			b++
		case "thread_end":
			e++
		}
	}
	t.Logf("life: begins %d ends %d; log: %s", b, e, read())
	evs, _ = split(firstOf(other.got()))
	b, e = 0, 0
	for _, ev := range evs {
		switch ev {
		case "thread_begin":
			b++
		case "thread_end":
			e++
		}
	}
	t.Logf("other: begins %d ends %d", b, e)
}

// TestThreadBeginGetsDataNoneAfterLateRegistration: a tool without
// thread callbacks keeps what it stores in thread_data (here from its
// target callback); when it then registers thread_begin and thread_end
// (ompt_set_callback from inside that callback), the next life begins
// with thread_begin's thread_data ompt_data_none, as for any life, not
// with what the tool stored before it had one.
func TestThreadBeginGetsDataNoneAfterLateRegistration(t *testing.T) {
	reset(t, nil)
	var begins []uint64
	var set ompt.SetCallbackFunc
	var get ompt.GetThreadDataFunc
	registered := false
	ompt.RegisterTool("late", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			get = l("ompt_get_thread_data").(ompt.GetThreadDataFunc)
			set = l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackTarget, ompt.TargetCallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64, uintptr) {
				if d := get(); d != nil && d.Value == 0 {
					d.Value = 42
				}
				if !registered {
					registered = true
					set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(_ int, d *ompt.Data) { begins = append(begins, d.Value) }))
					set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(d *ompt.Data) {}))
				}
			}))
			return 1
		}}
	})
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	region(ompt.KindTarget, 0, 1)
	require.NotEmpty(t, begins, "thread_begin after the registration")
	for _, v := range begins {
		assert.Zero(t, v, "thread_begin's thread_data")
	}
}

// TestFinalizeWaitsForAFinalizeToolInProgress: a tool calls
// ompt_finalize_tool on a thread of its own (a C tool's pthread) while
// the program shuts down; Finalize (target.Shutdown) does not return
// before that tool's finalizer has run: the program exits after
// Shutdown, and a finalizer still to come then never runs (the tool's
// output is lost).
func TestFinalizeWaitsForAFinalizeToolInProgress(t *testing.T) {
	requireLivesPerThread(t)
	reset(t, nil)
	var (
		finalized atomic.Bool
		lookup    ompt.LookupFunc
		ending    = make(chan struct{})
		once      sync.Once
	)
	ompt.RegisterTool("self", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			lookup = l
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(int, *ompt.Data) {}))
			set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(*ompt.Data) {
				once.Do(func() { close(ending) })
				time.Sleep(200 * time.Millisecond) // a thread's buffer written out
			}))
			return 1
		}, Finalize: func(*ompt.Data) { finalized.Store(true) }}
	})
	Start(fakeRuntime{1})
	done := make(chan struct{})
	go func() { defer close(done); region(ompt.KindTarget, 0, 1) }() // a life left open
	<-done
	go lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	<-ending // its finalize is under way
	Finalize()
	assert.True(t, finalized.Load(), "the tool's finalizer ran before Finalize returned")
}

// TestSweepVisitThenConstructOnItsThreadRaceFree: a finalize's sweep
// reads the record of each thread it visits (is a life open there,
// whose) and, where it ends none, leaves; a construct that then runs on
// that thread writes the record (a new life). The two are one after the
// other on one OS thread, and the race detector must learn so, or a
// program tested with -race that finalizes a tool while goroutines run
// constructs fails with a report inside gompt (seen in
// TestFinalizeWhileConstructsRun). Here, with one P, a goroutine locked
// to its thread runs a construct (its life ends with it), is visited as
// the sweep visits (endLifeHere), unlocks and exits; another goroutine,
// which never synchronizes with it, then runs a construct on the same
// thread; thirty times over. Meaningful under -race.
func TestSweepVisitThenConstructOnItsThreadRaceFree(t *testing.T) {
	requireLivesPerThread(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	Start(fakeRuntime{1})
	tl := toolsFound[0]
	for range 30 { // the second goroutine does not always get the thread
		done := make(chan struct{}, 2)
		go func() { // the visited thread's goroutine
			runtime.LockOSThread()
			region(ompt.KindTarget, 0, 1) // its life ends with it: the record says no life
			endLifeHere(tl)               // the sweep's visit: ends none
			runtime.UnlockOSThread()
			done <- struct{}{}
		}()
		go func() { // most likely the next goroutine on that thread
			for range 100 {
				runtime.Gosched()
			}
			region(ompt.KindTarget, 0, 1)
			done <- struct{}{}
		}()
		<-done
		<-done
	}
	_, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
}
