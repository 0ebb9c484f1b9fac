//go:build amd64 || arm64

package callsite

// Parent returns the return address of the function that calls it: a
// program counter inside that function's caller. It must be called
// directly from the entry point whose call site is wanted (not through a
// wrapper that the compiler might not inline).
//
// Implemented in assembly: it reads the saved return address next to the
// caller's frame pointer.
func Parent() uintptr
