package omptrt

import (
	"math"
	"testing"

	"github.com/gompt/gompt/ompt"
)

// TestTranslateTimeAfterClockFailedAtInit: a device whose clock cannot be
// read when it is initialized (the first sync point is missing) still
// translates its times once the clock answers: translate_time and
// get_device_time take the first sync point then, and the time comes out
// next to the host's.
func TestTranslateTimeAfterClockFailedAtInit(t *testing.T) {
	reset(t, nil)
	dev := &clockDevice{procs: 1, rate: 1, fail: true}
	if err := DeviceInitialize(0, "flaky", dev); err != nil {
		t.Fatal(err)
	}
	h, l, _ := GetDeviceInfo(0)
	tr := l("ompt_translate_time").(ompt.TranslateTimeFunc)
	now := l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)
	if got := now(h); got != 0 {
		t.Errorf("get_device_time with a broken clock = %d, want 0", got)
	}
	dev.fail = false
	d, _ := dev.Now()
	host := ompt.Wtime()
	if got := tr(h, uint64(d)); math.Abs(got-host) > 0.05 {
		t.Errorf("translate_time of the device's now, once its clock answers: %.6f s, host now %.6f s", got, host)
	}
	if got := now(h); got == 0 {
		t.Error("get_device_time once the clock answers = 0")
	}
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
	if len(f.hist) != 1 || f.hist[0] != (sample{dev: 100, host: 5}) {
		t.Errorf("a reading bracketed by two equal host times: history %+v, want [{100 5}]", f.hist)
	}

	// exactly mergeTol off the line: the fit already says it
	g := base()
	at(mergeTol)
	if x := g.at(2 * span); x != 0 {
		t.Fatalf("setup: the line gives %g at 2^31, want 0", x)
	}
	g.resample(&dyadicClock{dev: 2 * span})
	if len(g.hist) != 2 {
		t.Errorf("a reading exactly mergeTol (%g s) off the line was added: %+v", mergeTol, g.hist)
	}

	// device time 2^31 was translated (host 0 on the old line); a reading
	// later on the device at host 0 exactly would not rise on the host
	// clock after the pinned point: the fit stays as it is
	g = base()
	g.hi = 2 * span
	at(0)
	g.resample(&dyadicClock{dev: 2*span + span/2})
	for i := 1; i < len(g.hist); i++ {
		if g.hist[i].dev <= g.hist[i-1].dev || g.hist[i].host <= g.hist[i-1].host {
			t.Errorf("sync points %d and %d do not rise on both clocks: %+v", i-1, i, g.hist)
		}
	}
	if len(g.hist) != 2 {
		t.Errorf("a reading at the pinned host time changed the fit: %+v", g.hist)
	}
	// the time translated before keeps its value
	if x := g.at(2 * span); x != 0 {
		t.Errorf("device time 2^31 translated to 0 before, now %g", x)
	}

	// a reading at exactly the latest translated device time: refused too
	g = base()
	g.hi = 2*span + span/2 // translated to host 0.5 on the line
	at(1)
	g.resample(&dyadicClock{dev: 2*span + span/2})
	if len(g.hist) != 2 {
		t.Errorf("a reading at the latest translated device time changed the fit: %+v", g.hist)
	}
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
			if got := g.at(p.dev); got != p.host {
				t.Errorf("history of %d: sync point %d (device %d) translates to %.17g, want its host time %.17g", n, i, p.dev, got, p.host)
			}
		}
	}
	g := clockFit{hist: f.hist[1:]}
	if got, want := g.at(f.hist[2].dev), f.hist[2].host; got != want {
		t.Errorf("the last sync point translates to %.17g, want %.17g", got, want)
	}
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
		if got, want := f.at(-1000), -1000*c.wantRate; math.Abs(got-want) > 1e-18 {
			t.Errorf("%s: device time -1000 ns extrapolates to %.6g s, want %.6g s (rate %g s/ns)", c.name, got, want, c.wantRate)
		}
	}
}
