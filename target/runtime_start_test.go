package target

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rtmPartialPlugin has the host plugin's devices and also an error, as a
// plugin has when one of its platforms fails and another gives devices.
type rtmPartialPlugin struct{}

func (rtmPartialPlugin) Devices() ([]device.Device, error) {
	hp, ok := device.Lookup(host.Name)
	if !ok {
		return nil, device.NoDevice("rtm-partial", errors.New("host plugin not registered"))
	}
	ds, _ := hp.Devices()
	return ds, errors.New("rtm-partial: a second platform failed")
}

func init() { device.Register("rtm-partial", rtmPartialPlugin{}) }

// rtmStart starts a runtime from env as useRuntime does and returns the
// warnings it printed.
func rtmStart(t *testing.T, env map[string]string) (*runtimeState, string) {
	t.Helper()
	state()
	oldWarn := warnOut
	var w bytes.Buffer
	warnOut = &w
	r := start(func(k string) string { return env[k] })
	warnOut = oldWarn
	setRuntime(t, r)
	return r, w.String()
}

// The environment's values that are right get no warning and are used as
// given: OMP_DEFAULT_DEVICE 0 or more (also the initial device's number),
// OMP_DISPLAY_ENV in any case, a GOMPT_PLUGINS of one plugin.
func TestGoodValuesAreTakenWithoutWarning(t *testing.T) {
	for v, want := range map[string]int{"0": 0, "2": 2, " 3 ": 3, "17": 17} {
		c, warns := rtmReadConfig(map[string]string{"OMP_DEFAULT_DEVICE": v})
		assert.Empty(t, warns, "OMP_DEFAULT_DEVICE=%q: warnings", v)
		assert.Equal(t, want, c.defaultDevice, "OMP_DEFAULT_DEVICE=%q", v)
	}
	for _, v := range []string{"-1", "x", "1.5"} {
		c, warns := rtmReadConfig(map[string]string{"OMP_DEFAULT_DEVICE": v})
		assert.Len(t, warns, 1, "OMP_DEFAULT_DEVICE=%q: warnings", v)
		assert.Zero(t, c.defaultDevice, "OMP_DEFAULT_DEVICE=%q", v)
	}
	for v, want := range map[string]string{"true": "true", "TRUE": "true", " Verbose ": "verbose", "false": "", "": ""} {
		c, warns := rtmReadConfig(map[string]string{"OMP_DISPLAY_ENV": v})
		assert.Empty(t, warns, "OMP_DISPLAY_ENV=%q: warnings", v)
		assert.Equal(t, want, c.displayEnv, "OMP_DISPLAY_ENV=%q", v)
	}
	c, warns := rtmReadConfig(map[string]string{"GOMPT_PLUGINS": " host "})
	assert.Empty(t, warns, "GOMPT_PLUGINS=host: warnings")
	assert.Equal(t, []string{"host"}, c.plugins, "GOMPT_PLUGINS=host")
	c, _ = rtmReadConfig(map[string]string{})
	assert.Equal(t, config{plugins: strings.Split(DefaultPlugins(), ",")}, c, "the configuration of an empty environment")

	// The initial device's number is a device number like the others.
	r, w := rtmStart(t, map[string]string{"GOMPT_PLUGINS": "host", "OMP_DEFAULT_DEVICE": "1"})
	require.Len(t, r.devs, 1, "one host device: %s", r.why())
	assert.Empty(t, w, "OMP_DEFAULT_DEVICE=1, the initial device: warnings")
	assert.True(t, IsInitialDevice(DefaultDevice), "the default device with OMP_DEFAULT_DEVICE=1")
	_, w = rtmStart(t, map[string]string{"GOMPT_PLUGINS": "host", "OMP_DEFAULT_DEVICE": "2"})
	assert.Contains(t, w, `gompt: OMP_DEFAULT_DEVICE="2": device 2 is out of range: 1 offload device(s), 1 the initial device (host: 1 device(s)); using the initial device`, "OMP_DEFAULT_DEVICE=2 with one device: the warning")
}

// Under OMP_TARGET_OFFLOAD=mandatory with a device, constructs run there,
// and the initial device named by its number is the initial device.
func TestMandatoryWithADevice(t *testing.T) {
	r, w := rtmStart(t, map[string]string{"GOMPT_PLUGINS": "host", "OMP_TARGET_OFFLOAD": "mandatory"})
	require.Len(t, r.devs, 1, "one host device: %s", r.why())
	assert.Empty(t, w, "warnings")
	for dev, want := range map[int]int{0: 0, DefaultDevice: 0, 1: 1, InitialDevice: 1} {
		n, err := DeviceNum(dev)
		require.NoError(t, err, "DeviceNum(%d)", dev)
		assert.Equal(t, want, n, "DeviceNum(%d)", dev)
	}
	x, y := ones(32)
	require.NoError(t, Target(saxpyRegion(0, 32, 2, x, y, To(x), ToFrom(y))), "Target on device 0")
	wantAll(t, "y after device 0", y, 3)
	require.NoError(t, Target(saxpyRegion(1, 32, 2, x, y, To(x), ToFrom(y))), "Target on the initial device by its number")
	wantAll(t, "y after the initial device", y, 5)
	n, err := DeviceNum(2)
	assert.ErrorIs(t, err, ErrDevice, "DeviceNum(2)")
	assert.Zero(t, n, "DeviceNum(2)'s device number with its error")
}

// What each plugin found, as Plugins reports it: OMP_TARGET_OFFLOAD=disabled
// asks none for devices; a plugin that found devices has no error, even
// when one of its platforms failed; Devices describes each device.
func TestPluginsAndDevicesReportWhatWasFound(t *testing.T) {
	rtmStart(t, map[string]string{"GOMPT_PLUGINS": "nodevice,host", "OMP_TARGET_OFFLOAD": "disabled"})
	assert.Equal(t, []PluginStatus{
		{Name: "nodevice", Loaded: true, Err: errors.New("OMP_TARGET_OFFLOAD=disabled")},
		{Name: "host", Loaded: true, Err: errors.New("OMP_TARGET_OFFLOAD=disabled")},
	}, Plugins(), "Plugins() with offload disabled")
	assert.Zero(t, NumDevices(), "NumDevices() with offload disabled")

	r, _ := rtmStart(t, map[string]string{"GOMPT_PLUGINS": "nodevice,rtm-partial"})
	require.Len(t, r.devs, 1, "the partial plugin's device: %s", r.why())
	ps := Plugins()
	require.Len(t, ps, 2, "Plugins()")
	assert.Equal(t, PluginStatus{Name: "rtm-partial", Loaded: true, Devices: 1}, ps[1], "a plugin that found a device, one of its platforms failing")
	assert.Equal(t, "nodevice", ps[0].Name, "Plugins()[0]")
	assert.EqualError(t, ps[0].Err, "nodevice: no device: a test plugin with no device", "Plugins()[0].Err")
	assert.Equal(t, []DeviceInfo{{Num: 0, ID: "rtm-partial:0", Plugin: "rtm-partial", Info: r.devs[0].d.Info()}}, Devices(), "Devices()")
	_, err := DeviceNum(1 + 1)
	assert.ErrorContains(t, err, "(nodevice: no device: a test plugin with no device; rtm-partial: 1 device(s))", "DeviceNum(2)")
}

// Shapes: N2(x, y) is {x, y, 1}; a construct given N2(0, 2) fails before
// any device work with an error that shows that shape.
func TestTwoDimensionalShape(t *testing.T) {
	assert.Equal(t, Shape{Size: [3]int{3, 2, 1}}, N2(3, 2), "N2(3, 2)")
	hostRuntime(t)
	x := make([]float32, 4)
	err := Target(Region{Device: Dev(0), Kernel: kernels.Fill, Shape: N2(0, 2), Maps: []Map{From(x)}, Args: []Arg{Int(0), Float32(1), Slice(x)}})
	require.Error(t, err, "a construct with N2(0, 2)")
	assert.Contains(t, err.Error(), "size [0 2 1]: dimension 0 must be at least 1", "the error of a construct with N2(0, 2)")
}

// Under OMP_TARGET_OFFLOAD=mandatory, a driver library named in the
// environment with which its plugin found no device makes every
// construct on an offload device fail, naming the variable; the initial
// device still works.
func TestMandatoryWithAnUnusableLibrary(t *testing.T) {
	r, w := rtmStart(t, map[string]string{"GOMPT_PLUGINS": "cuda,host", "GOMPT_CUDA_LIBRARY": "/nonexistent/libcuda.so", "OMP_TARGET_OFFLOAD": "mandatory"})
	if Plugins()[0].Devices > 0 {
		t.Skip("the cuda plugin has devices here (it reads its library from the process environment)")
	}
	require.Len(t, r.devs, 1, "one host device: %s", r.why())
	assert.Contains(t, w, `gompt: error: GOMPT_CUDA_LIBRARY="/nonexistent/libcuda.so": the cuda plugin found no device with it`, "the warning")
	n, err := DeviceNum(0)
	assert.ErrorIs(t, err, ErrDevice, "DeviceNum(0)")
	assert.ErrorContains(t, err, `OMP_TARGET_OFFLOAD=mandatory and GOMPT_CUDA_LIBRARY="/nonexistent/libcuda.so"`, "DeviceNum(0)")
	assert.Zero(t, n, "DeviceNum(0)'s device number with its error")
	n, err = DeviceNum(InitialDevice)
	assert.NoError(t, err, "DeviceNum(InitialDevice)")
	assert.Equal(t, 1, n, "DeviceNum(InitialDevice)")
}
