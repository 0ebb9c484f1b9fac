package omptrt

import (
	"math"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// driftClock is a synthetic device clock driven by a fake host clock:
// its rate runs 80 ppm fast on average, wanders by ±30 ppm with a
// 10-minute period, and its epoch is its own. devAt integrates the rate
// exactly, so every device time has a known true host time.
type driftClock struct {
	host *float64 // the fake host clock, seconds
}

const (
	driftBase   = 80e-6
	driftAmp    = 30e-6
	driftPeriod = 600.0
	driftEpoch  = 7e12 // ns
)

func devAt(h float64) int64 {
	w := 2 * math.Pi / driftPeriod
	// ∫0^h (1 + base + amp·sin(w s)) ds
	return driftEpoch + int64(1e9*(h*(1+driftBase)+driftAmp*(1-math.Cos(w*h))/w))
}

func (c *driftClock) NumProcs() int       { return 1 }
func (c *driftClock) Now() (int64, error) { return devAt(*c.host), nil }

// TestTranslateTimeDrift simulates a two-hour run with a drifting device
// clock: the runtime re-synchronises as device times are used, and every
// device time, translated, stays within 1 us of its true host time,
// including times of records taken long before they are translated.
func TestTranslateTimeDrift(t *testing.T) {
	reset(t, nil)
	host := 0.5
	hostClock = func() float64 { host += 20e-9; return host } // each read takes 20 ns
	clk := &driftClock{host: &host}
	require.NoError(t, DeviceInitialize(0, "drift", clk))
	h, l, _ := GetDeviceInfo(0)
	now := l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)
	tr := l("ompt_translate_time").(ompt.TranslateTimeFunc)
	type point struct {
		dev  uint64
		host float64
	}
	var past []point
	worst := 0.0
	check := func(d uint64, want float64) {
		if e := math.Abs(tr(h, d) - want); e > worst {
			worst = e
		}
	}
	for step := 0; host < 7200; step++ {
		host += 0.1 // the program runs; a tool reads the device clock now and then
		d := now(h)
		want := host // the device read is the last thing get_device_time does
		past = append(past, point{d, want})
		check(d, want) // translated at once
		if step%997 == 0 && len(past) > 10 {
			p := past[len(past)/3] // and a record from long ago
			check(p.dev, p.host)
		}
	}
	for _, p := range past { // at the end of the run, every time taken
		check(p.dev, p.host)
	}
	assert.LessOrEqual(t, worst, 1e-6, "worst translation error in s over a two-hour run with drift")
	devOf(h).mu.Lock()
	n := len(devOf(h).fit.hist)
	devOf(h).mu.Unlock()
	t.Logf("worst error %.3g s over %d device times; %d sync points kept", worst, len(past), n)
}

// slope is the rate used for times after the last sync point .
func (f *clockFit) slope() float64 {
	n := len(f.hist)
	if n < 2 {
		return 1e-9
	}
	return (f.at(f.hist[n-1].dev+1e9) - f.hist[n-1].host) / 1e9
}

// TestTranslateTimeMonotonicAcrossRefits: a record's begin is translated,
// the fit is re-fitted (time passes, the device clock is read again),
// then its end, a few ns later on the device, is translated: the end
// never comes out before the begin, a time translated again gives what
// it gave before, and every translation stays within 1 us of the true
// host time, over a two-hour run with a drifting device clock.
func TestTranslateTimeMonotonicAcrossRefits(t *testing.T) {
	reset(t, nil)
	host := 0.5
	hostClock = func() float64 { host += 20e-9; return host }
	clk := &driftClock{host: &host}
	require.NoError(t, DeviceInitialize(0, "drift", clk))
	h, l, _ := GetDeviceInfo(0)
	now := l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)
	tr := l("ompt_translate_time").(ompt.TranslateTimeFunc)
	refits, worst := 0, 0.0
	for step := 0; host < 7200; step++ {
		host += 0.05 + float64(step%7)*0.03 // the program runs
		begin := now(h)
		want := host
		end := begin + uint64(step%23) // 0 to 22 ns later on the device
		tb := tr(h, begin)
		devOf(h).mu.Lock()
		n0 := len(devOf(h).fit.hist)
		devOf(h).mu.Unlock()
		host += refitAfter + 0.01 // the fit goes stale, and a re-fit comes between the two translations
		now(h)
		devOf(h).mu.Lock()
		if len(devOf(h).fit.hist) != n0 {
			refits++
		}
		devOf(h).mu.Unlock()
		te := tr(h, end)
		require.GreaterOrEqual(t, te, tb, "step %d: end %d (%d ns after begin %d) translated before the begin", step, end, end-begin, begin)
		require.Equal(t, tb, tr(h, begin), "step %d: device time %d translated again after a re-fit", step, begin)
		worst = max(worst, math.Abs(tb-want))
	}
	assert.LessOrEqual(t, worst, 1e-6, "worst translation error in s")
	assert.GreaterOrEqual(t, refits, 100, "re-fits between two translations; the test needs many")
	t.Logf("%d re-fits between a begin and its end; worst error %.3g s", refits, worst)
}

// TestTranslateTimeAfterFinalize: translate_time keeps answering, with
// the fit as it was, after device_finalize (tools translate their last
// records in their finalizers); get_device_time answers 0.
func TestTranslateTimeAfterFinalize(t *testing.T) {
	reset(t, nil)
	require.NoError(t, DeviceInitialize(0, "clock", &clockDevice{procs: 1, rate: 1}))
	h, l, _ := GetDeviceInfo(0)
	now := l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)
	tr := l("ompt_translate_time").(ompt.TranslateTimeFunc)
	d := now(h)
	before := tr(h, d)
	require.NoError(t, DeviceFinalize(0))
	got := tr(h, d)
	assert.Equal(t, before, got, "translate_time after device_finalize")
	assert.NotZero(t, got, "translate_time after device_finalize")
	assert.Zero(t, now(h), "get_device_time after device_finalize")
}

// translate_time at the ends of the device time range: 0 on a device
// whose clock started long before the program (POCL's did: -3266 s) and
// UINT64_MAX (not a device time: clocks are int64 ns) give host times
// that are never negative and keep the map monotonic.
func TestTranslateTimeExtremes(t *testing.T) {
	reset(t, nil)
	dev := &clockDevice{procs: 1, offset: 5000e9, rate: 1}
	require.NoError(t, DeviceInitialize(0, "fake", dev))
	h, _, _ := GetDeviceInfo(0)
	now, _ := dev.Now()
	zero, mid, top := translateTime(h, 0), translateTime(h, uint64(now)), translateTime(h, math.MaxUint64)
	assert.GreaterOrEqual(t, zero, 0.0, "translate_time(0) in s")
	assert.GreaterOrEqual(t, top, 0.0, "translate_time(UINT64_MAX) in s")
	assert.LessOrEqual(t, zero, mid, "not monotonic: translate_time(0) against translate_time(now)")
	assert.LessOrEqual(t, mid, top, "not monotonic: translate_time(now) against translate_time(UINT64_MAX)")
	assert.Equal(t, mid, translateTime(h, uint64(now)), "translating UINT64_MAX moved the fit: now translates differently")
}
