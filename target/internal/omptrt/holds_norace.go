//go:build !race

package omptrt

// holdCount is a thread's count of the runtime's holds in progress
// (threadRec.holds). Every load and store of it is made by a goroutine
// locked to that thread (runtime.LockOSThread), and one thread's
// goroutines run one after the other on it: plain loads and stores are
// ordered by the thread itself. Without the race detector they cost
// nothing more; an atomic store (XCHG on amd64) would cost two locked
// instructions per construct.
type holdCount struct{ n int32 }

func (h *holdCount) Load() int32   { return h.n }
func (h *holdCount) Store(n int32) { h.n = n }
