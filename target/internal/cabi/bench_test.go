package cabi

import (
	"os"
	"sync"
	"testing"

	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt"
	"github.com/stretchr/testify/require"
)

var benchOnce sync.Once

// BenchmarkEmptyTargetCToolAll is ompt-bench's empty_target_ctool_all: an
// empty construct (target begin, submit begin and end, target end) with a
// C tool (testdata/empty.c) registered for every target callback in both
// forms (so the EMI forms run, with their C slots), each returning at
// once. Compare with ompt's BenchmarkEmptyTargetNoTool. It is the only
// place the test process itself starts ompt (the tests use child
// processes), so run it alone: go test -run '^$' -bench EmptyTargetCTool.
func BenchmarkEmptyTargetCToolAll(b *testing.B) {
	if !Available {
		b.Skip("built without cgo")
	}
	if _, err := ctoolbuild.HeaderDir(); err != nil {
		b.Skip(err)
	}
	benchOnce.Do(func() {
		lib := b.TempDir() + "/libempty.so"
		require.NoError(b, ctoolbuild.BuildTool(lib, "testdata/empty.c"))
		os.Setenv("OMP_TOOL_LIBRARIES", lib)
		omptrt.Start(fakeRuntime{1})
	})
	require.True(b, omptrt.Enabled(), "the C tool did not start (ompt was started before without it?)")
	b.ReportAllocs()
	for b.Loop() {
		t := omptrt.TargetBegin(ompt.KindTarget, 0, code)
		t.SubmitBegin(1)
		t.SubmitEnd()
		t.End()
	}
}
