package omptrt

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Threads held at once. A construct's goroutine holds its OS thread from
// the construct's begin to its end (hold), and a goroutine that blocks
// while it holds its thread (on the present table's lock, on its device)
// keeps the thread blocked with it: Go starts another thread for the
// other goroutines. Goroutines are cheap, and programs start thousands:
// thousands of constructs blocked at once with a tool attached made as
// many threads (a thread_begin each), and past 10,000 Go ended the program
// ("thread exhaustion"), where the same program without a tool ran on a
// few threads.
//
// Nowait tasks wait for one of a few task threads before they start
// (target's taskThreads). For the constructs and device memory routines
// of the program's own goroutines, the tools core counts the OS threads it
// has seen (addThread): once they pass heldLimit, a construct or routine
// whose goroutine holds no thread yet (not locked to one by its own
// runtime.LockOSThread, not inside another construct: a callback's call
// into gompt) first waits for one of heldLimit tokens, holding nothing,
// and gives it back at its end. Until then a construct pays one plain
// load for it. At most heldLimit constructs that began after that wait
// hold a thread at once, whatever else blocks.
//
// A construct that holds a token never waits for one that waits for a
// token: what it waits for (locks other constructs hold, device work
// already enqueued) needs no construct to begin, and what its callbacks
// begin and wait for takes no token (InConstruct, Unbounded). A
// synchronous construct with depend items, which waits for its
// predecessors inside its scope, gives its token back first
// (DependWait): a predecessor may be a Go task that runs a construct.
// Nowait tasks wait for a task thread instead, only once their
// predecessors have released them.
var (
	heldLimit   = max(64, 4*runtime.GOMAXPROCS(0))
	threadsSeen atomic.Int32 // OS threads with a record
	limitHolds  atomic.Bool  // threadsSeen passed heldLimit
	heldTokens  = make(chan struct{}, heldLimit)
)

// sawThread counts a new thread record (addThread, under threadMu).
func sawThread() {
	if int(threadsSeen.Add(1)) > heldLimit && !limitHolds.Load() {
		limitHolds.Store(true)
	}
}

// admit is called before a synchronous construct or a device memory
// routine takes its scope: true when it waited for a token (and must
// give it back at its end, Target.token).
func admit() bool {
	if !limitHolds.Load() {
		return false
	}
	return admitSlow()
}

func admitSlow() bool {
	if unboundN.Load() != 0 && unboundHere() {
		return false // a Go task started from inside a construct
	}
	if livesPerThread.Load() {
		// the goroutine's lock is read from the runtime: a goroutine
		// inside a construct (a callback's call into gompt) is locked
		// too, by the construct's hold
		if goroutineLocked() {
			return false // its thread is its own already: no thread more
		}
	} else if t, _ := currentTarget(); t != nil {
		return false // inside a construct: it holds one
	}
	heldTokens <- struct{}{}
	return true
}

// InConstruct reports whether the calling goroutine is inside a
// construct or device memory routine: a tool callback calling into gompt.
// Work it starts there and then waits for, inside the construct, must not
// wait for the bounds, which the construct (and others like it) may hold
// meanwhile: the runtime starts a nowait task begun there without waiting
// for a task thread, and runs a Go task begun there Unbounded.
func InConstruct() bool {
	if livesPerThread.Load() && !goroutineLocked() {
		return false // a construct's goroutine is locked (hold)
	}
	t, _ := currentTarget()
	return t != nil
}

// Goroutines running a Go task begun inside a construct (Unbounded):
// their constructs take no token.
var (
	unboundMu sync.Mutex
	unbound   = map[uintptr]int{}
	unboundN  atomic.Int32 // len(unbound), read without the lock
)

// Unbounded runs fn on the calling goroutine with its constructs and
// routines exempt from the held-thread bound: the function of a Go task
// begun inside a construct (InConstruct), which that construct may be
// waiting for while it holds a token.
func Unbounded(fn func() error) error {
	g := getg()
	unboundMu.Lock()
	unbound[g]++
	unboundN.Store(int32(len(unbound)))
	unboundMu.Unlock()
	defer func() { // runtime.Goexit too
		unboundMu.Lock()
		if unbound[g]--; unbound[g] == 0 {
			delete(unbound, g)
		}
		unboundN.Store(int32(len(unbound)))
		unboundMu.Unlock()
	}()
	return fn()
}

func unboundHere() bool {
	unboundMu.Lock()
	defer unboundMu.Unlock()
	return unbound[getg()] > 0
}

// DependWait is called before a synchronous construct with depend items
// waits for its predecessors, inside its scope: it gives back the token
// the construct took, if it took one, since a predecessor may need one
// (a Go task whose function runs a construct). The construct keeps its
// thread through the wait (its target begin came before it): such
// waiters are not bounded, and thousands of them at once still keep a
// thread each, as they did before the bound. Safe on a nil scope.
func (t *Target) DependWait() {
	if t != nil {
		t.giveToken()
	}
}

// giveToken gives back the token of a construct that took one.
func (t *Target) giveToken() {
	if t.token {
		t.token = false
		<-heldTokens
	}
}
