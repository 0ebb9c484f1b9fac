package callsite

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

//go:noinline
func entry() uintptr { return Parent() }

// parentPortable stands where Parent stands on other architectures.
//
//go:noinline
func parentPortable() uintptr { return callers() }

//go:noinline
func entryPortable() uintptr { return parentPortable() }

func funcName(pc uintptr) string {
	f := runtime.FuncForPC(pc - 1)
	if f == nil {
		return ""
	}
	return f.Name()
}

func TestParentIsTheCallSite(t *testing.T) {
	pc := entry()
	got := funcName(pc)
	require.Truef(t, strings.HasSuffix(got, "TestParentIsTheCallSite"),
		"Parent gave %#x in %q, want a pc in TestParentIsTheCallSite", pc, got)
	got = funcName(entryPortable())
	require.Truef(t, strings.HasSuffix(got, "TestParentIsTheCallSite"), "portable path gave a pc in %q", got)
	// Two call sites give two different pcs.
	a, b := entry(), entry()
	assert.NotEqual(t, a, b, "two call sites gave the same pc")
}

func BenchmarkParent(b *testing.B) {
	for b.Loop() {
		entry()
	}
}

func BenchmarkCallers(b *testing.B) {
	for b.Loop() {
		entryPortable()
	}
}
