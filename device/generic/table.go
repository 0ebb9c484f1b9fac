package generic

import (
	"fmt"
	"math/bits"
	"sync/atomic"

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

// table is a device's allocations, sorted by address: the live ones, and
// the freed blocks it keeps for reuse, which keep their place (dead,
// their class's size) so that reusing one writes a flag and a size, and
// no entry moves. Not safe for concurrent use: Device's mu guards it.
type table[H any] struct {
	ents  []entry[H] // sorted by base, disjoint
	n     int        // live entries
	bytes int64      // sum of live sizes

	// Synthetic addresses (Config.Space), for drivers whose memory has
	// none: [lo, hi), handed out upward from next, then first fit once
	// next reaches hi.
	lo, hi, next uint64

	// Freed blocks kept for reuse (Config.CacheLimit): the dead
	// entries, by size class, each list in the order they were freed.
	cache      [][]block
	cached     int64
	cacheLimit int64
	cacheMax   int
	maxAlloc   uint64 // Info.MaxAlloc: no block is larger

	// Which cached blocks a driver's queues are done with (Reuser):
	// frees numbers the blocks as they enter the cache, and every block
	// numbered up to clean may serve an allocation. frees is under the
	// device's lock; clean only grows (raiseClean), also without it: a
	// Free raises it after asking the driver, with the lock released.
	frees uint64
	clean atomic.Uint64
}

// raiseClean lets the blocks numbered up to mark serve allocations.
func (t *table[H]) raiseClean(mark uint64) {
	for c := t.clean.Load(); c < mark && !t.clean.CompareAndSwap(c, mark); c = t.clean.Load() {
	}
}

// block is a cached block: its address, and its number among the frees.
type block struct {
	p     device.DevicePtr
	freed uint64
}

// entry is one allocation: live, of size bytes, or a dead block in the
// cache, of its class's size.
type entry[H any] struct {
	base    device.DevicePtr
	size    int
	live    bool
	nocache bool // the program's memory (HostAliaser), or of its exact size (ExactFallback): never cached
	h       H
}

// search returns the index of the last entry whose base is at most p, or
// -1.
func (t *table[H]) search(p device.DevicePtr) int {
	lo, hi := 0, len(t.ents) // the first entry with base > p is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.ents[m].base <= p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// find returns the index of the live entry containing p, or of the live
// entry ending at p when end is true and no live entry contains it, and
// whether there is one.
func (t *table[H]) find(p device.DevicePtr, end bool) (int, bool) {
	ents := t.ents
	lo, hi := 0, len(ents) // search's, inline: the first entry with base > p is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ents[m].base <= p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, false
	}
	e := &ents[lo-1]
	if e.live && (p < e.base+device.DevicePtr(e.size) || end && p == e.base+device.DevicePtr(e.size)) {
		return lo - 1, true
	}
	return 0, false
}

// span returns live entry i as a Span.
func (t *table[H]) span(i int) Span[H] {
	e := &t.ents[i]
	return Span[H]{Base: e.base, Size: e.size, Handle: e.h}
}

// add inserts a live entry, which overlaps no other; nocache keeps it
// out of the cache when it is freed.
func (t *table[H]) add(p device.DevicePtr, size int, h H, nocache bool) {
	i := len(t.ents)
	if i > 0 && t.ents[i-1].base > p {
		i = t.search(p) + 1
	}
	t.ents = append(t.ents, entry[H]{})
	if i < len(t.ents)-1 {
		copy(t.ents[i+1:], t.ents[i:])
	}
	t.ents[i] = entry[H]{base: p, size: size, live: true, nocache: nocache, h: h}
	t.n++
	t.bytes += int64(size)
}

// class returns the size class of an allocation of size bytes and the
// class's size, and whether the cache may keep such a block: a size up
// to CacheMax whose class's size is at most MaxAlloc.
func (t *table[H]) class(size int) (c, span int, ok bool) {
	if size > t.cacheMax {
		return 0, 0, false
	}
	c, span = SizeClass(size)
	return c, span, uint64(span) <= t.maxAlloc
}

// keeps reports whether live entry e, freed now, would stay as a cached
// block, of class c and span bytes: the cache has room for its class's
// size.
func (t *table[H]) keeps(e *entry[H]) (c, span int, ok bool) {
	if t.cacheLimit <= 0 || e.nocache || e.size > t.cacheMax {
		return 0, 0, false
	}
	c, span = SizeClass(e.size)
	return c, span, uint64(span) <= t.maxAlloc && t.cached+int64(span) <= t.cacheLimit
}

// kill ends live entry i, which keeps says the cache keeps, of class c
// and span bytes: it stays, dead, as a cached block of its class's size.
func (t *table[H]) kill(i, c, span int) {
	e := &t.ents[i]
	t.n--
	t.bytes -= int64(e.size)
	e.live, e.size = false, span
	if c >= len(t.cache) {
		t.cache = append(t.cache, make([][]block, c+1-len(t.cache))...)
	}
	t.frees++
	t.cache[c] = append(t.cache[c], block{e.base, t.frees})
	t.cached += int64(span)
}

// remove ends live entry i, which leaves the table.
func (t *table[H]) remove(i int) {
	t.n--
	t.bytes -= int64(t.ents[i].size)
	t.drop(i)
}

// drop removes entry i.
func (t *table[H]) drop(i int) {
	copy(t.ents[i:], t.ents[i+1:])
	t.ents[len(t.ents)-1] = entry[H]{} // drop the handle
	t.ents = t.ents[:len(t.ents)-1]
}

// all returns the live entries as Spans.
func (t *table[H]) all() []Span[H] {
	out := make([]Span[H], 0, t.n)
	for i := range t.ents {
		if t.ents[i].live {
			out = append(out, t.span(i))
		}
	}
	return out
}

// spaceAlign is the granularity of synthetic addresses, and the gap left
// after each allocation, so that one past its end is never inside the
// next.
const spaceAlign = 1 << 12

// reserve is the bytes of address space an allocation of size bytes
// holds: with a cache, its class's whole size for a size the cache takes,
// since a block the cache keeps may serve any size of its class.
func (t *table[H]) reserve(size int) uint64 {
	if t.cacheLimit > 0 {
		if _, span, ok := t.class(size); ok {
			return uint64(span)
		}
	}
	return uint64(size)
}

// place returns a synthetic address for size bytes: the next one up, or
// once the space is used up to its end, the first gap large enough
// (addresses are reused only after the space wraps, which keeps a stale
// pointer from aliasing a new allocation for as long as possible). Each
// entry, live or cached, holds its reserve.
func (t *table[H]) place(size int) (device.DevicePtr, error) {
	s := t.reserve(size)
	need := (s+spaceAlign-1)&^(spaceAlign-1) + spaceAlign
	if need < s {
		return 0, fmt.Errorf("size %d does not fit the address space", size)
	}
	if base := t.next; base+need <= t.hi && base+need > base {
		t.next = base + need
		return device.DevicePtr(base), nil
	}
	prev := t.lo
	for i := range t.ents {
		b := uint64(t.ents[i].base)
		if b-prev >= need {
			return device.DevicePtr(prev), nil
		}
		prev = b + (t.reserve(t.ents[i].size)+spaceAlign-1)&^(spaceAlign-1) + spaceAlign
	}
	if prev < t.hi && t.hi-prev >= need {
		return device.DevicePtr(prev), nil
	}
	if t.hi == t.lo {
		return 0, fmt.Errorf("MemAlloc returned address 0, which asks for a synthetic address, and the device has no synthetic address space (Config.Space)")
	}
	return 0, fmt.Errorf("synthetic address space of %d TiB exhausted by %d live allocations", (t.hi-t.lo)>>40, len(t.ents))
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

// reuse makes a cached block of class c (span bytes) live again, of size
// bytes, and returns its address, if the cache has one that may be reused
// (its number at most clean and, with a fencer, its fences done): the
// newest such. waiting says whether the class has blocks that may not be
// reused yet for their number.
func (t *table[H]) reuse(c, span, size int, f Fencer[H]) (p device.DevicePtr, ok, waiting bool) {
	if c >= len(t.cache) || len(t.cache[c]) == 0 {
		return 0, false, false
	}
	l := t.cache[c]
	i := len(l) - 1
	clean := t.clean.Load()
	for i >= 0 && l[i].freed > clean {
		i--
	}
	if i < 0 {
		return 0, false, true
	}
	if f != nil {
		waiting = i < len(l)-1
		for i >= 0 && !f.Reuse(t.ents[t.search(l[i].p)].h) {
			i--
		}
		if i < 0 {
			return 0, false, waiting
		}
	}
	p = l[i].p
	if i < len(l)-1 { // the newest is the one taken, mostly
		copy(l[i:], l[i+1:])
	}
	t.cache[c] = l[:len(l)-1]
	t.cached -= int64(span)
	e := &t.ents[t.search(p)]
	e.live, e.size = true, size
	t.n++
	t.bytes += int64(size)
	return p, true, false
}

// takeCache empties the cache: its blocks leave the table, and are
// returned (each Size its class's size).
func (t *table[H]) takeCache() []Span[H] {
	var out []Span[H]
	for c, l := range t.cache {
		for _, b := range l {
			i := t.search(b.p)
			out = append(out, t.span(i))
			t.drop(i)
		}
		t.cache[c] = l[:0]
	}
	t.cached = 0
	return out
}
