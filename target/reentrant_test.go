package target

import (
	"fmt"
	"os"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
)

// In the child process of TestToolCallsRuntimeFromInitialize, a Go tool
// whose Initialize and device_initialize call back into the runtime.
func init() {
	if os.Getenv("GOMPT_TEST_REENTRANT_TOOL") != "1" {
		return
	}
	ompt.RegisterTool("reentrant", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, initial int, _ *ompt.Data) int {
			if n := NumDevices(); n != 1 || initial != 1 {
				fmt.Printf("FAIL: NumDevices() = %d, initial %d inside Initialize; want 1, 1\n", n, initial)
			}
			// On the initial device: a construct on an offload device here
			// would initialize it while this tool is still starting, so no
			// tool would see its device_initialize.
			x, y := vecs(10)
			if err := Target(saxpyRegion(InitialDevice, len(x), 2, x, y)); err != nil || y[3] != 12 {
				fmt.Printf("FAIL: Target inside Initialize: %v, y[3] = %g\n", err, y[3])
			}
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, _ string, _ *ompt.DeviceHandle, _ ompt.LookupFunc, _ string) {
				x, y := vecs(10)
				err := Target(saxpyRegion(dev, len(x), 2, x, y))
				fmt.Printf("device_initialize %d: Target: %v, y[3] = %g\n", dev, err, y[3])
			}))
			fmt.Println("initialized")
			return 1
		}}
	})
}

// A Go tool whose Initialize calls target.NumDevices and runs a construct,
// and whose device_initialize runs a construct on the device being
// initialized: both work, nothing hangs.
func TestToolCallsRuntimeFromInitialize(t *testing.T) {
	if os.Getenv("GOMPT_TEST_REENTRANT_TOOL") == "1" {
		x, y := vecs(10)
		if err := Target(saxpyRegion(0, len(x), 2, x, y, To(x), ToFrom(y))); err != nil || y[3] != 12 {
			fmt.Printf("FAIL: Target: %v, y[3] = %g\n", err, y[3])
		}
		fmt.Println("reentrant-ok")
		return
	}
	out := runToolChild(t, "TestToolCallsRuntimeFromInitialize", "GOMPT_TEST_REENTRANT_TOOL", "reentrant-ok")
	assert.Contains(t, out, "device_initialize 0: Target: <nil>, y[3] = 12", "child")
}
