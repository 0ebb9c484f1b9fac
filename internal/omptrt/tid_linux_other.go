//go:build linux && !((amd64 || arm64) && gc)

package omptrt

// fastTID: no fast path outside the gc toolchain.
func fastTID() (uint64, bool) { return 0, false }
