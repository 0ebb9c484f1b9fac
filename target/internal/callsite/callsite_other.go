//go:build !amd64 && !arm64

package callsite

// Parent returns the return address of the function that calls it: a
// program counter inside that function's caller.
//
//go:noinline
func Parent() uintptr { return callers() }
