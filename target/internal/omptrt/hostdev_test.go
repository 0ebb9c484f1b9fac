package omptrt

import (
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
)

// TestHostIsInitialDeviceNumInDataOps: the runtime names the host
// ompt.InitialDevice (-1) in its data operations; every tool gets the
// host as the initial_device_num its initialize got (N), in the EMI and
// the non-EMI data-op callbacks alike, and device numbers of offload
// devices as they are.
func TestHostIsInitialDeviceNumInDataOps(t *testing.T) {
	reset(t, nil)
	type op struct{ src, dst int }
	var initials []int
	var emi, plain []op
	mk := func(useEMI bool) ompt.StartFunc {
		return func(int, string) *ompt.StartResult {
			return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, initial int, _ *ompt.Data) int {
				initials = append(initials, initial)
				set := l("ompt_set_callback").(ompt.SetCallbackFunc)
				if useEMI {
					set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(e ompt.Endpoint, _, _ *ompt.Data, _ *uint64, _ ompt.DataOpKind, _ uintptr, sd int, _ uintptr, dd int, _ uint64, _ uintptr) {
						if e == ompt.ScopeEnd {
							emi = append(emi, op{sd, dd})
						}
					}))
				} else {
					set(ompt.CallbackTargetDataOp, ompt.TargetDataOpCallback(func(_, _ uint64, _ ompt.DataOpKind, _ uintptr, sd int, _ uintptr, dd int, _ uint64, _ uintptr) {
						plain = append(plain, op{sd, dd})
					}))
				}
				return 1
			}}
		}
	}
	ompt.RegisterTool("emi", mk(true))
	ompt.RegisterTool("plain", mk(false))
	Start(fakeRuntime{3})
	region(ompt.KindTarget, 1, 1)
	r := RoutineBegin(2)
	r.DataOpBegin(ompt.DataOpTransferFromDevice, 0xd000, 0, 0xe000, 2, 8) // device to device
	r.DataOpEnd(0xe000)
	r.End()
	assert.Equal(t, []int{3, 3}, initials, "initial_device_num")
	want := []op{{3, 1}, {3, 1}, {1, 3}, {1, 3}, {0, 2}} // alloc, to, from, delete; then device 0 to device 2
	assert.Equal(t, want, emi, "EMI data ops: source and destination devices")
	assert.Equal(t, want, plain, "non-EMI data ops: source and destination devices")
}
