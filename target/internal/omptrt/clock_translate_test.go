package omptrt

import (
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTranslateTimeAfterClockFailedAtInit: a device whose clock cannot be
// read when it is initialized (the first sync point is missing) still
// translates its times once the clock answers: translate_time and
// get_device_time take the first sync point then, and the time comes out
// next to the host's.
func TestTranslateTimeAfterClockFailedAtInit(t *testing.T) {
	reset(t, nil)
	dev := &clockDevice{procs: 1, rate: 1, fail: true}
	require.NoError(t, DeviceInitialize(0, "flaky", dev))
	h, l, _ := GetDeviceInfo(0)
	tr := l("ompt_translate_time").(ompt.TranslateTimeFunc)
	now := l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)
	assert.Zero(t, now(h), "get_device_time with a broken clock")
	assert.Zero(t, tr(h, 5e9), "translate_time with a broken clock (no sync point yet)")
	dev.fail = false
	// a program that has run for an hour: a translation of 0 (no sync
	// point) is far from the host's now
	hostClock = func() float64 { return ompt.Wtime() + 3600 }
	t.Cleanup(func() { hostClock = ompt.Wtime })
	d, _ := dev.Now()
	host := hostClock()
	assert.InDelta(t, host, tr(h, uint64(d)), 0.05, "translate_time of the device's now, once its clock answers, against the host's now")
	assert.NotZero(t, now(h), "get_device_time once the clock answers")
}

// dyadicClock reads fixed times: host times the fake host clock gives
// (the same at both ends of the bracket, a width of 0) and a device time.
type dyadicClock struct{ dev int64 }

func (c *dyadicClock) NumProcs() int       { return 1 }
func (c *dyadicClock) Now() (int64, error) { return c.dev, nil }

// TestClockFitBoundaries pins the fit's rules at their exact edges, with
// times chosen so the arithmetic is exact (a rate of 2^-30 s per device
// ns): a reading whose host bracket has no width is used; a reading
// exactly mergeTol off the extrapolated line is on it (not added); a
// reading at exactly the host time pinned for an already translated
// device time is refused (the history must rise on both clocks).
func TestClockFitBoundaries(t *testing.T) {
	t.Cleanup(func() { hostClock = ompt.Wtime })
	const span = 1 << 30
	base := func() *clockFit {
		// a rate of 2^-30 s/ns; device time 2^31 extrapolates to host 0
		return &clockFit{hist: []sample{{dev: 0, host: -2}, {dev: span, host: -1}}}
	}
	at := func(h float64) { hostClock = func() float64 { return h } }

	// a bracket of width 0 (a coarse host clock) is a reading like any other
	var f clockFit
	at(5)
	f.resample(&dyadicClock{dev: 100})
	assert.Equal(t, []sample{{dev: 100, host: 5}}, f.hist, "a reading bracketed by two equal host times")

	// exactly mergeTol off the line: the fit already says it
	g := base()
	at(mergeTol)
	require.Zero(t, g.at(2*span), "setup: the line at 2^31")
	g.resample(&dyadicClock{dev: 2 * span})
	assert.Len(t, g.hist, 2, "a reading exactly mergeTol (%g s) off the line was added", mergeTol)

	// device time 2^31 was translated (host 0 on the old line); a reading
	// later on the device at host 0 exactly would not rise on the host
	// clock after the pinned point: the fit stays as it is
	g = base()
	g.hi = 2 * span
	at(0)
	g.resample(&dyadicClock{dev: 2*span + span/2})
	for i := 1; i < len(g.hist); i++ {
		assert.Greater(t, g.hist[i].dev, g.hist[i-1].dev, "sync points %d and %d do not rise on the device clock: %+v", i-1, i, g.hist)
		assert.Greater(t, g.hist[i].host, g.hist[i-1].host, "sync points %d and %d do not rise on the host clock: %+v", i-1, i, g.hist)
	}
	assert.Len(t, g.hist, 2, "a reading at the pinned host time changed the fit")
	// the time translated before keeps its value
	assert.Zero(t, g.at(2*span), "device time 2^31 translated to 0 before")

	// a reading at exactly the latest translated device time: refused too
	g = base()
	g.hi = 2*span + span/2 // translated to host 0.5 on the line
	at(1)
	g.resample(&dyadicClock{dev: 2*span + span/2})
	assert.Len(t, g.hist, 2, "a reading at the latest translated device time changed the fit")
}

// TestSyncPointsTranslateExactly: a device time that is a sync point's
// translates to that point's host time to the bit (a pinned point is a
// time translated before a re-fit: it must keep its value exactly), for
// the first, the inner and the last points of a history. The middle
// point's host time is one that interpolating from the point before
// rounds off by an ulp.
func TestSyncPointsTranslateExactly(t *testing.T) {
	f := clockFit{hist: []sample{
		{dev: 5515000000000, host: 0.04},
		{dev: 5515619367029, host: 0.048091362740610308},
		{dev: 5515807145356, host: 0.23590265782367548},
	}}
	for n := 2; n <= 3; n++ { // the last point as the end of the history, then as an inner one
		g := clockFit{hist: f.hist[:n]}
		for i, p := range g.hist {
			assert.Equal(t, p.host, g.at(p.dev), "history of %d: sync point %d (device %d) must translate to its host time", n, i, p.dev)
		}
	}
	g := clockFit{hist: f.hist[1:]}
	assert.Equal(t, f.hist[2].host, g.at(f.hist[2].dev), "the last sync point's translation")
}

// TestClockRateBounds: a span's rate is used to extrapolate only when it
// is a sane device clock's, strictly between 0.5 and 2 device ns per host
// ns (1 ns per ns otherwise), also for the shortest span (1 ns). Times
// before the first sync point are extrapolated with the first span's.
func TestClockRateBounds(t *testing.T) {
	for _, c := range []struct {
		name     string
		dev1     int64
		host1    float64
		wantRate float64
	}{
		{"2x fast, exactly", 2, 1e-9, 1e-9},        // 0.5e-9 s/ns: not strictly inside
		{"2x slow, exactly", 1, 2e-9, 1e-9},        // 2e-9 s/ns: not strictly inside
		{"3x fast", 3e7, 0.01, 1e-9},               // 0.33e-9 s/ns
		{"1.5x slow over 1 ns", 1, 1.5e-9, 1.5e-9}, // used
		{"1.25x slow", 4e7, 0.05, 1.25e-9},         // used
	} {
		f := clockFit{hist: []sample{{dev: 0, host: 0}, {dev: c.dev1, host: c.host1}}}
		assert.InDelta(t, -1000*c.wantRate, f.at(-1000), 1e-18, "%s: device time -1000 ns extrapolated (rate %g s/ns)", c.name, c.wantRate)
	}
}

// seqClock is a device clock that reads the given times in turn.
type seqClock struct {
	t []int64
	i int
}

func (c *seqClock) NumProcs() int { return 1 }
func (c *seqClock) Now() (int64, error) {
	v := c.t[c.i%len(c.t)]
	c.i++
	return v, nil
}

// TestClockFitReadings: of three readings the one with the narrowest
// host bracket is taken (its midpoint as the host time), not the first;
// a reading that is not later than the last sync point on both clocks is
// ignored; a reading on the line the fit already says is not added.
func TestClockFitReadings(t *testing.T) {
	t.Cleanup(func() { hostClock = ompt.Wtime })
	hosts := func(hs ...float64) {
		i := 0
		hostClock = func() float64 { v := hs[i%len(hs)]; i++; return v }
	}

	var f clockFit
	hosts(1.0, 1.5, 2.0, 2.25, 3.0, 4.0) // brackets of 0.5, 0.25 and 1 s
	f.resample(&seqClock{t: []int64{100, 200, 300}})
	assert.Equal(t, []sample{{dev: 200, host: 2.125}}, f.hist, "the narrowest of three readings")
	f = clockFit{}
	hosts(1.0, 1.0, 2.0, 2.5, 3.0, 3.25) // brackets of 0 (a coarse host clock), 0.5 and 0.25 s
	f.resample(&seqClock{t: []int64{100, 200, 300}})
	assert.Equal(t, []sample{{dev: 100, host: 1.0}}, f.hist, "of three readings, the first, whose bracket has no width")

	base := func() *clockFit { return &clockFit{hist: []sample{{dev: 0, host: 1}, {dev: 1 << 30, host: 2}}} }
	for _, c := range []struct {
		name string
		dev  int64
		host float64
	}{
		{"later on the device, not on the host", 2 << 30, 2},
		{"later on the host, not on the device", 1 << 30, 3},
	} {
		g := base()
		hosts(c.host)
		g.resample(&seqClock{t: []int64{c.dev}})
		assert.Len(t, g.hist, 2, "%s: the reading changed the fit: %+v", c.name, g.hist)
	}

	one := &clockFit{hist: []sample{{dev: 1000, host: 5}}} // a history of one point
	hosts(6)
	one.resample(&seqClock{t: []int64{500}})
	assert.Equal(t, []sample{{dev: 1000, host: 5}}, one.hist, "a reading earlier on the device than the only sync point changed the fit")

	g := base() // a rate of 2^-30 s/ns: device 2^31 is host 3 on the line
	hosts(3)
	require.Equal(t, 3.0, g.at(2<<30), "setup: the line at 2^31")
	g.resample(&seqClock{t: []int64{2 << 30}})
	assert.Len(t, g.hist, 2, "a reading on the line was added: %+v", g.hist)
}

// fakeHostClock replaces the host clock with one the test sets, for the
// rest of the test.
// translator initializes device 0 with clock dev and returns its
// ompt_translate_time.
func translator(t *testing.T, typ string, dev Device) func(uint64) float64 {
	t.Helper()
	require.NoError(t, DeviceInitialize(0, typ, dev))
	h, l, ok := GetDeviceInfo(0)
	require.True(t, ok, "GetDeviceInfo")
	tr := l("ompt_translate_time").(ompt.TranslateTimeFunc)
	return func(d uint64) float64 { return tr(h, d) }
}

func fakeHostClock(t *testing.T, at float64) *float64 {
	t.Helper()
	now := at
	hostClock = func() float64 { return now }
	t.Cleanup(func() { hostClock = ompt.Wtime })
	return &now
}

// fastClock is a device clock that runs at rate device ns per host ns of
// the (fake) host clock, from 0.
type fastClock struct{ rate float64 }

func (c *fastClock) NumProcs() int       { return 1 }
func (c *fastClock) Now() (int64, error) { return int64(hostClock() * 1e9 * c.rate), nil }

// TestTranslateTimeOfAFastDeviceClock: a device whose clock runs at 1.5
// device ns per host ns. A time read when the device was initialized
// still translates to the host time of that moment long after (the fit
// has a sync point from the initialization, not only from the first
// translation), and a time read now translates to now (translate_time
// takes a new sync point when the last one is old, rather than
// extrapolating one point with a nominal rate over 100 s).
func TestTranslateTimeOfAFastDeviceClock(t *testing.T) {
	reset(t, nil)
	now := fakeHostClock(t, 100)
	dev := &fastClock{rate: 1.5}
	tr := translator(t, "fast", dev)
	atInit, _ := dev.Now()
	*now = 200
	atLater, _ := dev.Now()
	assert.InDelta(t, 200, tr(uint64(atLater)), 1e-6, "translate_time of a device time read 100 s after the device's initialization, at that time")
	assert.InDelta(t, 100, tr(uint64(atInit)), 1e-6, "translate_time of a device time read at the device's initialization, 100 s later")
}

// TestTranslateTimeWithinRefitAfter: within refitAfter of the last sync
// point the device clock is not read again: a device time is translated
// on the line of the last sync points, even if the device's clock has
// since changed its rate (a change that shows only at the next sync
// point); once refitAfter has passed, the new reading is used.
func TestTranslateTimeWithinRefitAfter(t *testing.T) {
	reset(t, nil)
	now := fakeHostClock(t, 10)
	dev := &dyadicClock{dev: 10e9}
	tr := translator(t, "drifting", dev)
	*now, dev.dev = 11, 11e9 // a second sync point, 1 s later, at 1 device ns per host ns
	require.InDelta(t, 11, tr(11e9), 1e-6, "translate_time of the device's now, 1 s after its initialization")
	*now, dev.dev = 11.1, 11.2e9 // the device clock now runs twice as fast
	assert.InDelta(t, 11.2, tr(11.2e9), 1e-6, "translate_time 0.1 s after the last sync point: on the line of the last ones (no new reading)")
	*now = 11.1 + refitAfter + 0.01
	dev.dev = 11.2e9 + int64((refitAfter+0.01)*2e9)
	assert.InDelta(t, *now, tr(uint64(dev.dev)), 1e-6, "translate_time once refitAfter passed: on the new reading")
}

// TestTranslateTimeAtExactlyRefitAfter: the device clock is read again
// only when the last reading is older than refitAfter: at exactly
// refitAfter a time is still translated on the line of the last sync
// points (times chosen so the arithmetic is exact).
func TestTranslateTimeAtExactlyRefitAfter(t *testing.T) {
	reset(t, nil)
	now := fakeHostClock(t, 10)
	dev := &dyadicClock{dev: 10e9}
	tr := translator(t, "drifting", dev)
	*now, dev.dev = 11, 11e9 // a second sync point, 1 s later, at 1 device ns per host ns
	require.Equal(t, 11.0, tr(11e9), "translate_time of the device's now, 1 s after its initialization")
	*now, dev.dev = 11+refitAfter, 12e9 // the device clock now runs faster; not read yet
	assert.Equal(t, 11.5, tr(11.5e9), "translate_time exactly refitAfter after the last reading: on the line of the last ones")
	*now, dev.dev = 12, 12.5e9
	assert.Equal(t, 12.0, tr(12.5e9), "translate_time 1 s after the last reading: on the new reading")
}

// TestTranslateTimeBeforeTheFirstSyncPoint: a device time earlier than
// every sync point is extrapolated back with the rate of the first span
// between readings, also when the first sync point's own time was
// translated before the second reading was taken (a device running at
// 1.5 ns per host ns, so the nominal 1 ns/ns would be off).
func TestTranslateTimeBeforeTheFirstSyncPoint(t *testing.T) {
	reset(t, nil)
	now := fakeHostClock(t, 10)
	dev := &dyadicClock{dev: 10e9}
	tr := translator(t, "fast", dev)
	require.Equal(t, 10.0, tr(10e9), "translate_time of the device's time at its initialization")
	*now, dev.dev = 12, 13e9 // 2 s later, 3e9 device ns later
	require.Equal(t, 12.0, tr(13e9), "translate_time of the device's now, 2 s after its initialization")
	assert.InDelta(t, 8.0, tr(7e9), 1e-9, "translate_time 3e9 device ns before the first sync point")
	f := clockFit{hist: []sample{{dev: 1 << 30, host: 2}, {dev: 2 << 30, host: 3}}} // 2^-30 s per ns
	assert.Equal(t, 1.0, f.at(0), "at 2^30 ns before the first of two sync points")
}

// TestExtrapolationRateSpan: after the last sync point, times are
// extrapolated with the rate of the latest span of at least minSpan
// between readings: a span of exactly minSpan counts, a shorter one or
// one that ends at a pinned point (not a reading) does not, and the
// first sync point is used when no later one gives such a span.
func TestExtrapolationRateSpan(t *testing.T) {
	const ms = int64(minSpan)
	for _, c := range []struct {
		name string
		hist []sample
		want float64 // at(3*minSpan)
	}{
		// rates: 1.25e-9 from the first point, 1.5e-9 from the middle one
		{"a span of exactly minSpan", []sample{{dev: 0, host: 0}, {dev: ms, host: 0.01}, {dev: 2 * ms, host: 0.025}}, 0.04},
		{"a span shorter than minSpan", []sample{{dev: 0, host: 0}, {dev: ms + 1, host: 0.01}, {dev: 2 * ms, host: 0.025}}, 0.0375},
		{"a span from a pinned point", []sample{{dev: 0, host: 0}, {dev: ms, host: 0.01, pin: true}, {dev: 2 * ms, host: 0.025}}, 0.0375},
	} {
		f := clockFit{hist: c.hist}
		assert.InDelta(t, c.want, f.at(3*ms), 1e-12, "%s: a time minSpan after the last sync point", c.name)
	}
}

// TestTranslateTimeAfterAReadingOnTheLine: a reading the fit already
// says (on its line) is not added, but it counts as the last reading: for
// refitAfter after it the device clock is not read again, and times are
// translated on that line.
func TestTranslateTimeAfterAReadingOnTheLine(t *testing.T) {
	reset(t, nil)
	now := fakeHostClock(t, 10)
	dev := &dyadicClock{dev: 10e9}
	tr := translator(t, "steady", dev)
	*now, dev.dev = 11, 11e9
	require.Equal(t, 11.0, tr(11e9), "translate_time 1 s after the initialization")
	*now, dev.dev = 12, 12e9 // a reading on the line
	require.Equal(t, 12.0, tr(12e9), "translate_time 2 s after the initialization")
	*now, dev.dev = 12.125, 12.25e9 // the device clock now runs twice as fast; not read yet
	assert.Equal(t, 12.25, tr(12.25e9), "translate_time 0.125 s after a reading on the line: on the line")
}
