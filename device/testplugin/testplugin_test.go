package testplugin_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/devicetest"
	"github.com/gompt/gompt/device/testplugin"
	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const childEnv = "GOMPT_TESTPLUGIN_CHILD"

// TestMain runs a program on the runtime when started as a child
// (TestNativeRecordsReachACTool): the tools interface starts once per
// process.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child runs saxpy on every offload device (copies in, a kernel, a copy
// out each) and shuts the runtime down, which finalizes the tool.
func child() int {
	code := 0
	for dev := range target.NumDevices() {
		const n = 1000
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i), 1
		}
		err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n),
			Maps: []target.Map{target.To(x), target.ToFrom(y)},
			Args: []target.Arg{target.Int(n), target.Float32(2), target.Slice(x), target.Slice(y)}})
		if err != nil || y[n-1] != 2*(n-1)+1 {
			fmt.Printf("device %d: saxpy: %v, y[%d] = %v\n", dev, err, n-1, y[n-1])
			code = 1
		}
	}
	if err := target.Shutdown(); err != nil {
		fmt.Println("Shutdown:", err)
		code = 1
	}
	return code
}

// devices returns the plugin's devices (GOMPT_TESTPLUGIN_DEVICES unset:
// two).
func devices(t *testing.T) []device.Device {
	p, ok := device.Lookup(testplugin.Name)
	require.True(t, ok, "the plugin is registered by its import alone")
	devs, err := p.Devices()
	require.NoError(t, err)
	return devs
}

// The plugin passes the conformance suite, native records included: its
// own kind, with Start and End the operation's times and its check
// (magic, sequence, operation) passing.
func TestConformance(t *testing.T) {
	devicetest.TestDevice(t, devices(t)[1], kernels.Conformance()...)
}

// What the plugin registered reaches the shared layers without them
// naming it: its place in the default order, its images, its record type
// field by field, its variable.
func TestRegistration(t *testing.T) {
	r, ok := device.Registered(testplugin.Name)
	require.True(t, ok)
	order := device.DefaultOrder()
	assert.Equal(t, testplugin.Name, order[len(order)-1], "the default order ends with the test plugin (Order 40): %v", order)
	assert.Equal(t, []device.ImageKind{device.ImageHost}, r.Images, "images")
	nt, ok := device.NativeTypeOf(r.Native)
	require.True(t, ok, "its native kind is registered")
	assert.Equal(t, "testplugin {Start int64 @0, End int64 @8, Seq uint32 @16, Op uint32 @20, Magic uint64 @24}", nt.String(), "its record, as a tool reads it")
	require.Len(t, r.Env, 1, "its variables")
	assert.Equal(t, testplugin.EnvDevices, r.Env[0].Name)
	assert.True(t, r.Env[0].Refuses("9"), "GOMPT_TESTPLUGIN_DEVICES=9 is refused")
	assert.False(t, r.Env[0].Refuses("3"), "GOMPT_TESTPLUGIN_DEVICES=3 is taken")
	assert.Len(t, devices(t), 2, "devices by default")
}

// needC skips a test that builds a C tool where that cannot be done.
func needC(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a C tool and runs a process")
	}
	why := ""
	switch {
	case !ctoolbuild.Loadable:
		why = "built without cgo"
	case runtime.GOOS != "linux":
		why = "C tools need Linux"
	default:
		if _, err := ctoolbuild.HeaderDir(); err != nil {
			why = err.Error()
		}
	}
	if why != "" {
		require.Empty(t, os.Getenv("CI"), "CI is set but C tools cannot be tested: %s", why)
		t.Skip(why)
	}
}

var reNative = regexp.MustCompile(`^native dev=(\d+) class=(\d+) type="([^"]*)" start=(\d+) end=(\d+) hwid=(\d+) rec_start=(-?\d+) rec_end=(-?\d+) seq=(\d+) op=(\d+) magic=(0x[0-9a-f]+) host_op_id=(\d+)$`)

// The plugin's native records reach a C tool through the runtime
// (GOMPT_PLUGINS=testplugin, OMP_TOOL_LIBRARIES): each copy in, kernel
// and copy out of a construct on each device gives one record, read with
// ompt_get_record_native in the plugin's own layout (its magic, its
// sequence and operation numbers) and agreeing with
// ompt_get_record_abstract (times, the queue as hwid, the type names the
// plugin gave, a kernel's with the kernel's name).
func TestNativeRecordsReachACTool(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	lib := filepath.Join(dir, "libnativetool.so")
	require.NoError(t, ctoolbuild.BuildTool(lib, filepath.Join("testdata", "nativetool.c")))
	outFile := filepath.Join(dir, "native.txt")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "GOMPT_PLUGINS="+testplugin.Name, "OMP_TOOL_LIBRARIES="+lib, "NATIVE_OUTPUT="+outFile)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child:\n%s", out)
	b, err := os.ReadFile(outFile)
	require.NoError(t, err, "the tool's output; child:\n%s", out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Equal(t, "final", lines[len(lines)-1], "the tool was finalized:\n%s", b)
	assert.NotContains(t, string(b), "error", "the tool's output")
	devs := map[string]bool{}
	ops := map[string][]string{} // device: the operations, in order
	for _, l := range lines {
		if strings.HasPrefix(l, "device ") {
			assert.Contains(t, l, `type="testplugin gompt test plugin device" set_trace_native=5 start_trace=1`, "device_initialize: set_trace_native gives ompt_set_always (5)")
			continue
		}
		m := reNative.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		dev := m[1]
		devs[dev] = true
		assert.Equal(t, "2", m[2], "%s: class ompt_record_native_event", l)
		assert.Equal(t, m[4], m[7], "%s: the record's Start is the abstract start_time", l)
		assert.Equal(t, m[5], m[8], "%s: the record's End is the abstract end_time", l)
		start, _ := strconv.ParseUint(m[4], 10, 64)
		end, _ := strconv.ParseUint(m[5], 10, 64)
		assert.True(t, start > 0 && end >= start, "%s: 0 < start <= end", l)
		assert.NotEqual(t, "0", m[6], "%s: hwid, the queue", l)
		assert.Equal(t, fmt.Sprintf("%#x", testplugin.RecordMagic), m[11], "%s: the plugin's magic", l)
		assert.NotEqual(t, "0", m[9], "%s: the operation's sequence number", l)
		assert.NotEqual(t, "0", m[12], "%s: host_op_id", l)
		want := map[string]string{"1": "testplugin copy in", "2": "testplugin copy out", "4": "testplugin kernel: saxpy"}[m[10]]
		assert.Equal(t, want, m[3], "%s: the type name of operation %s", l, m[10])
		ops[dev] = append(ops[dev], m[3])
	}
	assert.Len(t, devs, 2, "devices with native records:\n%s", b)
	for dev, o := range ops {
		assert.Equal(t, []string{"testplugin copy in", "testplugin copy in", "testplugin kernel: saxpy", "testplugin copy out"}, o,
			"device %s: the construct's operations (x and y in, saxpy, y out)", dev)
	}
}

// ompt-devinfo, built with the plugin imported (one file added through
// go build -overlay, as a program adds one import), lists it in the
// default order with its devices, images, record layout and variable.
func TestOmptDevinfoShowsThePlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ompt-devinfo")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		t.Skipf("no go command: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	dir := t.TempDir()
	imp := filepath.Join(dir, "testplugin.go")
	require.NoError(t, os.WriteFile(imp, []byte("package main\n\nimport _ \"github.com/gompt/gompt/device/testplugin\"\n"), 0o644))
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, "cmd", "ompt-devinfo", "zz_testplugin.go"): imp}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644))
	bin := filepath.Join(dir, "ompt-devinfo")
	build := exec.Command(goBin, "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", bin, "./cmd/ompt-devinfo")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)

	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOMPT_PLUGINS=") && !strings.HasPrefix(kv, testplugin.EnvDevices+"=") && !strings.HasPrefix(kv, "OMP_") {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, testplugin.EnvDevices+"=3")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "ompt-devinfo %v:\n%s", args, out)
		return string(out)
	}
	text := run()
	assert.Contains(t, text, "  testplugin loaded, 3 device(s)\n", "the plugin's line (GOMPT_PLUGINS unset: the default order)")
	assert.Contains(t, text, "native record: testplugin {Start int64 @0, End int64 @8, Seq uint32 @16, Op uint32 @20, Magic uint64 @24}\n", "its record")
	assert.Contains(t, text, "environment: GOMPT_TESTPLUGIN_DEVICES\n", "its variable")
	assert.Regexp(t, `\nDevice \d+ \(testplugin:2\):\n  Name: +gompt test plugin device\n`, text, "its third device")
	hostAt, pluginAt := strings.Index(text, "  host "), strings.Index(text, "  testplugin ")
	assert.True(t, hostAt >= 0 && pluginAt > hostAt, "the plugin after host in the default order:\n%s", text)

	var rep struct {
		Plugins []struct {
			Name    string   `json:"name"`
			Devices int      `json:"devices"`
			Images  []string `json:"images"`
			Native  string   `json:"native_record"`
		} `json:"plugins"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("-json")), &rep))
	found := false
	for _, p := range rep.Plugins {
		if p.Name == testplugin.Name {
			found = true
			assert.Equal(t, 3, p.Devices, "-json: devices")
			assert.Equal(t, []string{"host"}, p.Images, "-json: images")
			assert.Contains(t, p.Native, "Magic uint64 @24", "-json: native record")
		}
	}
	assert.True(t, found, "-json lists the plugin: %+v", rep.Plugins)
}
