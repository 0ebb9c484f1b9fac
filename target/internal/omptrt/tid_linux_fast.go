//go:build linux && (amd64 || arm64) && gc

package omptrt

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The Go runtime keeps each OS thread's id (gettid) in its m descriptor
// (m.procid, set when the thread starts; the runtime sends preemption
// signals with it). Reading it costs one load where the gettid system
// call costs ~100 ns, and trace records carry the thread id. The field's
// offset is not part of any API, so the fast path is used only when
//   - the Go release is one where g.m is at offset 48 of g (mWord's
//     assumption: go1.21 through go1.26; g's first fields have not moved
//     in years, but a newer release is not trusted unchecked), and
//   - one of the offsets procid has had (procidOffsets) reads the same
//     value as gettid on two different OS threads at first use;
// otherwise threadID makes the system call. That fallback is right but
// slow, so TestThreadIDIsGettid fails (never skips) on a Go release outside
// the gate or where no offset validates: a Go upgrade must come with a look
// at runtime/runtime2.go and an update here.

// procidOffsets are the offsets of procid in m: after g0 (8 bytes),
// morebuf (a gobuf of 6 words since gobuf.ret went away, 7 before) and
// divmod (uint32, padded to 8).
var procidOffsets = [...]uintptr{64, 72}

// mWord loads the word at offset off of the calling goroutine's m.
func mWord(off uintptr) uint64

var (
	tidOnce   sync.Once
	tidFast   atomic.Bool
	tidOffset uintptr // the validated offset, when tidFast
)

// fastTID returns the calling thread's id from the runtime's m, if that
// was validated.
func fastTID() (uint64, bool) {
	if !tidFast.Load() {
		tidOnce.Do(validateTID)
		if !tidFast.Load() {
			return 0, false
		}
	}
	return mWord(tidOffset), true
}

// tidLayoutKnown reports whether Go release v (runtime.Version) has g.m
// at offset 48: go1.21 through go1.26.
func tidLayoutKnown(v string) bool {
	rest, ok := strings.CutPrefix(v, "go1.")
	if !ok {
		return false // devel builds and anything unexpected
	}
	if i := strings.IndexAny(rest, ".rcbeta-+ "); i >= 0 {
		rest = rest[:i]
	}
	minor, err := strconv.Atoi(rest)
	return err == nil && minor >= 21 && minor <= 26
}

// validateTID enables the fast path if g.m's offset is known and one of
// procidOffsets agrees with gettid on this thread and on a second one.
func validateTID() {
	if !tidLayoutKnown(runtime.Version()) {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := gettid()
	for _, off := range procidOffsets {
		if mWord(off) != tid {
			continue
		}
		// While this goroutine holds its thread, the other one runs on
		// another.
		other := make(chan bool)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			other <- mWord(off) == gettid()
		}()
		if <-other {
			tidOffset = off
			tidFast.Store(true)
			validateLives()
			return
		}
	}
}

// Lives per OS thread (threads.go) need two more facts the runtime keeps
// and exports no API for: which OS thread the caller runs on, beyond its
// id (the kernel reuses ids), and whether the calling goroutine is locked
// to it. The first is m.g0, the descriptor of the thread's own stack,
// made with the thread and dropped when it exits (offset 0 of m on every
// release). The second is g.lockedm, set while a goroutine is locked to
// its thread; its offset has moved between releases, so validateLives
// finds it: the one word of g past g.m that is 0 in a goroutine that was
// never locked, that goroutine's m while it is locked, and 0 again after,
// the same word in two goroutines. Where none or several qualify, lives
// stay one per hold.

// mainThread is the id of the process's main thread (on Linux, the
// process id): Go never ends it, even when a goroutine locked to it
// exits (it parks the thread instead), so a life there stays open for a
// goroutine locked to it too (the main goroutine of a program that
// calls runtime.LockOSThread in init, as GUI and OpenGL programs do).
// A variable: the package's tests set it.
var mainThread = uint64(os.Getpid())

// threadFieldsBuild: this build reads the runtime's fields (a test of
// lives per OS thread fails where they are not found).
const threadFieldsBuild = true

// gWord loads the word at offset off of the calling goroutine's g.
func gWord(off uintptr) uint64

// gScanEnd bounds the search for g.lockedm: g is larger than this on
// every release the layout gate admits.
const gScanEnd = 320

var lockedOffset uintptr // g.lockedm, when livesPerThread

// goroutineLocked reports whether the calling goroutine is locked to its
// OS thread. Valid only when livesPerThread.
func goroutineLocked() bool { return gWord(lockedOffset) != 0 }

// threadSelf is the identity of the calling goroutine's OS thread: its
// m.g0. Valid only when livesPerThread.
func threadSelf() uint64 { return mWord(0) }

// validateLives enables lives per OS thread where g.lockedm is found.
func validateLives() {
	a, b := lockedCandidates(), lockedCandidates()
	if len(a) == 1 && len(b) == 1 && a[0] == b[0] {
		lockedOffset = a[0]
		livesPerThread.Store(true)
	}
}

// lockedCandidates returns, from a new goroutine, the offsets of g past
// g.m that read 0 before runtime.LockOSThread, g.m while locked, and 0
// after runtime.UnlockOSThread.
func lockedCandidates() []uintptr {
	ch := make(chan []uintptr)
	go func() {
		var zero, found, out []uintptr
		for off := uintptr(56); off < gScanEnd; off += 8 {
			if gWord(off) == 0 {
				zero = append(zero, off)
			}
		}
		runtime.LockOSThread()
		m := gWord(48)
		for _, off := range zero {
			if gWord(off) == m {
				found = append(found, off)
			}
		}
		runtime.UnlockOSThread()
		for _, off := range found {
			if gWord(off) == 0 {
				out = append(out, off)
			}
		}
		ch <- out
	}()
	return <-ch
}
