//go:build !((amd64 || arm64) && gc)

package omptrt

import "runtime"

// fastGetg is false: getg reads the stack header and allocates.
const fastGetg = false

// getg returns the calling goroutine's id, parsed from its stack header
// ("goroutine 12 [running]:"). Slow (about a microsecond, one small
// allocation); used only on architectures without the assembly version,
// and only when a tool is active.
func getg() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) {
		return 0
	}
	var id uintptr
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
