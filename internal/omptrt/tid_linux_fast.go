//go:build linux && (amd64 || arm64) && gc

package omptrt

import (
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
			return
		}
	}
}
