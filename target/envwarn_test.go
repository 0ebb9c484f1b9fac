package target

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noDevicePlugin is a registered plugin that has no device, for tests
// that need a runtime with none.
type noDevicePlugin struct{}

func (noDevicePlugin) Devices() ([]device.Device, error) {
	return nil, device.NoDevice("nodevice", errors.New("a test plugin with no device"))
}

func init() { device.Register("nodevice", noDevicePlugin{}) }

// TestEnvChild is the program TestEveryBadSettingWarns runs, once per
// setting: the runtime starts with the environment it is given, runs one
// construct on the default device and one on device 0, and shuts down.
func TestEnvChild(t *testing.T) {
	if os.Getenv("GOMPT_ENV_CHILD") != "1" {
		t.Skip("run by TestEveryBadSettingWarns")
	}
	for _, dev := range []int{DefaultDevice, 0} {
		x := make([]float32, 4)
		err := Target(Region{Device: Dev(dev), Kernel: kernels.Fill, Shape: N(4), Maps: []Map{From(x)},
			Args: []Arg{Int(4), Float32(1), Slice(x)}})
		if err != nil {
			fmt.Printf("TARGET-ERROR device %d: %v\n", dev, err)
		} else if x[3] != 1 {
			fmt.Printf("WRONG device %d: %v\n", dev, x)
		}
	}
	if err := shutdownWithin(20 * time.Second); err != nil {
		fmt.Printf("SHUTDOWN-ERROR: %v\n", err)
	}
}

// envVars returns the variables of the README's environment table.
func envVars(t *testing.T) []string {
	f, err := os.Open("../README.md")
	require.NoError(t, err)
	defer f.Close()
	row := regexp.MustCompile("^\\| `([A-Z_]+)` \\|")
	var vars []string
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		l := sc.Text()
		switch {
		case l == "## Environment":
			in = true
		case strings.HasPrefix(l, "## "):
			in = false
		case in:
			if m := row.FindStringSubmatch(l); m != nil {
				vars = append(vars, m[1])
			}
		}
	}
	require.GreaterOrEqual(t, len(vars), 10, "variables found in the README's environment table: %v", vars)
	return vars
}

// Every variable of the README's table, set to a bad value, gets one
// warning line on standard error naming it, and the program still runs;
// under OMP_TARGET_OFFLOAD=mandatory an unusable driver library and an
// out-of-range default device are errors that constructs return.
func TestEveryBadSettingWarns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per setting")
	}
	dir := t.TempDir()
	type tc struct {
		env       []string
		want      string // in the one stderr line that names the variable
		targetErr string // in a construct's error ("" for none)
		needCgo   bool
	}
	cases := map[string][]tc{
		"OMP_TARGET_OFFLOAD": {{env: []string{"OMP_TARGET_OFFLOAD=sometimes"}, want: `OMP_TARGET_OFFLOAD="sometimes": want mandatory, disabled or default; using default`}},
		"OMP_DEFAULT_DEVICE": {
			{env: []string{"OMP_DEFAULT_DEVICE=x"}, want: `OMP_DEFAULT_DEVICE="x": want a device number 0 or more; using 0`},
			{env: []string{"OMP_DEFAULT_DEVICE=99"}, want: `OMP_DEFAULT_DEVICE="99": device 99 is out of range`},
			{env: []string{"OMP_DEFAULT_DEVICE=99", "OMP_TARGET_OFFLOAD=mandatory"}, want: `error: OMP_DEFAULT_DEVICE="99": device 99 is out of range`,
				targetErr: "TARGET-ERROR device -3: target: no such device: device 99 is out of range"},
		},
		"OMP_DISPLAY_ENV":    {{env: []string{"OMP_DISPLAY_ENV=loud"}, want: `OMP_DISPLAY_ENV="loud": want true, false or verbose; using false`}},
		"GOMPT_PLUGINS":      {{env: []string{"GOMPT_PLUGINS=bogus"}, want: `GOMPT_PLUGINS="bogus": want a comma-separated list of distinct plugin names from cuda, host, `}, {env: []string{"GOMPT_PLUGINS=HOST"}, want: `GOMPT_PLUGINS="HOST": no plugin "HOST" (plugin names are lower case)`}},
		"GOMPT_HOST_DEVICES": {{env: []string{"GOMPT_HOST_DEVICES=65"}, want: `GOMPT_HOST_DEVICES="65": want a whole number 0..64; using 1`}},
		"GOMPT_HOST_CLOCK":   {{env: []string{"GOMPT_HOST_CLOCK=bogus"}, want: `GOMPT_HOST_CLOCK="bogus": want auto, tsc or monotonic; using auto`}},
		"GOMPT_INFO":         {{env: []string{"GOMPT_INFO=99"}, want: `GOMPT_INFO="99": want a bit set 0..7`}},
		"GOMPT_ZERO_COPY":    {{env: []string{"GOMPT_ZERO_COPY=yes"}, want: `GOMPT_ZERO_COPY="yes": want off or on; using off`}},
		"GOMPT_OPENCL_LIBRARY": {
			{env: []string{"GOMPT_OPENCL_LIBRARY=" + dir + "/libOpenCL.so"}, want: `GOMPT_OPENCL_LIBRARY="` + dir + `/libOpenCL.so": the opencl plugin found no device with it`},
			{env: []string{"GOMPT_OPENCL_LIBRARY=" + dir + "/libOpenCL.so", "OMP_TARGET_OFFLOAD=mandatory"}, want: `error: GOMPT_OPENCL_LIBRARY=`,
				targetErr: "TARGET-ERROR device 0: target: no such device: OMP_TARGET_OFFLOAD=mandatory and GOMPT_OPENCL_LIBRARY="},
		},
		"GOMPT_OPENCL_WAIT":     {{env: []string{"GOMPT_OPENCL_WAIT=spin"}, want: `GOMPT_OPENCL_WAIT="spin": want auto, callback or driver; using auto`, needCgo: true}},
		"GOMPT_OPENCL_CODE":     {{env: []string{"GOMPT_OPENCL_CODE=fast"}, want: `GOMPT_OPENCL_CODE="fast": want auto, cpu or gpu; using auto`, needCgo: true}},
		"GOMPT_OPENCL_STAGING":  {{env: []string{"GOMPT_OPENCL_STAGING=yes"}, want: `GOMPT_OPENCL_STAGING="yes": want auto, on or off; using auto`, needCgo: true}},
		"GOMPT_CUDA_LIBRARY":    {{env: []string{"GOMPT_CUDA_LIBRARY=" + dir + "/libcuda.so"}, want: `GOMPT_CUDA_LIBRARY="` + dir + `/libcuda.so": the cuda plugin found no device with it`}},
		"GOMPT_CUDA_SCHED":      {{env: []string{"GOMPT_CUDA_SCHED=fast"}, want: `GOMPT_CUDA_SCHED="fast": want auto, spin, yield or blocking; using blocking`}},
		"GOMPT_TRACE":           {{env: []string{"GOMPT_TRACE=" + dir + "/no/such/dir/t.json"}, want: "GOMPT_TRACE: open " + dir + "/no/such/dir/t.json"}},
		"OMP_TOOL":              {{env: []string{"OMP_TOOL=maybe"}, want: `OMP_TOOL="maybe" is not valid (use enabled or disabled); using enabled`}},
		"OMP_TOOL_LIBRARIES":    {{env: []string{"OMP_TOOL_LIBRARIES=" + dir + "/libtool.so"}, want: `OMP_TOOL_LIBRARIES="` + dir + `/libtool.so": no library there provided a tool`, needCgo: true}},
		"OMP_TOOL_VERBOSE_INIT": {{env: []string{"OMP_TOOL_VERBOSE_INIT=" + dir + "/no/such/dir/log"}, want: `OMP_TOOL_VERBOSE_INIT="` + dir + `/no/such/dir/log": open`}},
		"GOMPT_TOOL_PROFILE": {
			{env: []string{"GOMPT_TOOL_PROFILE=gnu"}, want: `GOMPT_TOOL_PROFILE="gnu" is not valid (use openmp or llvm); using openmp`},
			{env: []string{"GOMPT_TOOL_PROFILE=gnu", "OMP_TOOL=disabled"}, want: `GOMPT_TOOL_PROFILE="gnu" is not valid (use openmp or llvm); using openmp`},
		},
		"GOMPT_OMPT_VERSION": {
			{env: []string{"GOMPT_OMPT_VERSION=5.1"}, want: `GOMPT_OMPT_VERSION="5.1" is not valid (use 5.2 or 6.0); using 5.2`},
			{env: []string{"GOMPT_OMPT_VERSION=5.1", "OMP_TOOL=disabled"}, want: `GOMPT_OMPT_VERSION="5.1" is not valid (use 5.2 or 6.0); using 5.2`},
			{env: []string{"GOMPT_OMPT_VERSION=6.0", "GOMPT_TOOL_PROFILE=llvm"}, want: `GOMPT_TOOL_PROFILE=llvm follows LLVM's runtime, which reports OpenMP 5.x data-op kinds: GOMPT_OMPT_VERSION="6.0" is ignored`},
		},
	}
	for _, v := range envVars(t) {
		list, ok := cases[v]
		if !assert.True(t, ok, "the README's variable %s has no bad-value case here", v) {
			continue
		}
		for _, c := range list {
			if c.needCgo && !cgoOn {
				continue
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestEnvChild$")
			cmd.Env = append(cleanEnv(cases), "GOMPT_ENV_CHILD=1")
			cmd.Env = append(cmd.Env, c.env...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); !assert.NoError(t, err, "%v: child failed\n%s%s", c.env, stdout.String(), stderr.String()) {
				continue
			}
			var named []string
			for _, l := range strings.Split(stderr.String(), "\n") {
				if strings.HasPrefix(l, "gompt: ") && strings.Contains(l, v) {
					named = append(named, l)
				}
			}
			if assert.Len(t, named, 1, "%v: want one line on stderr naming %s:\n%s", c.env, v, stderr.String()) {
				assert.Contains(t, named[0], c.want, "%v: the line on stderr", c.env)
			}
			out := stdout.String()
			if c.targetErr != "" {
				assert.Contains(t, out, c.targetErr, "%v: want a construct to fail; child printed", c.env)
			} else {
				assert.NotContains(t, out, "TARGET-ERROR", "%v: the program should still run; child printed", c.env)
			}
			assert.NotContains(t, out, "WRONG", "%v: the program should still run; child printed", c.env)
			assert.NotContains(t, out, "SHUTDOWN-ERROR", "%v: the program should still run; child printed", c.env)
		}
	}
}

// cleanEnv is the test's environment without the variables under test.
func cleanEnv[V any](vars map[string]V) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := vars[k]; !ok {
			env = append(env, kv)
		}
	}
	return env
}

// Good settings get no warning: a plugin list of known names, and a
// driver library with which its plugin found a device, start the runtime
// without a line on standard error, and constructs run.
func TestGoodSettingsDoNotWarn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per setting")
	}
	cases := [][]string{
		{"GOMPT_PLUGINS=host"},
		{"GOMPT_PLUGINS=host,nodevice", "GOMPT_HOST_DEVICES=2", "OMP_DEFAULT_DEVICE=1"},
		{"GOMPT_ZERO_COPY=on"},
	}
	if cgoOn {
		for _, lib := range []string{"/usr/lib/x86_64-linux-gnu/libOpenCL.so.1", "/usr/lib64/libOpenCL.so.1"} {
			if _, err := os.Stat(lib); err == nil {
				cases = append(cases, []string{"GOMPT_PLUGINS=opencl,host", "GOMPT_OPENCL_LIBRARY=" + lib})
				break
			}
		}
	}
	vars := map[string]bool{}
	for _, v := range envVars(t) {
		vars[v] = true
	}
	for _, env := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvChild$")
		cmd.Env = append(cleanEnv(vars), "GOMPT_ENV_CHILD=1")
		cmd.Env = append(cmd.Env, env...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%v: child failed\n%s%s", env, stdout.String(), stderr.String())
		assert.NotContains(t, stderr.String(), "gompt:", "%v: a good setting warned", env)
		assert.NotContains(t, stdout.String(), "TARGET-ERROR", "%v: child printed", env)
		assert.NotContains(t, stdout.String(), "WRONG", "%v: child printed", env)
		assert.NotContains(t, stdout.String(), "SHUTDOWN-ERROR", "%v: child printed", env)
	}
}
