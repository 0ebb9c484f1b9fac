//go:build linux && (amd64 || arm64) && gc

package ompt

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
//   - the Go release is one whose layout was checked (mProcidOffset), and
//   - the value read equals gettid on two different OS threads at first
//     use;
// otherwise threadID makes the system call.

// mProcidOffset is the offset of procid in the runtime's m: after g0 (8
// bytes), morebuf (a 6-word gobuf) and divmod (uint32, padded to 8).
const mProcidOffset = 64

// mWord loads the word at offset off of the calling goroutine's m.
func mWord(off uintptr) uint64

var (
	tidOnce sync.Once
	tidFast atomic.Bool
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
	return mWord(mProcidOffset), true
}

// tidLayoutKnown reports whether Go release v (runtime.Version) has g.m
// at offset 48 and m.procid at mProcidOffset: go1.21 through go1.26.
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

// validateTID enables the fast path if the layout is known and the load
// agrees with gettid on this thread and on a second, fresh one.
func validateTID() {
	if !tidLayoutKnown(runtime.Version()) {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if mWord(mProcidOffset) != gettid() {
		return
	}
	// While this goroutine holds its thread, the other one runs on
	// another.
	other := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		other <- mWord(mProcidOffset) == gettid()
	}()
	tidFast.Store(<-other)
}
