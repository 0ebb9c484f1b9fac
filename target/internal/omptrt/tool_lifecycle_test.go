package omptrt

import (
	"fmt"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTargetDataStartsZero: a tool that stores its own value in a
// construct's target_data (the EMI callbacks' slot) finds it zero again at
// the next construct's begin, though the runtime reuses its records.
func TestTargetDataStartsZero(t *testing.T) {
	reset(t, nil)
	var bad []string
	n := 0
	ompt.RegisterTool("emi", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetEMI, ompt.TargetEMICallback(
				func(_ ompt.TargetKind, e ompt.Endpoint, _ int, _, targetTaskData, targetData *ompt.Data, _ uintptr) {
					if e != ompt.ScopeBegin {
						return
					}
					n++
					if targetData.Value != 0 || targetData.Ptr != nil {
						bad = append(bad, fmt.Sprintf("construct %d begins with target_data %+v", n, *targetData))
					}
					if targetTaskData != nil && targetTaskData.Value != 0 {
						bad = append(bad, fmt.Sprintf("construct %d begins with target_task_data %+v", n, *targetTaskData))
					}
					targetData.Value, targetData.Ptr = uint64(1000+n), "mine"
					if targetTaskData != nil {
						targetTaskData.Value = 7
					}
				}))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	for i := range 5 {
		k := ompt.KindTarget
		if i%2 == 1 {
			k = ompt.KindTargetNowait // has a target task
		}
		region(k, 0, 1)
	}
	require.Equal(t, 5, n, "target begins")
	assert.Empty(t, bad, "what the tool found at each begin")
}

// TestStartAfterFinalizeDoesNothing: once Finalize has run (even before
// Start), Start initializes no tool.
func TestStartAfterFinalizeDoesNothing(t *testing.T) {
	reset(t, nil)
	started := 0
	ompt.RegisterTool("late", func(int, string) *ompt.StartResult {
		started++
		return &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int { return 1 }}
	})
	Finalize()
	Start(fakeRuntime{1})
	assert.Zero(t, started, "tools Start after Finalize started")
}
