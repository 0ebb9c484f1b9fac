package corpus

import (
	"os"
	"os/exec"
	"testing"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/emitc"
	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

const codeEnv = "GOMPT_OPENCL_CODE"

// TestGPUCodeOnCPUDevices runs this package's tests again with
// GOMPT_OPENCL_CODE=gpu. On a CPU OpenCL device (POCL) the generated
// reductions, array reductions and their checks, and the map kernels with
// wide bodies, otherwise take the CPU's paths (opencl.CPUDefine); so the GPU's paths (work-items striding
// together, local atomics and compare-and-swap loops, barriers, the tree
// in local memory) run here, on the device CI has, and not only on a GPU.
func TestGPUCodeOnCPUDevices(t *testing.T) {
	if os.Getenv(codeEnv) == "gpu" {
		// The child: every OpenCL device builds the GPU's code.
		for _, d := range target.Devices() {
			if d.Plugin != "opencl" {
				continue
			}
			require.Equal(t, "gpu ("+codeEnv+")", codeOf(d.Info.Extra), target.Describe(d.Num))
		}
		return
	}
	cpu := false
	for _, d := range target.Devices() {
		if d.Plugin == "opencl" && d.Info.Type == "cpu" {
			cpu = true
			if os.Getenv(codeEnv) == "" {
				// By default a CPU device builds the CPU's code, so
				// that the child's "gpu" says the setting took.
				// The plugin's macro is the one the generated code tests.
				require.Equal(t, "cpu: kernels built with -D"+emitc.CPUDefine+" ("+codeEnv+")", codeOf(d.Info.Extra), target.Describe(d.Num))
			}
		}
	}
	if !cpu {
		t.Skip("no CPU OpenCL device: its GPU paths are what it runs anyway")
	}
	if testing.Short() {
		t.Skip("-short: the second run of the package is skipped")
	}
	args := []string{"-test.count=1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), codeEnv+"=gpu")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the package's tests with %s=gpu:\n%s", codeEnv, out)
	require.Contains(t, string(out), "PASS", "%s", out)
}

// codeOf is the value of an OpenCL device's "code" attribute.
func codeOf(extra []device.Attr) string {
	for _, a := range extra {
		if a.Key == "code" {
			return a.Value
		}
	}
	return "(no code attribute)"
}
