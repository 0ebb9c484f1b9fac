package omptrt

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gompt/gompt/internal/testkit/watchdog"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestFinalizeToolFromACallbackEndsTheCallersLifeOnHandOff: the main
// thread's goroutine (locked to it, as a program that runs its OpenMP
// work on the main thread is) calls ompt_finalize_tool from a target
// callback while another goroutine's construct runs on for longer than
// the finalize waits. The finalize returns and leaves the finalizer to
// later; the caller's thread life, which the tool entered there, still
// ends on that thread before the finalizer (implicit_task end,
// thread_end), as it does when the others end in time. Before, it never
// ended: the sweep cannot reach a thread its goroutine keeps locked, and
// the tool never got the ends of the main thread's life.
func TestFinalizeToolFromACallbackEndsTheCallersLifeOnHandOff(t *testing.T) {
	requireLivesPerThread(t)
	reset(t, nil)
	l := &lifeTool{}
	ompt.RegisterTool("life", l.start)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	mainThread = threadID()
	defer func() { mainThread = 0 }()
	Start(fakeRuntime{1})
	me := fmt.Sprint(unix.Gettid())

	bIn, bGo := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // B: a long kernel on another goroutine
		b := TargetBegin(ompt.KindTarget, 0, 0xb)
		close(bIn)
		<-bGo
		b.End()
	})
	<-bIn
	var once sync.Once
	l.inTarget = func(l *lifeTool) {
		once.Do(func() {
			stop := watchdog.Start(10*time.Second, "ompt_finalize_tool from a target callback still waits after 10 s")
			l.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
			stop()
		})
	}
	region(ompt.KindTarget, 0, 0xa) // A, on the main thread
	time.Sleep(50 * time.Millisecond)
	close(bGo)
	wg.Wait()
	stop := watchdog.Start(10*time.Second, "Finalize still waits after 10 s")
	Finalize()
	stop()

	evs, tids := split(firstOf(l.got()))
	require.NotEmpty(t, evs)
	assert.Equal(t, "finalize", evs[len(evs)-1], "the last event: %q", evs)
	var mine []string
	for i, ev := range evs {
		if tids[i] == me {
			mine = append(mine, ev)
		}
	}
	assert.Equal(t, []string{"thread_begin", "implicit_task begin", "target begin", "implicit_task end", "thread_end"}, mine,
		"the main thread's events (all: %q %q)", evs, tids)
	_, errs := l.got()
	assert.Empty(t, errs, "what the tool found wrong")
}

// TestFinalizeWaitsForAFinalizerHandedOffWhileItWaits: two tools call
// ompt_finalize_tool from target callbacks while a construct on another
// goroutine runs on: tool x first, whose finalizer is handed off, then
// tool t. Finalize (target.Shutdown) begins while t's finalize still
// waits, and waits for x's finalizer; t's is handed off meanwhile.
// Finalize must not return before t's finalizer has run too. Before, it
// returned once x's had: it had taken the list of handed-off finalizers
// before t's joined it, and t's was no longer among those in progress.
func TestFinalizeWaitsForAFinalizerHandedOffWhileItWaits(t *testing.T) {
	reset(t, nil)
	var (
		xReturned, tIn, tReturned = make(chan struct{}), make(chan struct{}), make(chan struct{})
		tFinalized                = make(chan struct{})
		bIn, bGo                  = make(chan struct{}), make(chan struct{})
	)
	tool := func(name string, code uintptr, in, returned chan struct{}, fin func()) {
		ompt.RegisterTool(name, func(int, string) *ompt.StartResult {
			var lookup ompt.LookupFunc
			return &ompt.StartResult{
				Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
					lookup = l
					l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _ *ompt.Data, _ uint64, c uintptr) {
						if c != code || ep != ompt.ScopeBegin {
							return
						}
						if in != nil {
							close(in)
						}
						stop := watchdog.Start(10*time.Second, name+": ompt_finalize_tool from a target callback still waits after 10 s")
						lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
						stop()
						close(returned)
					}))
					return 1
				},
				Finalize: func(*ompt.Data) { fin() },
			}
		})
	}
	tool("x", 0xc, nil, xReturned, func() {})
	tool("t", 0xa, tIn, tReturned, func() {
		time.Sleep(300 * time.Millisecond) // writes its report
		close(tFinalized)
	})
	Start(fakeRuntime{1})
	var wg sync.WaitGroup
	wg.Go(func() { // B: runs on until told
		b := TargetBegin(ompt.KindTarget, 0, 0xb)
		close(bIn)
		<-bGo
		b.End()
	})
	<-bIn
	wg.Go(func() { region(ompt.KindTarget, 0, 0xc) }) // x finalizes: handed off after 200 ms
	<-xReturned
	wg.Go(func() { region(ompt.KindTarget, 0, 0xa) }) // t finalizes
	<-tIn
	time.Sleep(20 * time.Millisecond) // t's finalize waits for B
	finalized := make(chan struct{})
	go func() { defer close(finalized); Finalize() }()
	<-tReturned // t's finalizer handed off
	time.Sleep(20 * time.Millisecond)
	close(bGo)
	stop := watchdog.Start(10*time.Second, "Finalize still waits after 10 s")
	<-finalized
	stop()
	select {
	case <-tFinalized:
	default:
		t.Error("Finalize returned before tool t's finalizer had run")
	}
	wg.Wait()
	<-tFinalized
}
