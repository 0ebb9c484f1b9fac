package omptrt

import (
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLLVMProfileNeverDispatchesTargetMap: with GOMPT_TOOL_PROFILE=llvm,
// set_callback answers ompt_set_never for target_map and target_map_emi,
// as LLVM's runtime does, registers neither (get_callback finds none)
// and no construct dispatches them (WantsMap is false, so the runtime
// does not even build the lists); every other event answers as before.
// Without it (or with openmp) both answer ompt_set_always and are
// dispatched.
func TestLLVMProfileNeverDispatchesTargetMap(t *testing.T) {
	for _, c := range []struct {
		env  string
		want ompt.SetResult
	}{{"llvm", ompt.SetNever}, {" LLVM ", ompt.SetNever}, {"openmp", ompt.SetAlways}, {"", ompt.SetAlways}} {
		t.Run(c.env, func(t *testing.T) {
			reset(t, map[string]string{"GOMPT_TOOL_PROFILE": c.env})
			maps := 0
			var results [2]ompt.SetResult
			var get ompt.GetCallbackFunc
			var set ompt.SetCallbackFunc
			ompt.RegisterTool("maps", func(int, string) *ompt.StartResult {
				return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
					set = l("ompt_set_callback").(ompt.SetCallbackFunc)
					get = l("ompt_get_callback").(ompt.GetCallbackFunc)
					results[0] = set(ompt.CallbackTargetMap, ompt.TargetMapCallback(func(uint64, []uintptr, []uintptr, []uint64, []uint32, uintptr) { maps++ }))
					results[1] = set(ompt.CallbackTargetMapEMI, ompt.TargetMapEMICallback(func(*ompt.Data, []uintptr, []uintptr, []uint64, []uint32, uintptr) { maps++ }))
					return 1
				}}
			})
			Start(fakeRuntime{1})
			assert.Equal(t, [2]ompt.SetResult{c.want, c.want}, results, "set_callback(target_map), set_callback(target_map_emi)")
			_, ok := get(ompt.CallbackTargetMapEMI)
			assert.Equal(t, c.want == ompt.SetAlways, ok, "get_callback(target_map_emi) finds it")
			assert.Equal(t, ompt.SetAlways, set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, *ompt.Data, *ompt.Data, uintptr) {})), "set_callback(target_emi)")
			tg := TargetBegin(ompt.KindTarget, 0, 1)
			require.NotNil(t, tg)
			assert.Equal(t, c.want == ompt.SetAlways, tg.WantsMap(), "WantsMap")
			tg.Map([]uintptr{1}, []uintptr{2}, []uint64{3}, []uint32{ompt.MapFlagTo})
			tg.End()
			if c.want == ompt.SetAlways {
				assert.Equal(t, 1, maps, "map callbacks (EMI only: both registered)")
			} else {
				assert.Zero(t, maps, "map callbacks")
			}
		})
	}
}

// TestBadProfileIsOpenMP: an unknown GOMPT_TOOL_PROFILE is a one-line
// warning naming what it accepts, and the openmp profile.
func TestBadProfileIsOpenMP(t *testing.T) {
	warn := reset(t, map[string]string{"GOMPT_TOOL_PROFILE": "gnu"})
	var res ompt.SetResult
	ompt.RegisterTool("maps", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			res = l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetMap, ompt.TargetMapCallback(func(uint64, []uintptr, []uintptr, []uint64, []uint32, uintptr) {}))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	assert.Equal(t, ompt.SetAlways, res, "set_callback(target_map)")
	assert.Equal(t, "gompt: GOMPT_TOOL_PROFILE=\"gnu\" is not valid (use openmp or llvm); using openmp\n", warn.String(), "stderr")
}
