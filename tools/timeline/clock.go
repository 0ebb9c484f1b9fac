package timeline

import "sort"

// clockMap is the tool's own record of how one device's clock maps onto
// ompt.Wtime seconds: pairs (device ns, host s) that ompt_translate_time
// gave while the device was live. ompt_translate_time answers 0 once the
// device is finalized, and the last buffers of a device are delivered
// during its finalization, so their times are translated from these
// pairs instead: interpolated between the two around a time, extrapolated
// from the latest span of at least minSpan (or at 1 ns per ns) beyond.
// Not safe for concurrent use; the tool's lock guards it.
type clockMap struct {
	pts []clockPair
}

type clockPair struct {
	dev  uint64
	host float64
}

const (
	minSpan  = 10e6 // device ns: shortest span a rate is taken from, and the spacing of kept pairs
	maxPairs = 1 << 14
)

// add keeps the pair if it is later than the last kept one on both
// clocks. A pair closer than minSpan to the last one replaces it (unless
// it is the only one), so pairs lie at least minSpan apart except the
// last, which is the latest time translated.
func (c *clockMap) add(dev uint64, host float64) {
	if dev == 0 || host == 0 {
		return
	}
	n := len(c.pts)
	if n > 0 {
		last := c.pts[n-1]
		if dev <= last.dev || host <= last.host {
			return
		}
		if n >= 2 && dev < c.pts[n-2].dev+minSpan {
			c.pts[n-1] = clockPair{dev, host}
			return
		}
		if n == maxPairs { // keep every other pair of the older half
			k := 0
			for i := 0; i < n/2; i += 2 {
				c.pts[k] = c.pts[i]
				k++
			}
			k += copy(c.pts[k:], c.pts[n/2:])
			c.pts = c.pts[:k]
		}
	}
	c.pts = append(c.pts, clockPair{dev, host})
}

// at maps device time t onto host seconds; ok is false with no pair.
func (c *clockMap) at(t uint64) (float64, bool) {
	n := len(c.pts)
	if n == 0 {
		return 0, false
	}
	if n == 1 {
		return c.pts[0].host + (float64(t)-float64(c.pts[0].dev))*1e-9, true
	}
	i := sort.Search(n, func(i int) bool { return c.pts[i].dev > t })
	var a, b clockPair
	switch {
	case i == 0:
		a, b = c.pts[0], c.pts[1]
	case i < n:
		a, b = c.pts[i-1], c.pts[i]
	default:
		b = c.pts[n-1]
		j := n - 2
		for j > 0 && b.dev-c.pts[j].dev < minSpan {
			j--
		}
		a = c.pts[j]
		return b.host + (float64(t)-float64(b.dev))*slope(a, b), true
	}
	return a.host + (float64(t)-float64(a.dev))*slope(a, b), true
}

// slope is host seconds per device ns between two pairs, 1e-9 unless the
// pairs give a sane rate (0.5x to 2x the host clock's).
func slope(a, b clockPair) float64 {
	if b.dev > a.dev {
		if s := (b.host - a.host) / float64(b.dev-a.dev); s > 0.5e-9 && s < 2e-9 {
			return s
		}
	}
	return 1e-9
}
