//go:build !unix

package host

// bigBacking is Go memory where there is no mmap.
func bigBacking(n uint64) ([]byte, error) { return newBacking(int(n)), nil }

// releasePages has no way to give pages back here; the slot keeps them.
func releasePages([]byte) {}
