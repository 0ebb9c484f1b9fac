//go:build unix

package host

import "golang.org/x/sys/unix"

// bigBacking maps n bytes of anonymous memory: no zeroing now, zero pages
// at first touch, no swap reservation (MAP_NORESERVE: the host devices'
// budget bounds what is touched).
func bigBacking(n uint64) ([]byte, error) {
	return unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
}

// releasePages hands b's pages back to the operating system at once; b
// stays mapped and reads as zeros until written again.
func releasePages(b []byte) {
	_ = unix.Madvise(b, unix.MADV_DONTNEED)
}
