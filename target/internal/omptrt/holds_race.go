//go:build race

package omptrt

import "sync/atomic"

// holdCount is a thread's count of the runtime's holds in progress
// (threadRec.holds); see holds_norace.go. The race detector does not
// know that goroutines on one OS thread run one after the other, so
// under it the count is atomic: its store and load order one holder's
// writes to the thread's record before the next holder's reads.
type holdCount struct{ n atomic.Int32 }

func (h *holdCount) Load() int32   { return h.n.Load() }
func (h *holdCount) Store(n int32) { h.n.Store(n) }
