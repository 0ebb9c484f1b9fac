//go:build !((amd64 || arm64) && gc)

package ompt

import (
	"runtime"
	"strconv"
	"strings"
)

// getg returns the calling goroutine's id, parsed from its stack header
// ("goroutine 12 [running]:"). Slow (about a microsecond); used only on
// architectures without the assembly version.
func getg() uintptr {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	n, _ := strconv.ParseUint(s, 10, 64)
	return uintptr(n)
}
