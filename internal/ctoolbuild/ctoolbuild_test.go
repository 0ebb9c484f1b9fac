package ctoolbuild

import (
	"slices"
	"testing"
)

// The newest LLVM's header comes first, by version number, not by name.
func TestLLVMVersionOrder(t *testing.T) {
	paths := []string{
		"/usr/lib/llvm-9/lib/clang/9/include/omp-tools.h",
		"/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h",
		"/usr/lib/llvm-14/lib/clang/14.0.6/include/omp-tools.h",
	}
	newestFirst(paths)
	if got := []int{llvmVersion(paths[0]), llvmVersion(paths[1]), llvmVersion(paths[2])}; !slices.Equal(got, []int{19, 14, 9}) {
		t.Errorf("order %v, want 19, 14, 9", got)
	}
	if v := llvmVersion("/usr/include/omp-tools.h"); v != 0 {
		t.Errorf("llvmVersion of a path outside /usr/lib/llvm-N = %d, want 0", v)
	}
}
