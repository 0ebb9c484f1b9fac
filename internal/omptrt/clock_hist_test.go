package omptrt

import (
	"github.com/gompt/gompt/ompt"
	"math"
	"testing"
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
	if len(f.hist) > maxHist || len(f.hist) < maxHist/2 {
		t.Fatalf("history of %d points; want it thinned to at most %d and at least half that", len(f.hist), maxHist)
	}
	for i := 1; i < len(f.hist); i++ {
		if f.hist[i].dev <= f.hist[i-1].dev || f.hist[i].host <= f.hist[i-1].host {
			t.Fatalf("sync points %d and %d out of order: %+v %+v", i-1, i, f.hist[i-1], f.hist[i])
		}
	}
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
		if worst > c.tol {
			t.Errorf("readings %d to %d of %d: worst translation error %.3g s, want <= %.3g", c.from, c.to, n, worst, c.tol)
		}
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
	if err := DeviceInitialize(0, "counting", clk); err != nil {
		t.Fatal(err)
	}
	h, l, _ := GetDeviceInfo(0)
	now := l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)
	tr := l("ompt_translate_time").(ompt.TranslateTimeFunc)
	d := now(h)
	want := tr(h, d)
	host += 10 // long past refitAfter: a live device would be read again
	if tr(h, d) != want {
		t.Fatal("translation of one device time changed on a re-fit")
	}
	if err := DeviceFinalize(0); err != nil {
		t.Fatal(err)
	}
	reads := clk.reads
	host += 10
	if got := tr(h, d); got != want {
		t.Errorf("translate_time after finalize: %.9f, want %.9f", got, want)
	}
	devOf(h).resampleIfStale()
	if clk.reads != reads {
		t.Errorf("the device clock was read %d times after device_finalize", clk.reads-reads)
	}
}
