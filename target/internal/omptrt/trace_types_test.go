package omptrt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetTraceOMPTEachType: enabling one record type with set_trace_ompt
// (plain or EMI name) gives records of that type only.
func TestSetTraceOMPTEachType(t *testing.T) {
	for _, c := range []struct {
		ev   ompt.Callback
		kind string
		n    int // records of one traced region
	}{
		{ompt.CallbackTargetSubmit, "kernel", 1}, {ompt.CallbackTargetSubmitEMI, "kernel", 1},
		{ompt.CallbackTarget, "target", 2}, {ompt.CallbackTargetEMI, "target", 2},
		{ompt.CallbackTargetDataOp, "data_op", 4},
	} {
		t.Run(c.ev.String(), func(t *testing.T) {
			tt := &traceTool{types: []ompt.Callback{ompt.CallbackTargetDataOpEMI}}
			clks := withTrace(t, tt, 1)
			h := tt.handle(0)
			set := tt.entry(0, "ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)
			set(h, false, 0) // all off
			require.Equal(t, ompt.SetAlways, set(h, true, c.ev), "set_trace_ompt(%v)", c.ev)
			tracedRegion(0, 1, clks[0], false)
			tt.flush(0)
			lines, _ := tt.got()
			assert.Len(t, lines, c.n, "records, want %s:\n%s", c.kind, strings.Join(lines, "\n"))
			for _, l := range lines {
				assert.Contains(t, l, c.kind, "record of a type not enabled")
			}
		})
	}
}

// TestCallbackNames: every event number the header defines prints by its
// omp-tools.h name, and others as ompt_callback(N).
func TestCallbackNames(t *testing.T) {
	for c, want := range map[ompt.Callback]string{
		ompt.CallbackTarget: "ompt_callback_target", ompt.CallbackTargetSubmitEMI: "ompt_callback_target_submit_emi",
		1: "ompt_callback_thread_begin", 37: "ompt_callback_error",
		0: "ompt_callback(0)", -3: "ompt_callback(-3)", 38: "ompt_callback(38)", 1000: "ompt_callback(1000)",
	} {
		assert.Equal(t, want, c.String(), "Callback(%d).String()", int(c))
	}
}

// TestNativeTypeNamesKept: each native record type a device reports keeps
// its own name, however many types there are.
func TestNativeTypeNamesKept(t *testing.T) {
	idx := map[string]uint32{}
	for i := range 5 {
		name := fmt.Sprintf("test-native-type-%d", i)
		idx[name] = internNative(name)
	}
	for name, i := range idx {
		assert.NotZero(t, i, "native type %q: index 0 is the unnamed type's", name)
		assert.Equal(t, name, nativeName(i), "native type %q has index %d, which names", name, i)
		assert.Equal(t, i, internNative(name), "native type %q interned again: index", name)
	}
	assert.Equal(t, "native", nativeName(internNative("")), "the unnamed native type")
}

// TestNativeTypeNamesLimit: a record's type index is one byte, so
// maxNativeTypes (255) names get indexes of their own, 1 to 255; every
// name after them is the unnamed type's 0 ("native"), and the first 255
// keep theirs.
func TestNativeTypeNamesLimit(t *testing.T) {
	// the names are process-wide: put back those of the other tests
	idx, names := nativeIdx.Load(), nativeNames.Load()
	t.Cleanup(func() { nativeIdx.Store(idx); nativeNames.Store(names) })
	nativeIdx.Store(nil)
	nativeNames.Store(nil)
	got := map[string]uint32{}
	for i := range maxNativeTypes + 10 {
		name := fmt.Sprintf("limit-type-%d", i)
		got[name] = internNative(name)
	}
	for i := range maxNativeTypes + 10 {
		name := fmt.Sprintf("limit-type-%d", i)
		if i < maxNativeTypes {
			assert.Equal(t, uint32(i+1), got[name], "type %q: index", name)
			assert.Equal(t, name, nativeName(got[name]), "type %q: its index names", name)
		} else {
			assert.Zero(t, got[name], "type %q, past the limit: index", name)
		}
	}
}
