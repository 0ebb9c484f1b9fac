package generic

import (
	"fmt"
	"math/bits"
	"sort"

	"github.com/gompt/gompt/device"
)

// Span is one live allocation of a device: its address, its size as
// asked for, and the plugin's handle of it.
type Span[H any] struct {
	Base   device.DevicePtr
	Size   int
	Handle H
}

// End is the address one past the span's last byte.
func (s *Span[H]) End() device.DevicePtr { return s.Base + device.DevicePtr(s.Size) }

// table is a device's live allocations, sorted by address, and the freed
// blocks it keeps for reuse. Not safe for concurrent use: Device's mu
// guards it.
type table[H any] struct {
	live  []Span[H] // sorted by Base, disjoint
	bytes int64     // sum of live sizes

	// Synthetic addresses (Config.Space), for drivers whose memory has
	// none: [lo, hi), handed out upward from next, then first fit once
	// next reaches hi.
	lo, hi, next uint64

	// Freed blocks kept for reuse (Config.CacheLimit), by size class.
	cache      [][]Span[H] // by class; each Size is its class's size
	cached     int64
	cacheLimit int64
	cacheMax   int
}

// find returns the index of the live span containing p, or of the span
// ending at p when end is true and no span contains it, and whether there
// is one.
func (t *table[H]) find(p device.DevicePtr, end bool) (int, bool) {
	lo, hi := 0, len(t.live) // the first span with Base > p is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.live[m].Base <= p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, false
	}
	s := &t.live[lo-1]
	if p < s.End() || end && p == s.End() {
		return lo - 1, true
	}
	return 0, false
}

// add inserts s, which overlaps no live span.
func (t *table[H]) add(s Span[H]) {
	i := sort.Search(len(t.live), func(i int) bool { return t.live[i].Base > s.Base })
	t.live = append(t.live, Span[H]{})
	copy(t.live[i+1:], t.live[i:])
	t.live[i] = s
	t.bytes += int64(s.Size)
}

// remove deletes and returns the live span starting at p.
func (t *table[H]) remove(p device.DevicePtr) (Span[H], bool) {
	i, ok := t.find(p, false)
	if !ok || t.live[i].Base != p {
		return Span[H]{}, false
	}
	s := t.live[i]
	copy(t.live[i:], t.live[i+1:])
	t.live[len(t.live)-1] = Span[H]{} // drop the handle
	t.live = t.live[:len(t.live)-1]
	t.bytes -= int64(s.Size)
	return s, true
}

// spaceAlign is the granularity of synthetic addresses, and the gap left
// after each allocation, so that one past its end is never inside the
// next.
const spaceAlign = 1 << 12

// place returns a synthetic address for size bytes: the next one up, or
// once the space is used up to its end, the first gap large enough
// (addresses are reused only after the space wraps, which keeps a stale
// pointer from aliasing a new allocation for as long as possible).
func (t *table[H]) place(size int) (device.DevicePtr, error) {
	s := uint64(size)
	need := (s+spaceAlign-1)&^(spaceAlign-1) + spaceAlign
	if need < s {
		return 0, fmt.Errorf("size %d does not fit the address space", size)
	}
	if base := t.next; base+need <= t.hi && base+need > base {
		t.next = base + need
		return device.DevicePtr(base), nil
	}
	prev := t.lo
	for i := range t.live {
		b := uint64(t.live[i].Base)
		if b-prev >= need {
			return device.DevicePtr(prev), nil
		}
		prev = b + (uint64(t.live[i].Size)+spaceAlign-1)&^(spaceAlign-1) + spaceAlign
	}
	if prev < t.hi && t.hi-prev >= need {
		return device.DevicePtr(prev), nil
	}
	return 0, fmt.Errorf("synthetic address space of %d TiB exhausted by %d live allocations", (t.hi-t.lo)>>40, len(t.live))
}

// SizeClass returns the size class of an allocation of size bytes (size >
// 0) and the class's size: multiples of 256 bytes up to 4 KiB, then four
// classes per power of two, so at most a quarter of a block is unused. A
// freed block serves a later allocation of its class (Config.CacheLimit),
// so a driver whose memory it keeps allocates the class's whole size.
func SizeClass(size int) (class int, span int) {
	s := uint64(size)
	if s <= 4096 {
		c := (s + 255) / 256
		return int(c) - 1, int(c * 256)
	}
	k := bits.Len64(s - 1) // 2^(k-1) < s <= 2^k, k >= 13
	step := uint64(1) << (k - 3)
	sp := (s + step - 1) / step * step
	return 16 + (k-13)*4 + int(sp/step-5), int(sp)
}

// reuse takes a cached block of size's class, if there is one.
func (t *table[H]) reuse(size int) (Span[H], bool) {
	if t.cached == 0 || size > t.cacheMax {
		return Span[H]{}, false
	}
	c, _ := SizeClass(size)
	if c >= len(t.cache) || len(t.cache[c]) == 0 {
		return Span[H]{}, false
	}
	l := t.cache[c]
	if len(l) == 0 {
		return Span[H]{}, false
	}
	s := l[len(l)-1]
	l[len(l)-1] = Span[H]{}
	t.cache[c] = l[:len(l)-1]
	t.cached -= int64(s.Size)
	return s, true
}

// keep caches freed span s if the cache has room, and reports whether it
// did.
func (t *table[H]) keep(s Span[H]) bool {
	if t.cacheLimit == 0 || s.Size > t.cacheMax {
		return false
	}
	c, span := SizeClass(s.Size)
	if t.cached+int64(span) > t.cacheLimit {
		return false
	}
	if c >= len(t.cache) {
		t.cache = append(t.cache, make([][]Span[H], c+1-len(t.cache))...)
	}
	s.Size = span
	t.cache[c] = append(t.cache[c], s)
	t.cached += int64(span)
	return true
}

// takeCache empties the cache and returns what it held.
func (t *table[H]) takeCache() []Span[H] {
	var out []Span[H]
	for c, l := range t.cache {
		out = append(out, l...)
		clear(l)
		t.cache[c] = l[:0]
	}
	t.cached = 0
	return out
}
