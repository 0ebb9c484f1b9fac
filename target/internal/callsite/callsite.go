// Package callsite finds the program's call site of a runtime entry point
// cheaply, for the OMPT code pointer (codeptr_ra) of every event.
// runtime.Callers costs hundreds of nanoseconds; on amd64 and arm64, where
// Go keeps frame pointers, the return address of the calling function's
// frame is one load.
package callsite

import "runtime"

// callers is the portable path: the return address into the caller of the
// function that called Parent.
//
//go:noinline
func callers() uintptr {
	var pcs [1]uintptr
	// 0 Callers, 1 callers, 2 Parent, 3 the entry point, 4 its caller
	if runtime.Callers(4, pcs[:]) == 0 {
		return 0
	}
	return pcs[0]
}
