package target

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
)

// Constructs and OS threads with a tool attached. While a tool listens,
// the goroutine that runs a construct holds its OS thread
// (runtime.LockOSThread) from the construct's begin to its end, so that
// a tool's thread-local state and thread ids stay with the construct. A
// goroutine that blocks while it holds its thread (on the present
// table's lock, on its device) keeps the thread blocked with it, and Go
// starts another thread for the rest. Thousands of goroutines (nowait
// tasks, or the program's own) blocked at once each kept a thread, a
// thread_begin each, and past 10,000 Go ended the program ("thread
// exhaustion"), where the same program without a tool ran on five
// threads. A tool in a child process of
// TestConstructsWithAToolHoldFewThreads works in its target and data-op
// callbacks (the present table's lock is held through the data-op
// callbacks, so constructs queue for it) and counts its thread lives.

var heldThreads struct {
	begins atomic.Int64
	deps   atomic.Int64 // dependences callbacks
	work   atomic.Int64 // iterations of the tool's work in each target and data-op callback

	// the nested calls' part: while nest is set, each target begin
	// callback waits until nestN have come (all is closed then), and
	// then allocates and frees device memory from the callback
	nest    atomic.Bool
	nestN   int64
	arrived atomic.Int64
	all     chan struct{}
	nestErr atomic.Pointer[error]

	// the waiting callbacks' part: while waitKind is set, each target end
	// callback (while budget lasts) begins work of that kind and waits
	// for it: waitNowait, a nowait target region; waitGo, a Go task that
	// runs a target region
	waitKind atomic.Int32
	budget   atomic.Int64
}

const (
	waitNowait = 1 + iota
	waitGo
)

// waitingCall is the target end callback's part while waitKind is set.
func waitingCall() {
	h := &heldThreads
	k := h.waitKind.Load()
	if k == 0 || h.budget.Add(-1) < 0 {
		return
	}
	var err error
	switch k {
	case waitNowait:
		err = TargetNowait(scratchCopy()).Wait()
	case waitGo:
		err = Go(func() error { return Target(scratchCopy()) }).Wait()
	}
	if err != nil {
		h.nestErr.CompareAndSwap(nil, &err)
	}
}

// copyRegion is a region that copies b into a on device 0, with extra
// map items (depend items).
func copyRegion(a, b []int32, extra ...Map) Region {
	return Region{Device: Dev(0), Kernel: kernels.Copy32, Shape: N(len(a)),
		Maps: append([]Map{From(a), To(b)}, extra...), Args: []Arg{Int(len(a)), Slice(b), Slice(a)}}
}

// scratchCopy is a copyRegion of 16 words whose result nobody checks
// (the parts that use it look for hangs).
func scratchCopy(extra ...Map) Region {
	return copyRegion(make([]int32, 16), make([]int32, 16), extra...)
}

// heldBound is the runtime's bound on constructs that hold a thread
// (omptrt's heldLimit, held.go), and taskBound its task threads
// (taskThreads).
func heldBound() int { return max(64, 4*runtime.GOMAXPROCS(0)) }
func taskBound() int { return max(8, runtime.GOMAXPROCS(0)) }

// nestedCall is the target begin callback's part while heldThreads.nest is
// set.
func nestedCall() {
	h := &heldThreads
	if h.arrived.Add(1) == h.nestN {
		close(h.all)
	}
	select {
	case <-h.all:
	case <-time.After(20 * time.Second):
		err := fmt.Errorf("only %d of %d target begin callbacks came within 20 s", h.arrived.Load(), h.nestN)
		h.nestErr.CompareAndSwap(nil, &err)
		return
	}
	p, err := AllocMem(64, 0)
	if err == nil {
		err = FreeMem(p, 0)
	}
	if err != nil {
		h.nestErr.CompareAndSwap(nil, &err)
	}
}

func init() {
	if os.Getenv("GOMPT_TEST_HELD_THREADS_TOOL") != "1" {
		return
	}
	var sink atomic.Uint64
	heldThreads.work.Store(3000)
	work := func() { // some microseconds, as a tool that writes a trace takes
		s := uint64(0)
		for i := range heldThreads.work.Load() {
			s += uint64(i) * 7
		}
		sink.Add(s)
	}
	ompt.RegisterTool("held-threads", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(int, *ompt.Data) { heldThreads.begins.Add(1) }))
			set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(*ompt.Data) {}))
			set(ompt.CallbackDependences, ompt.DependencesCallback(func(*ompt.Data, []ompt.Dependence) { heldThreads.deps.Add(1) }))
			set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _, _, _ *ompt.Data, _ uintptr) {
				work()
				if ep == ompt.ScopeBegin && heldThreads.nest.Load() {
					nestedCall()
				}
				if ep == ompt.ScopeEnd {
					waitingCall()
				}
			}))
			set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ompt.Endpoint, *ompt.Data, *ompt.Data, *uint64, ompt.DataOpKind, uintptr, int, uintptr, int, uint64, uintptr) {
				work()
			}))
			return 1
		}}
	})
}

// TestConstructsWithAToolHoldFewThreads: 2,000 nowait target regions
// begun at once by 8 goroutines, with a tool attached, run on a few OS
// threads: the process creates at most a few dozen threads for them, and
// the tool gets at most as many thread_begin (before nowait tasks waited
// for one of a few task threads: some 570 threads for these 2,000 tasks).
// Then 2,000 goroutines' synchronous constructs begun at once make at
// most about twice the runtime's bound on held threads (before: about
// 1,950). Each construct still computes its result. With the bound in
// force, nothing waits forever for it: constructs that wait for a Go
// task's construct through depend items, calls into gompt from
// callbacks, and work begun and waited for in callbacks (nowait tasks,
// Go tasks) all complete.
func TestConstructsWithAToolHoldFewThreads(t *testing.T) {
	if os.Getenv("GOMPT_TEST_HELD_THREADS_TOOL") == "1" {
		heldThreadsChild()
		return
	}
	runToolChild(t, "TestConstructsWithAToolHoldFewThreads", "GOMPT_TEST_HELD_THREADS_TOOL", "held-threads-ok")
}

func heldThreadsChild() {
	fail := childFail
	Wtime() // starts the runtime and the tool
	threads := pprof.Lookup("threadcreate")
	created0, begins0 := threads.Count(), heldThreads.begins.Load()
	const goroutines, each = 8, 250
	type job struct {
		task *Task
		a, b []int32
	}
	var (
		mu   sync.Mutex
		jobs []job
		wg   sync.WaitGroup
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				a, b := make([]int32, 16), make([]int32, 16)
				for k := range b {
					b[k] = int32(g*each + i + k)
				}
				tk := TargetNowait(copyRegion(a, b))
				mu.Lock()
				jobs = append(jobs, job{tk, a, b})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	bad := 0
	for n, j := range jobs {
		err := j.task.Wait()
		switch {
		case err != nil:
			bad++
			fail("task %d: %v", n, err)
		case !slices.Equal(j.a, j.b):
			bad++
			fail("task %d: copied %v, want %v", n, j.a, j.b)
		}
		if bad == 3 {
			fail("(the rest not checked)")
			break
		}
	}
	created, begins := threads.Count()-created0, heldThreads.begins.Load()-begins0
	fmt.Printf("nowait: threads created: %d, thread_begin: %d, GOMAXPROCS %d\n", created, begins, runtime.GOMAXPROCS(0))
	limit := 2*taskBound() + 16 // taskThreads, and Go's own
	if created > limit {
		fail("%d nowait tasks made %d OS threads; want at most %d", len(jobs), created, limit)
	}
	if begins > int64(limit) {
		fail("%d nowait tasks gave the tool %d thread_begin; want at most %d", len(jobs), begins, limit)
	}

	// The program's own goroutines: 2,000 synchronous constructs begun
	// at once. Once the tools have seen heldLimit threads (omptrt's
	// held.go: max(64, 4 GOMAXPROCS)), constructs wait for one of
	// heldLimit tokens before they hold a thread: some heldLimit threads
	// before the wait began and heldLimit after (about 120 here; before
	// the bound, about 1,950).
	// Work ten times longer in the callbacks, so that goroutines queue
	// for the present table's lock while the tool works under it.
	heldThreads.work.Store(30000)
	created0, begins0 = threads.Count(), heldThreads.begins.Load()
	gate := make(chan struct{})
	var failed atomic.Int32
	for range 2000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, b := make([]int32, 16), make([]int32, 16)
			for k := range b {
				b[k] = int32(k + 1)
			}
			<-gate
			err := Target(copyRegion(a, b))
			if (err != nil || !slices.Equal(a, b)) && failed.Add(1) == 1 {
				fail("a synchronous construct: %v, copied %v, want %v", err, a, b)
			}
		}()
	}
	close(gate)
	wg.Wait()
	created, begins = threads.Count()-created0, heldThreads.begins.Load()-begins0
	fmt.Printf("sync: threads created: %d, thread_begin: %d\n", created, begins)
	limit = 2*heldBound() + 32
	if created > limit {
		fail("2000 synchronous constructs made %d OS threads; want at most %d", created, limit)
	}

	// Synchronous constructs that wait for their predecessors do not keep
	// the bound's tokens meanwhile: 2 heldLimit of them wait for a Go
	// task whose function runs a construct of its own, which needs a
	// token. (Had the waiting constructs kept theirs, heldLimit of them
	// would hold every token, the rest would wait before their begin,
	// and the Go task's construct would wait forever.) Their dependences
	// callbacks, dispatched after each one's begin, count those begun.
	heldThreads.work.Store(3000)
	if created < heldBound() {
		fmt.Println("(fewer than heldBound threads so far: the bound may not be in force, and this part may not see it)")
	}
	x := make([]int32, 16)
	start := make(chan struct{})
	pred := Go(func() error {
		<-start
		return Target(scratchCopy())
	}, DependOut(x))
	waiters := 2 * heldBound()
	deps0 := heldThreads.deps.Load()
	errs := make(chan error, waiters)
	for range waiters {
		go func() { errs <- Target(scratchCopy(DependIn(x))) }()
	}
	deadline := time.Now().Add(20 * time.Second)
	for heldThreads.deps.Load()-deps0 < int64(waiters) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := heldThreads.deps.Load() - deps0; n < int64(waiters) {
		fail("only %d of %d synchronous constructs that depend on a Go task began (the others wait for the bound's tokens, which those waiting for their predecessor keep)", n, waiters)
		fmt.Println("held-threads-ok")
		return // the Go task's construct would wait forever
	}
	close(start)
	if err := pred.Wait(); err != nil {
		fail("the Go task's construct: %v", err)
	}
	for range waiters {
		if err := <-errs; err != nil {
			fail("a construct that depends on the Go task: %v", err)
		}
	}

	// A call into gompt from a callback does not wait for a token: its
	// goroutine holds its thread already. heldLimit constructs, all that
	// the tokens let begin, each allocate device memory from their target
	// begin callback once all have come there. (Had the nested calls
	// waited for tokens, all would wait forever.)
	h := &heldThreads
	h.nestN, h.all = int64(heldBound()), make(chan struct{})
	h.nest.Store(true)
	for range 2 * h.nestN {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Target(Region{Device: Dev(0), Kernel: kernels.Empty, Shape: N(1), Args: []Arg{Int(1)}}); err != nil && failed.Add(1) == 1 {
				fail("a construct whose callback allocates: %v", err)
			}
		}()
	}
	wg.Wait()
	h.nest.Store(false)
	if p := h.nestErr.Load(); p != nil {
		fail("a call from a target begin callback: %v", *p)
	}

	// Work a callback begins and waits for does not wait for the bounds,
	// which the construct around the callback may hold: twice as many
	// nowait tasks as there are task threads each wait, in their target
	// end callback, for a nowait task of their own; twice heldLimit
	// synchronous constructs each wait there for a Go task that runs a
	// construct. (Had the work begun there waited for a task thread or a
	// token, all would wait forever.)
	for _, c := range []struct {
		name string
		kind int32
		n    int
	}{
		{"nowait tasks whose callbacks wait for a nowait task", waitNowait, 2 * taskBound()},
		{"synchronous constructs whose callbacks wait for a Go task", waitGo, 2 * heldBound()},
	} {
		h.nestErr.Store(nil)
		h.budget.Store(int64(c.n))
		h.waitKind.Store(c.kind)
		done := make(chan error, c.n)
		for range c.n {
			if c.kind == waitNowait {
				tk := TargetNowait(scratchCopy())
				go func() { done <- tk.Wait() }()
			} else {
				go func() { done <- Target(scratchCopy()) }()
			}
		}
		timeout := time.After(20 * time.Second)
		for i := 0; i < c.n; i++ {
			select {
			case err := <-done:
				if err != nil {
					fail("%s: %v", c.name, err)
				}
			case <-timeout:
				fail("%s: %d of %d not done within 20 s", c.name, c.n-i, c.n)
				fmt.Println("held-threads-ok")
				return // they wait forever
			}
		}
		h.waitKind.Store(0)
		if p := h.nestErr.Load(); p != nil {
			fail("%s: the work a callback waited for: %v", c.name, *p)
		}
	}
	fmt.Println("held-threads-ok")
}
