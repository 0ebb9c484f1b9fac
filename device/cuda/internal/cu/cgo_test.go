//go:build cgo

package cu

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadNotCUDA(t *testing.T) {
	if !Available {
		t.Skip("built without cgo")
	}
	err := Load("libc.so.6")
	var ms *MissingSymbolError
	require.True(t, errors.As(err, &ms), "Load(libc.so.6) = %v, want a MissingSymbolError for cuInit", err)
	require.Equal(t, "cuInit", ms.Symbol, "Load(libc.so.6) = %v, want a MissingSymbolError for cuInit", err)
	require.Equal(t, "libc.so.6", ms.Library, "Load(libc.so.6) = %v, want a MissingSymbolError for cuInit", err)
	assert.Contains(t, err.Error(), "missing symbol cuInit", "message %q does not name the symbol", err)
}

// TestSymbolVersions guards the ABI: entry points whose unversioned symbol
// takes 32-bit sizes or pointers (cuda.h maps them to _v2 since CUDA 3.2)
// must resolve to the _v2 symbol only, never fall back to the old one.
func TestSymbolVersions(t *testing.T) {
	v2Only := map[string]bool{
		"cuDeviceTotalMem_v2": true, "cuMemGetInfo_v2": true, "cuMemAlloc_v2": true,
		"cuMemFree_v2": true, "cuMemAllocHost_v2": true, "cuMemcpyHtoD_v2": true,
		"cuMemcpyDtoH_v2": true, "cuMemcpyHtoDAsync_v2": true, "cuMemcpyDtoHAsync_v2": true,
		"cuMemcpyDtoDAsync_v2": true,
	}
	seen := map[string]bool{}
	for i, alts := range symbols {
		require.NotEmpty(t, alts, "entry point %d has no symbol", i)
		if v2Only[alts[0]] {
			seen[alts[0]] = true
			assert.Len(t, alts, 1, "%s falls back to %v, whose size arguments are 32-bit", alts[0], alts[1:])
		}
		for _, a := range alts[1:] {
			assert.True(t, strings.HasPrefix(alts[0], a+"_v"), "%v: fallback %s is not an older version of %s", alts, a, alts[0])
		}
	}
	for s := range v2Only {
		assert.True(t, seen[s], "%s is not the preferred symbol of any entry point", s)
	}
}
