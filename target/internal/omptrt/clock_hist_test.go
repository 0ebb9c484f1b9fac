package omptrt

import (
	"math"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingClock is a drifting device clock (driftClock's) that counts its
// reads and adds a ±1 us zigzag, so that every reading is off the fit's
// line and becomes a sync point.
type countingClock struct {
	host  *float64
	reads int
}

func (c *countingClock) NumProcs() int { return 1 }
func (c *countingClock) Now() (int64, error) {
	c.reads++
	z := int64(1000)
	if int64(*c.host*100)%2 == 1 {
		z = -z
	}
	return devAt(*c.host) + z, nil
}

// TestClockHistoryThinning runs the fit past its history's capacity, so
// that the older half is thinned: recent device times still translate to
// their true host time (the newer half is kept whole), older ones stay
// near theirs (every other point of the older half is kept), and the
// history stays ordered on both clocks.
func TestClockHistoryThinning(t *testing.T) {
	host := 1.0
	hostClock = func() float64 { host += 20e-9; return host }
	t.Cleanup(func() { hostClock = ompt.Wtime })
	clk := &countingClock{host: &host}
	var f clockFit
	type point struct {
		dev  int64
		host float64
	}
	var readings []point
	for step := 0; step < maxHist+maxHist/2; step++ {
		host += 0.01
		f.resample(clk)
		if n := len(f.hist); n > 0 && !f.hist[n-1].pin {
			readings = append(readings, point{f.hist[n-1].dev, f.hist[n-1].host})
		}
	}
	require.LessOrEqual(t, len(f.hist), maxHist, "history points: want it thinned")
	require.GreaterOrEqual(t, len(f.hist), maxHist/2, "history points: want at least half of %d left", maxHist)
	for i := 1; i < len(f.hist); i++ {
		require.Greater(t, f.hist[i].dev, f.hist[i-1].dev, "sync points %d and %d out of order on the device clock: %+v %+v", i-1, i, f.hist[i-1], f.hist[i])
		require.Greater(t, f.hist[i].host, f.hist[i-1].host, "sync points %d and %d out of order on the host clock: %+v %+v", i-1, i, f.hist[i-1], f.hist[i])
	}
	// The first reading (here: the device's initialization) is never
	// thinned: its time keeps translating exactly.
	assert.Equal(t, readings[0].host, f.at(readings[0].dev), "the first reading's device time, after thinning")
	// Recent readings (the newer half): exact. Older ones: within the
	// zigzag and the drift's curvature over two points.
	n := len(readings)
	for _, c := range []struct {
		from, to int
		tol      float64
	}{{n - maxHist/4, n, 1e-9}, {n / 3, n / 2, 5e-6}, {n / 10, n / 5, 5e-6}} {
		worst := 0.0
		for _, p := range readings[c.from:c.to] {
			worst = max(worst, math.Abs(f.at(p.dev)-p.host))
		}
		assert.LessOrEqual(t, worst, c.tol, "readings %d to %d of %d: worst translation error in s", c.from, c.to, n)
	}
}

// TestFinalizedDeviceIsNotRead: after device_finalize, translate_time
// long after the last sync point answers from the fit as it was, without
// reading the device's clock (its driver may be gone).
func TestFinalizedDeviceIsNotRead(t *testing.T) {
	reset(t, nil)
	host := 0.5
	hostClock = func() float64 { host += 20e-9; return host }
	clk := &countingClock{host: &host}
	require.NoError(t, DeviceInitialize(0, "counting", clk))
	h, l, _ := GetDeviceInfo(0)
	now := l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)
	tr := l("ompt_translate_time").(ompt.TranslateTimeFunc)
	d := now(h)
	want := tr(h, d)
	host += 10 // long past refitAfter: a live device would be read again
	require.Equal(t, want, tr(h, d), "translation of one device time changed on a re-fit")
	require.NoError(t, DeviceFinalize(0))
	reads := clk.reads
	host += 10
	assert.Equal(t, want, tr(h, d), "translate_time after finalize")
	devOf(h).resampleIfStale()
	assert.Equal(t, reads, clk.reads, "device clock reads after device_finalize")
}
