//go:build !linux

package omptrt

// procID is ompt_get_proc_id: unknown (-1) on this system.
func procID() int { return -1 }

// threadID is the thread_id of trace records. Without gettid it is the
// identity of the calling goroutine (getg), unique among live goroutines.
func threadID() uint64 { return uint64(getg()) }

// Lives stay one per hold on this system (livesPerThread false): these
// are never called.
const threadFieldsBuild = false

var mainThread uint64

func goroutineLocked() bool { return false }
func threadSelf() uint64    { return 0 }
