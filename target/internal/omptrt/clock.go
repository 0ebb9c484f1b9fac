package omptrt

import (
	"math"
	"sort"

	"github.com/gompt/gompt/ompt"
)

// hostClock is the host side of clock synchronisation: ompt.Wtime, replaced by
// tests that simulate a long run.
var hostClock = ompt.Wtime

// clockFit maps a device clock onto ompt.Wtime. It keeps a history of paired
// readings (sync points), taken whenever the device's time is used
// (get_device_time, translate_time, trace delivery) and the last check
// is older than refitAfter. A device time between two sync points is
// interpolated linearly between them, so a record taken long ago is
// translated with the clock rate of its own time, not today's: drift
// (a rate that changes with temperature or load) costs nothing for the
// past. A time after the last sync point is extrapolated with the rate
// of the latest span of at least minSpan.
//
// The map is monotonic, also across re-fits: it is continuous and
// piecewise linear with positive slopes, and a re-fit never changes what
// a time already translated maps to. A new reading within mergeTol of
// the line the fit extrapolates is not added (the fit already says it).
// Otherwise the reading is added after a point pinned on the old line at
// the latest device time translated so far (hi), so every time that was
// extrapolated keeps its value and later ones are interpolated towards
// the new reading. Points are never edited; only when the history is
// full is every other point of its older half dropped, which moves the
// translation of times older than half the history by the curvature
// between the points dropped.
type clockFit struct {
	hist    []sample
	checked float64 // host time of the last reading, added or not
	hi      int64   // the latest device time translated so far
}

type sample struct {
	dev  int64
	host float64
	pin  bool // pinned on an earlier line, not read: no rate is taken from it
}

const (
	refitAfter = 0.25   // seconds between readings
	minSpan    = 1e7    // device ns: the shortest span a rate is taken from
	mergeTol   = 150e-9 // seconds: how far off the extrapolated line a reading may be and not be added
	maxHist    = 1 << 15
)

// resample takes a paired reading, the best of three (the narrowest host
// bracket around the device read, its midpoint as the host time), and
// adds it to the history if the fit does not already say it (see
// clockFit). A reading that is not later than the last point on both
// clocks is ignored. h.mu must be held.
func (f *clockFit) resample(dev Device) {
	best, bestW := sample{}, -1.0
	for range 3 {
		h0 := hostClock()
		d, err := dev.Now()
		h1 := hostClock()
		if err != nil {
			continue
		}
		if w := h1 - h0; bestW < 0 || w < bestW {
			best, bestW = sample{dev: d, host: (h0 + h1) / 2}, w
		}
	}
	if bestW < 0 {
		return
	}
	n := len(f.hist)
	if n > 0 {
		last := f.hist[n-1]
		if best.dev <= last.dev || best.host <= last.host {
			return
		}
	}
	f.checked = best.host
	if n >= 2 && math.Abs(f.at(best.dev)-best.host) <= mergeTol {
		return // on the line: the fit already says it
	}
	if n > 0 && f.hi > f.hist[n-1].dev {
		// times up to hi were extrapolated: pin what they were given
		pin := sample{f.hi, f.at(f.hi), true}
		if pin.dev >= best.dev || pin.host >= best.host {
			return // translated past this reading: keep the fit as it is
		}
		f.add(pin)
	}
	f.add(best)
}

// add appends a sync point, thinning the older half of a full history.
func (f *clockFit) add(p sample) {
	if len(f.hist) == maxHist {
		half := maxHist / 2
		k := 0
		for i := 0; i < half; i += 2 {
			f.hist[k] = f.hist[i]
			k++
		}
		k += copy(f.hist[k:], f.hist[half:])
		f.hist = f.hist[:k]
	}
	f.hist = append(f.hist, p)
}

// stale reports whether the last reading is too old to extrapolate
// from: older than refitAfter, or, while the history is young, than a
// quarter of its span (at least 1 ms), so that the first rates come from
// spans at least four times the distance they are used over.
func (f *clockFit) stale() bool {
	n := len(f.hist)
	if n == 0 {
		return true
	}
	age := hostClock() - max(f.hist[n-1].host, f.checked)
	span := f.hist[n-1].host - f.hist[0].host
	return age > min(refitAfter, max(1e-3, span/4))
}

// rate returns host seconds per device ns between two sync points, within
// sane bounds (a device clock runs at 0.5x to 2x of the host's), 1e-9
// otherwise.
func rate(a, b sample) float64 {
	if span := b.dev - a.dev; span > 0 {
		if s := (b.host - a.host) / float64(span); s > 0.5e-9 && s < 2e-9 {
			return s
		}
	}
	return 1e-9
}

// at maps device time t onto ompt.Wtime seconds; 0 with no sync point.
func (f *clockFit) at(t int64) float64 {
	n := len(f.hist)
	switch {
	case n == 0:
		return 0
	case n == 1:
		return f.hist[0].host + float64(t-f.hist[0].dev)*1e-9
	}
	// i: the first sync point after t
	i := sort.Search(n, func(i int) bool { return f.hist[i].dev > t })
	switch {
	case i == 0: // before the first: extrapolate the first span back
		a, b := f.hist[0], f.hist[1]
		return a.host + float64(t-a.dev)*rate(a, b)
	case i < n: // between two sync points: interpolate (points rise on both clocks: the slope is positive)
		a, b := f.hist[i-1], f.hist[i]
		return a.host + float64(t-a.dev)*((b.host-a.host)/float64(b.dev-a.dev))
	}
	// after the last (a reading, never a pin): the rate of the latest
	// span of at least minSpan between readings
	b := f.hist[n-1]
	j := n - 2
	for j > 0 && (f.hist[j].pin || b.dev-f.hist[j].dev < minSpan) {
		j--
	}
	return b.host + float64(t-b.dev)*rate(f.hist[j], b)
}

// translate maps device time t to ompt.Wtime seconds, taking a new sync point
// first when the last one is stale.
// After the device is finalized the fit is kept as it was (the device is
// not read any more), so tools can translate the times of its last
// records in their finalizers.
func (h *devState) translate(t int64) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.finalized && h.fit.stale() {
		h.fit.resample(h.dev)
	}
	if t > h.fit.hi {
		h.fit.hi = t
	}
	return h.fit.at(t)
}

// resampleIfStale takes a sync point if the last one is stale, so that
// device times handed out (get_device_time, trace records) lie near one.
func (h *devState) resampleIfStale() {
	h.mu.Lock()
	if !h.finalized && h.fit.stale() {
		h.fit.resample(h.dev)
	}
	h.mu.Unlock()
}
