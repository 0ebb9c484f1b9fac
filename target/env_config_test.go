package target

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rtmReadConfig reads env as the runtime's start does and returns the
// configuration and the warning lines it printed.
func rtmReadConfig(env map[string]string) (config, []string) {
	var w bytes.Buffer
	old := warnOut
	warnOut = &w
	defer func() { warnOut = old }()
	c := readConfig(func(k string) string { return env[k] })
	var lines []string
	for _, l := range strings.Split(w.String(), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return c, lines
}

// GOMPT_INFO takes every bit set from 0 to 7 (7: mapping, launches and the
// present table, the same as "all") without a warning; 8 and more warn
// and turn the diagnostics off.
func TestGomptInfoTakesEveryBitSetUpToAll(t *testing.T) {
	for _, v := range []string{"0", "1", "6", "7", "0x7", "all", "true"} {
		c, warns := rtmReadConfig(map[string]string{"GOMPT_INFO": v})
		assert.Empty(t, warns, "GOMPT_INFO=%s: warnings", v)
		want := infoAll
		if v != "all" && v != "true" {
			_, err := fmt.Sscanf(v, "%v", &want)
			require.NoError(t, err)
		}
		assert.Equal(t, want, c.info, "GOMPT_INFO=%s: the bit set in use", v)
	}
	for _, v := range []string{"8", "255", "-1"} {
		c, warns := rtmReadConfig(map[string]string{"GOMPT_INFO": v})
		if assert.Len(t, warns, 1, "GOMPT_INFO=%s: want one warning", v) {
			assert.Contains(t, warns[0], `GOMPT_INFO="`+v+`": want a bit set 0..7`, "GOMPT_INFO=%s: the warning", v)
		}
		assert.Zero(t, c.info, "GOMPT_INFO=%s: the bit set in use after the warning", v)
	}
}

// A GOMPT_PLUGINS list that names one plugin twice, also once in the
// wrong case ("HOST,host"), is refused with one warning and the default
// list: a plugin listed twice would number its devices twice.
func TestGomptPluginsRefusesARepeatedPlugin(t *testing.T) {
	for _, v := range []string{"host,host", "host, host", "HOST,host", "nodevice,Host,host"} {
		c, warns := rtmReadConfig(map[string]string{"GOMPT_PLUGINS": v})
		assert.Equal(t, DefaultPlugins(), strings.Join(c.plugins, ","), "GOMPT_PLUGINS=%q: the plugins in use", v)
		if assert.Len(t, warns, 1, "GOMPT_PLUGINS=%q: want one warning", v) {
			assert.Contains(t, warns[0], fmt.Sprintf("GOMPT_PLUGINS=%q: want a comma-separated list of distinct plugin names", v), "GOMPT_PLUGINS=%q: the warning", v)
			assert.True(t, strings.HasSuffix(warns[0], "using "+DefaultPlugins()), "GOMPT_PLUGINS=%q: the warning %q should end with the default used", v, warns[0])
		}
	}
	// A name in the wrong case whose lower case is no plugin either is
	// dropped, like any unknown name.
	c, warns := rtmReadConfig(map[string]string{"GOMPT_PLUGINS": "nodevice,BOGUS"})
	assert.Equal(t, []string{"nodevice"}, c.plugins, "GOMPT_PLUGINS=nodevice,BOGUS: the plugins in use")
	if assert.Len(t, warns, 1, "GOMPT_PLUGINS=nodevice,BOGUS: want one warning") {
		assert.Contains(t, warns[0], `no plugin "BOGUS"; want`, "the warning")
	}
	// Distinct names, one of them in the wrong case, are taken (lower
	// cased) with a warning, each plugin once.
	c, warns = rtmReadConfig(map[string]string{"GOMPT_PLUGINS": "nodevice,HOST"})
	assert.Equal(t, []string{"nodevice", "host"}, c.plugins, "GOMPT_PLUGINS=nodevice,HOST: the plugins in use")
	if assert.Len(t, warns, 1, "GOMPT_PLUGINS=nodevice,HOST: want one warning") {
		assert.Contains(t, warns[0], `no plugin "HOST" (plugin names are lower case)`, "the warning")
		assert.True(t, strings.HasSuffix(warns[0], "using nodevice,host"), "the warning %q should end with the list used", warns[0])
	}
}

// OMP_DISPLAY_ENV prints every ICV with its value: the default device as
// set, the offload policy, the number of devices; verbose adds gompt's
// own settings and each device. The output is pinned line by line.
func TestDisplayEnvPrintsEveryValue(t *testing.T) {
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": "nodevice,host", "OMP_DEFAULT_DEVICE": "1", "GOMPT_INFO": "5"})
	require.NotEmpty(t, r.devs, "no host device: %s", r.why())
	var devLines string
	for i, d := range r.devs {
		devLines += fmt.Sprintf("  [gompt] device %d = 'host:%d' (%s)\n", i, i, d.info.Name)
	}
	head := fmt.Sprintf("\nOPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP = '202111'\n  OMP_DEFAULT_DEVICE = '1'\n  OMP_TARGET_OFFLOAD = 'DEFAULT'\n  OMP_NUM_DEVICES = '%d'\n", len(r.devs))
	const end = "OPENMP DISPLAY ENVIRONMENT END\n"

	var b bytes.Buffer
	r.cfg.displayEnv = "true"
	r.displayEnv(&b)
	assert.Equal(t, head+end, b.String(), "OMP_DISPLAY_ENV=true output")

	b.Reset()
	r.cfg.displayEnv = "verbose"
	r.displayEnv(&b)
	assert.Equal(t, head+"  [gompt] GOMPT_PLUGINS = 'nodevice,host'\n  [gompt] GOMPT_INFO = '5'\n  [gompt] GOMPT_ZERO_COPY = 'off'\n"+devLines+end, b.String(), "OMP_DISPLAY_ENV=verbose output")

	// The default device shown is the ICV's value now.
	SetDefaultDevice(0)
	b.Reset()
	r.displayEnv(&b)
	assert.Contains(t, b.String(), "\n  OMP_DEFAULT_DEVICE = '0'\n", "after SetDefaultDevice(0)")
}

// An error about a device number names every plugin with what it found,
// separated by "; ", and Describe names the device a construct would use.
func TestDeviceErrorsNameEveryPlugin(t *testing.T) {
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": "nodevice,host"})
	require.Len(t, r.devs, 1, "want one host device: %s", r.why())
	const why = "(nodevice: no device: a test plugin with no device; host: 1 device(s))"
	_, err := DeviceNum(5)
	require.ErrorIs(t, err, ErrDevice)
	assert.Equal(t, "target: no such device: device 5 is out of range: 1 offload device(s) 0..0, initial device 1 "+why, err.Error(), "DeviceNum(5)")
	assert.Equal(t, err.Error(), Describe(5), "Describe(5)")
	assert.Equal(t, "device 0 (host:0, "+r.devs[0].info.Name+")", Describe(0), "Describe(0)")
	assert.Equal(t, "the initial device (1, host fallback, OMP_TARGET_OFFLOAD=DEFAULT)", Describe(InitialDevice), "Describe(InitialDevice)")
	assert.Equal(t, "the initial device (1, host fallback, OMP_TARGET_OFFLOAD=DEFAULT)", Describe(1), "Describe(1)")
	SetDefaultDevice(0)
	assert.Equal(t, "device 0 (host:0, "+r.devs[0].info.Name+")", Describe(DefaultDevice), "Describe(DefaultDevice) with default device 0")

	n, err := DeviceNum(5)
	assert.Zero(t, n, "DeviceNum(5)'s device number with its error")

	r = useRuntime(t, map[string]string{"GOMPT_PLUGINS": "nodevice", "OMP_TARGET_OFFLOAD": "mandatory"})
	n, err = DeviceNum(DefaultDevice)
	assert.ErrorIs(t, err, ErrDevice, "DeviceNum(DefaultDevice), mandatory, no device")
	assert.Zero(t, n, "DeviceNum(DefaultDevice)'s device number with its error, mandatory, no device")
	assert.Equal(t, "target: no such device: OMP_TARGET_OFFLOAD=mandatory and no offload device is available (nodevice: no device: a test plugin with no device)", Describe(DefaultDevice), "Describe(DefaultDevice), mandatory, no device")
}

// A one-dimensional shape is N(n) = {n, 1, 1}, the same shape as N2(n, 1);
// a construct given N(0) fails before any device work with an error that
// shows that shape.
func TestOneDimensionalShape(t *testing.T) {
	assert.Equal(t, Shape{Size: [3]int{7, 1, 1}}, N(7), "N(7)")
	assert.Equal(t, N2(7, 1), N(7), "N(7) against N2(7, 1)")
	hostRuntime(t)
	x := make([]float32, 4)
	err := Target(Region{Device: Dev(0), Kernel: kernels.Fill, Shape: N(0), Maps: []Map{From(x)}, Args: []Arg{Int(0), Float32(1), Slice(x)}})
	require.Error(t, err, "a construct with N(0)")
	assert.Contains(t, err.Error(), "size [0 1 1]: dimension 0 must be at least 1", "the error of a construct with N(0)")
	assert.Equal(t, []float32{0, 0, 0, 0}, x, "x after the refused construct")
}

// A device whose first queue cannot be made (the one start-up asks
// whether queues time their operations) still runs its first construct on
// a queue of its own and closes cleanly; and a construct that cannot make
// a queue fails with that error while the device still closes.
func TestFailedNewQueueLeavesDeviceClosable(t *testing.T) {
	r := faultRuntime(t)
	faultPlan.FailNth(faulty.NewQueue, 1, device.CodeOutOfResources)
	queues := faultPlan.Injected(faulty.NewQueue) // counts stay from other tests and runs
	x, y := vecs(16)
	require.NoError(t, Target(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y))), "the first construct, its device's first queue refused")
	assert.Equal(t, 1, faultPlan.Injected(faulty.NewQueue)-queues, "queue failures injected")
	assert.Equal(t, float32(2*5+2*5), y[5], "y[5]")
	require.NoError(t, closeWithin(t, r.devs[0]), "close after the failed queue")

	r = faultRuntime(t)
	d := r.devs[0]
	require.NoError(t, Target(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y))), "the first construct")
	held, err := d.take() // a construct in use elsewhere: the next one needs a new queue
	require.NoError(t, err)
	faultPlan.FailNth(faulty.NewQueue, 1, device.CodeOutOfResources)
	err = Target(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y)))
	assert.True(t, isInjected(err, faulty.NewQueue), "a construct whose queue could not be made returned %v; want the new-queue failure", err)
	require.NoError(t, d.give(held))
	require.NoError(t, closeWithin(t, d), "close after the failed queue")
}

// rtmWaitingInStartOnce counts the goroutines waiting inside a startOnce
// for a start-up to finish.
func rtmWaitingInStartOnce() int {
	n := 0
	for _, g := range strings.Split(rtmStacks(), "\n\n") {
		if strings.Contains(g, "sync.(*Cond).Wait") && strings.Contains(g, "target.(*startOnce).doSlow") {
			n++
		}
	}
	return n
}

// Callers that were already waiting for a start-up when it finished all
// return, each without running its function.
func TestStartOnceReleasesEveryWaiter(t *testing.T) {
	var o startOnce
	release, started := make(chan struct{}), make(chan struct{})
	go o.Do(func() { close(started); <-release })
	<-started
	var wg sync.WaitGroup
	var ran atomic.Int32
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.Do(func() { ran.Add(1) })
		}()
	}
	require.True(t, rtmUntil(func() bool { return rtmWaitingInStartOnce() == 4 }, time.Minute), "the 4 callers never all waited for the start-up")
	close(release)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		require.FailNow(t, "callers waiting for the start-up did not return within 20 s of its end")
	}
	assert.Zero(t, ran.Load(), "functions run by the callers that waited")
}

// GOMPT_ZERO_COPY is off unless set to on (any case, spaces around it);
// anything else warns once and leaves it off.
func TestZeroCopySetting(t *testing.T) {
	for v, want := range map[string]bool{"": false, "off": false, "OFF": false, "on": true, " On ": true} {
		c, warns := rtmReadConfig(map[string]string{"GOMPT_ZERO_COPY": v})
		assert.Empty(t, warns, "GOMPT_ZERO_COPY=%q", v)
		assert.Equal(t, want, c.zeroCopy, "GOMPT_ZERO_COPY=%q", v)
	}
	for _, v := range []string{"1", "true", "yes", "onn"} {
		c, warns := rtmReadConfig(map[string]string{"GOMPT_ZERO_COPY": v})
		assert.Equal(t, []string{`gompt: GOMPT_ZERO_COPY="` + v + `": want off or on; using off`}, warns)
		assert.False(t, c.zeroCopy, "GOMPT_ZERO_COPY=%q", v)
	}
}
