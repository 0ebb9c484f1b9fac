package omptrt

import (
	"strings"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeviceEventRules(t *testing.T) {
	reset(t, nil)
	r := &recorder{plain: true}
	ompt.RegisterTool("rec", r.start)
	Start(fakeRuntime{3})
	assert.ErrorContains(t, DeviceInitialize(0, "d0", nil), "nil Device", "nil device")
	_, err := DeviceLoad(1, "k.ptx", 0, 0, 10, 0, 0)
	assert.ErrorContains(t, err, "not initialized", "load before initialize")
	for _, n := range []int{1, 0} {
		require.NoError(t, DeviceInitialize(n, "fake", &clockDevice{procs: 4, rate: 1}))
	}
	assert.ErrorContains(t, DeviceInitialize(1, "fake", &clockDevice{rate: 1}), "already initialized", "second initialize")
	_, err = DeviceLoad(1, "k.ptx", 0, 0, 0, 0, 0)
	assert.ErrorContains(t, err, "bytes must be > 0", "empty image")
	m, err := DeviceLoad(1, "k.ptx", 0, 0, 4096, 0, 0xd00)
	require.NoError(t, err)
	region(ompt.KindTarget, 1, 0x1)
	require.NoError(t, DeviceFinalize(1))
	for _, err := range []error{DeviceFinalize(1), DeviceFinalize(2), DeviceUnload(1, m)} {
		assert.Error(t, err, "finalize twice / of an uninitialized device / unload after finalize must fail")
	}
	_, _, ok := GetDeviceInfo(1)
	assert.False(t, ok, "GetDeviceInfo of a finalized device answered ok")
	Finalize() // finalizes device 0, then the tool
	got := r.got()
	want := []string{
		"device_initialize dev=1 type=fake handle=true lookup=true doc=true",
		"device_initialize dev=0 type=fake handle=true lookup=true doc=true",
		`device_load dev=1 file="k.ptx" bytes=4096 module=#1`,
	}
	diffSeq(t, got[:3], want)
	tail := got[len(got)-3:]
	diffSeq(t, tail, []string{"device_finalize dev=1", "device_finalize dev=0", "finalize"})
}

func TestDeviceEntryPoints(t *testing.T) {
	r := &recorder{}
	withTool(t, r, 1)
	h, l, _ := GetDeviceInfo(0)
	procs := l("ompt_get_device_num_procs").(ompt.GetDeviceNumProcsFunc)
	now := l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)
	tr := l("ompt_translate_time").(ompt.TranslateTimeFunc)
	assert.Equal(t, 8, procs(h), "num procs")
	a := now(h)
	b := now(h)
	assert.NotZero(t, a, "device time not positive")
	assert.GreaterOrEqual(t, b, a, "device time not monotonic")
	assert.Zero(t, procs(nil), "get_device_num_procs: a nil handle must answer 0")
	assert.Zero(t, now(nil), "get_device_time: a nil handle must answer 0")
	assert.Zero(t, tr(nil, 5), "translate_time: a nil handle must answer 0")
	broken := &clockDevice{rate: 1}
	DeviceInitialize(1, "broken", broken)
	hb, _, _ := GetDeviceInfo(1)
	broken.fail = true
	assert.Zero(t, now(hb), "a failing device clock must give 0")
	ta := tr(h, a)
	DeviceFinalize(0)
	assert.Zero(t, procs(h), "get_device_num_procs on a finalized device")
	assert.Zero(t, now(h), "get_device_time on a finalized device")
	assert.Equal(t, ta, tr(h, a), "translate_time on a finalized device against before finalize (the fit stays)")
}

// TestTranslateTime: a device clock with its own epoch and a 100 ppm
// drift maps onto ompt.Wtime; the fit follows the drift as it is refreshed.
func TestTranslateTime(t *testing.T) {
	reset(t, nil)
	dev := &clockDevice{offset: 5e12, rate: 1.0001}
	DeviceInitialize(0, "drift", dev)
	h, _, _ := GetDeviceInfo(0)
	check := func(when string, tol float64) {
		t.Helper()
		h0 := ompt.Wtime()
		d, _ := dev.Now()
		h1 := ompt.Wtime()
		got := translateTime(h, uint64(d))
		assert.GreaterOrEqual(t, got, h0-tol, "%s: translate(%d) against the host bracket [%.9f, %.9f] ± %g", when, d, h0, h1, tol)
		assert.LessOrEqual(t, got, h1+tol, "%s: translate(%d) against the host bracket [%.9f, %.9f] ± %g", when, d, h0, h1, tol)
	}
	check("right after initialize", 1e-3)
	time.Sleep(300 * time.Millisecond) // past refitAfter: the next use refits
	check("after refit", 2e-4)
	devOf(h).mu.Lock()
	slope := devOf(h).fit.slope()
	devOf(h).mu.Unlock()
	assert.InDelta(t, 1.0, slope*1.0001e9, 1e-3, "fitted slope %g s/ns, want %g", slope, 1/1.0001e9)
}

// TestCallbacksCallIntoRuntime: callbacks that call entry points
// (get_target_info, get_device_time, translate_time, get_state,
// set_callback) from inside an event neither deadlock nor fail.
func TestCallbacksCallIntoRuntime(t *testing.T) {
	reset(t, nil)
	var log []string
	var lookup ompt.LookupFunc
	ompt.RegisterTool("reentrant", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			lookup = l
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(n int, _ string, h *ompt.DeviceHandle, dl ompt.LookupFunc, _ string) {
				tm := dl("ompt_get_device_time").(ompt.GetDeviceTimeFunc)(h)
				s := dl("ompt_translate_time").(ompt.TranslateTimeFunc)(h, tm)
				if tm == 0 || s <= 0 || s > ompt.Wtime() {
					log = append(log, "bad time in device_initialize")
				}
				if _, _, ok := GetDeviceInfo(n); !ok {
					log = append(log, "GetDeviceInfo inside device_initialize failed")
				}
			}))
			set(ompt.CallbackTargetDataOp, ompt.TargetDataOpCallback(func(tid, hop uint64, _ ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
				d, itid, ihop, ok := lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)()
				if !ok || itid != tid || ihop != hop || d != 0 {
					log = append(log, "get_target_info wrong in data_op")
				}
				h, dl, _ := GetDeviceInfo(d)
				if dl("ompt_get_device_time").(ompt.GetDeviceTimeFunc)(h) == 0 {
					log = append(log, "device time 0 in data_op")
				}
				// registering from inside a callback takes effect later
				lookup("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetSubmit, ompt.TargetSubmitCallback(func(uint64, uint64, uint32) {
					log = append(log, "submit")
				}))
			}))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	DeviceInitialize(0, "fake", &clockDevice{procs: 1, offset: 77, rate: 1})
	region(ompt.KindTarget, 0, 1) // the construct keeps the dispatcher it began with
	region(ompt.KindTarget, 0, 1)
	assert.Equal(t, "submit", strings.Join(log, ","), "log: want only the one submit of the second construct")
}

// TestDeviceInitializeNegative: a negative device number is refused, and
// a handle gompt did not make opens no device entry point.
func TestDeviceInitializeNegative(t *testing.T) {
	reset(t, nil)
	assert.ErrorContains(t, DeviceInitialize(-1, "tick", newTick(0)), "negative", "DeviceInitialize(-1): want an error about the negative number")
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	h, _, ok := GetDeviceInfo(0)
	require.True(t, ok, "device 0's own handle does not resolve")
	require.NotNil(t, devOf(h), "device 0's own handle does not resolve")
	assert.Nil(t, devOf(&ompt.DeviceHandle{}), "a DeviceHandle gompt did not make resolves to a device")
}
