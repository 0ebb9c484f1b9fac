//go:build (amd64 || arm64) && gc

package omptrt

// getg returns the address of the calling goroutine's runtime descriptor:
// the same value for every call on one goroutine while it lives, distinct
// between live goroutines. It is only compared, never dereferenced. One
// load of the thread-local g slot (the technique of petermattis/goid).
func getg() uintptr

// fastGetg is true: getg is one load and allocates nothing.
const fastGetg = true
