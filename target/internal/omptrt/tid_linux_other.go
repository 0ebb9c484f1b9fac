//go:build linux && !((amd64 || arm64) && gc)

package omptrt

// fastTID: no fast path outside the gc toolchain.
func fastTID() (uint64, bool) { return 0, false }

// Lives stay one per hold without the fast path (livesPerThread false):
// these are never called.
const threadFieldsBuild = false

var mainThread uint64

func goroutineLocked() bool { return false }
func threadSelf() uint64    { return 0 }
