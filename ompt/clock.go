package ompt

import (
	"math"
	"sort"
)

// hostClock is the host side of clock synchronisation: Wtime, replaced by
// tests that simulate a long run.
var hostClock = Wtime

// clockFit maps a device clock onto Wtime. It keeps a history of paired
// readings (sync points), at least refitAfter apart, taken whenever the
// device's time is used (get_device_time, translate_time, trace delivery)
// and the last one is stale. A device time between two sync points is
// interpolated linearly between them, so a record taken long ago is
// translated with the clock rate of its own time, not today's: drift
// (a rate that changes with temperature or load) costs nothing for the
// past. A time after the last sync point is extrapolated with the rate of
// the latest span of at least minSpan. The history stays small: a new
// sync point replaces the last one when the line from the one before to
// the new one passes within mergeTol of every point it replaces, so a
// steady clock keeps a few points for hours and a wandering one keeps
// as many as its wander needs. If it still fills up, every other point of
// its older half is dropped.
type clockFit struct {
	hist []sample
	pend []sample // points merged into the last span since hist[len-2]
}

type sample struct {
	dev  int64
	host float64
}

const (
	refitAfter = 0.25   // seconds between sync points
	minSpan    = 1e7    // device ns: the shortest span a rate is taken from
	mergeTol   = 150e-9 // seconds: how far a merged point may be off the line
	maxPend    = 256
	maxHist    = 1 << 15
)

// resample takes a paired reading, the best of three (the narrowest host
// bracket around the device read, its midpoint as the host time), and
// adds it to the history. A reading that is not later than the last one
// on both clocks is ignored. h.mu must be held.
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
			best, bestW = sample{d, (h0 + h1) / 2}, w
		}
	}
	if bestW < 0 {
		return
	}
	if n := len(f.hist); n > 0 {
		last := f.hist[n-1]
		if best.dev <= last.dev || best.host <= last.host {
			return
		}
	}
	if n := len(f.hist); n >= 2 && len(f.pend) < maxPend {
		a, b := f.hist[n-2], f.hist[n-1]
		on := func(p sample) bool {
			return math.Abs(a.host+float64(p.dev-a.dev)*rate(a, best)-p.host) <= mergeTol
		}
		fits := on(b)
		for _, p := range f.pend {
			fits = fits && on(p)
		}
		if fits {
			f.pend = append(f.pend, b)
			f.hist[n-1] = best
			return
		}
	}
	f.pend = f.pend[:0]
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
	f.hist = append(f.hist, best)
}

// stale reports whether the last sync point is too old to extrapolate
// from: older than refitAfter, or, while the history is young, than a
// quarter of its span (at least 1 ms), so that the first rates come from
// spans at least four times the distance they are used over.
func (f *clockFit) stale() bool {
	n := len(f.hist)
	if n == 0 {
		return true
	}
	age := hostClock() - f.hist[n-1].host
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

// at maps device time t onto Wtime seconds; 0 with no sync point.
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
	case i < n: // between two sync points: interpolate
		a, b := f.hist[i-1], f.hist[i]
		return a.host + float64(t-a.dev)*rate(a, b)
	}
	// after the last: the rate of the latest span of at least minSpan
	b := f.hist[n-1]
	j := n - 2
	for j > 0 && b.dev-f.hist[j].dev < minSpan {
		j--
	}
	return b.host + float64(t-b.dev)*rate(f.hist[j], b)
}

// translate maps device time t to Wtime seconds, taking a new sync point
// first when the last one is stale.
func (h *DeviceHandle) translate(t int64) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fit.stale() {
		h.fit.resample(h.dev)
	}
	return h.fit.at(t)
}

// resampleIfStale takes a sync point if the last one is stale, so that
// device times handed out (get_device_time, trace records) lie near one.
func (h *DeviceHandle) resampleIfStale() {
	h.mu.Lock()
	if !h.finalized && h.fit.stale() {
		h.fit.resample(h.dev)
	}
	h.mu.Unlock()
}
