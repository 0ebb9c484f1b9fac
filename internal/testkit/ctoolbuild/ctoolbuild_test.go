package ctoolbuild

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The newest LLVM's header comes first, by version number, not by name.
func TestLLVMVersionOrder(t *testing.T) {
	paths := []string{
		"/usr/lib/llvm-9/lib/clang/9/include/omp-tools.h",
		"/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h",
		"/usr/lib/llvm-14/lib/clang/14.0.6/include/omp-tools.h",
	}
	newestFirst(paths)
	got := []int{llvmVersion(paths[0]), llvmVersion(paths[1]), llvmVersion(paths[2])}
	assert.True(t, slices.Equal(got, []int{19, 14, 9}), "order %v, want 19, 14, 9", got)
	v := llvmVersion("/usr/include/omp-tools.h")
	assert.Zero(t, v, "llvmVersion of a path outside /usr/lib/llvm-N = %d, want 0", v)
}
