//go:build linux && (amd64 || arm64) && gc

package omptrt

import (
	"runtime"
	"sync"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// threadID is the OS thread id on every thread, and with the toolchain
// this module is built with it takes the one-load path.
func TestThreadIDIsGettid(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for range 16 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range 100 {
				if got, want := threadID(), gettid(); got != want {
					errs <- "threadID differs from gettid"
					return
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	close(errs)
	var failed []string
	for e := range errs {
		failed = append(failed, e)
	}
	require.Empty(t, failed, "what the goroutines found")
	// Not a skip: a Go release this file does not know, or one whose m
	// moved procid, must fail here rather than quietly cost every trace
	// record a system call (or, were the gate dropped, read a wrong word).
	require.True(t, tidLayoutKnown(runtime.Version()), "%s: g.m's offset is not known for this release; check g.m (48) and m.procid (%v) in runtime/runtime2.go, then extend tidLayoutKnown and procidOffsets (tid_linux_fast.go)",
		runtime.Version(), procidOffsets)
	require.True(t, tidFast.Load(), "%s: no offset in %v reads m.procid (gettid); the runtime's m changed: update procidOffsets (tid_linux_fast.go)",
		runtime.Version(), procidOffsets)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.Equal(t, gettid(), mWord(tidOffset), "mWord(%d) does not read this thread's id", tidOffset)
}

func TestTIDLayoutKnown(t *testing.T) {
	for v, want := range map[string]bool{
		"go1.21.0": true, "go1.26.8": true, "go1.26rc1": true, "go1.22": true,
		"go1.20.14": false, "go1.27.0": false, "devel go1.27-abc": false, "": false, "go2.0": false,
		"go1.+22": false, "go1.": false, // malformed: no minor number before the separator
	} {
		assert.Equal(t, want, tidLayoutKnown(v), "tidLayoutKnown(%q)", v)
	}
}

// The runtime fields lives per OS thread read are found on the toolchain
// this module is built with, and read what they should: goroutineLocked
// is false in a goroutine never locked, true while it is locked
// (whoever locked it) and false after; threadSelf is one value for one
// OS thread and differs between two threads alive at once. Not a skip:
// without them every construct is a life (four more callbacks each for
// a tool with thread callbacks), so a Go release that moved g.lockedm
// must fail here.
func TestThreadLifeFieldsFound(t *testing.T) {
	threadID() // validates
	require.True(t, livesPerThread.Load(), "%s: no single word of g reads g.lockedm; check runtime2.go and validateLives (tid_linux_fast.go)", runtime.Version())
	type seen struct {
		before, locked, after bool
		self1, self2          uint64
	}
	ch := make(chan seen)
	release := make(chan struct{})
	for range 2 {
		go func() {
			var s seen
			s.before = goroutineLocked()
			runtime.LockOSThread()
			s.locked = goroutineLocked()
			s.self1 = threadSelf()
			runtime.Gosched()
			s.self2 = threadSelf()
			ch <- s
			<-release // both threads alive at once
			runtime.UnlockOSThread()
			s.after = goroutineLocked()
			ch <- s
		}()
	}
	a, b := <-ch, <-ch
	close(release)
	a2, b2 := <-ch, <-ch
	for _, s := range []seen{a2, b2} {
		assert.False(t, s.before, "goroutineLocked in a goroutine never locked")
		assert.True(t, s.locked, "goroutineLocked while locked")
		assert.False(t, s.after, "goroutineLocked after UnlockOSThread")
		assert.Equal(t, s.self1, s.self2, "threadSelf of one locked thread, twice")
		assert.NotZero(t, s.self1, "threadSelf")
	}
	assert.NotEqual(t, a.self1, b.self1, "threadSelf of two threads alive at once")
}

// TestStartAndTheFirstThreadIDGiveTheirOSThreadBack: Start holds its
// goroutine's OS thread while the tools start, and the first thread id
// read in the process (which checks the runtime's layout on its thread)
// holds it while it checks; both give it back: a goroutine that ran them
// and returns leaves its thread alive.
func TestStartAndTheFirstThreadIDGiveTheirOSThreadBack(t *testing.T) {
	reset(t, nil)
	r := &recorder{emi: true}
	ompt.RegisterTool("rec", r.start)
	run := func(name string, f func()) { t.Helper(); assertThreadKept(t, name, f) }
	run("Start", func() { Start(fakeRuntime{1}) })
	require.NotNil(t, r.lookup, "the tool was not initialized")
	// as if no thread id had been read yet: tidOnce is only read once
	// tidFast is seen false (after these stores)
	fast := tidFast.Load()
	tidOnce = sync.Once{}
	tidFast.Store(false)
	t.Cleanup(func() { tidFast.Store(fast) })
	run("the first thread id", func() { threadID() })
	assert.True(t, tidFast.Load(), "the fast path was not validated again")
}

// TestThreadIDWithoutTheFastPath: where the runtime's copy of the thread
// id could not be validated (another Go release), threadID makes the
// gettid system call: the same id.
func TestThreadIDWithoutTheFastPath(t *testing.T) {
	threadID() // the check has run
	fast := tidFast.Load()
	tidFast.Store(false)
	t.Cleanup(func() { tidFast.Store(fast) })
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	assert.Equal(t, gettid(), threadID(), "thread id without the fast path")
}
