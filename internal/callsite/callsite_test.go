package callsite

import (
	"runtime"
	"strings"
	"testing"
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
	if got := funcName(pc); !strings.HasSuffix(got, "TestParentIsTheCallSite") {
		t.Fatalf("Parent gave %#x in %q, want a pc in TestParentIsTheCallSite", pc, got)
	}
	if got := funcName(entryPortable()); !strings.HasSuffix(got, "TestParentIsTheCallSite") {
		t.Fatalf("portable path gave a pc in %q", got)
	}
	// Two call sites give two different pcs.
	a, b := entry(), entry()
	if a == b {
		t.Errorf("two call sites gave the same pc %#x", a)
	}
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
