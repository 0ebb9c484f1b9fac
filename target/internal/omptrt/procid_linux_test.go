//go:build linux

package omptrt

import (
	"runtime"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestProcIDIsTheCPUItRunsOn: on Linux ompt_get_proc_id is known (getcpu
// never fails there), so it is never -1: it is a CPU of the calling
// thread's affinity set. Pinned to one CPU, the thread reads that CPU.
func TestProcIDIsTheCPUItRunsOn(t *testing.T) {
	reset(t, nil)
	var l ompt.LookupFunc
	ompt.RegisterTool("p", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int { l = lookup; return 1 }}
	})
	Start(fakeRuntime{1})
	require.NotNil(t, l, "the tool was not initialized")
	procID := l("ompt_get_proc_id").(ompt.GetProcIDFunc)

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &set))
	for range 10 {
		p := procID()
		require.GreaterOrEqual(t, p, 0, "get_proc_id on Linux")
		assert.True(t, set.IsSet(p), "get_proc_id = %d, not in the thread's affinity set", p)
	}
	// pinned to each CPU of the set in turn, the thread reads that one
	defer func() { assert.NoError(t, unix.SchedSetaffinity(0, &set), "restore the affinity") }()
	for cpu := range 1024 {
		if !set.IsSet(cpu) {
			continue
		}
		var one unix.CPUSet
		one.Set(cpu)
		require.NoError(t, unix.SchedSetaffinity(0, &one))
		assert.Equal(t, cpu, procID(), "get_proc_id pinned to CPU %d", cpu)
	}
}
