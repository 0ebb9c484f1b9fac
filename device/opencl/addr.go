package opencl

import (
	"fmt"
	"sort"
)

// An OpenCL buffer (cl_mem) is a handle, not an address, while the runtime
// deals in device.DevicePtr values it can offset into (a sub-slice of a
// mapped slice is base+offset). So each device gets a synthetic address
// space: Alloc places every buffer at a fresh range of it, and a pointer is
// translated back to (buffer, offset) by binary search over the sorted live
// ranges, O(log n). Ranges are rounded up to spaceAlign with one guard unit
// between neighbours, so base+size (one past the end) never falls inside
// the next buffer. Addresses grow upward and are reused only after the
// region wraps (first fit), which keeps stale pointers from aliasing new
// buffers for as long as possible.

const (
	spaceAlign = 1 << 12 // 4 KiB: range granularity and guard gap
	spaceBits  = 46      // 64 TiB of synthetic addresses per device
)

// span is one live allocation.
type span struct {
	base, size uint64
	mem        uintptr // cl.Mem of the buffer
}

// space is a device's synthetic address space. Not safe for concurrent use;
// the device's lock guards it.
type space struct {
	lo, hi uint64 // [lo, hi) is the device's region
	next   uint64 // bump pointer
	spans  []span // sorted by base, non-overlapping
}

// newSpace returns the address space of device number n: its own region so
// that a pointer of one device is never valid on another.
func newSpace(n int) *space {
	lo := uint64(n+1) << spaceBits
	return &space{lo: lo, hi: lo + 1<<spaceBits, next: lo}
}

func roundUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

// add places a buffer of size bytes and returns its base address.
func (s *space) add(size uint64, mem uintptr) (uint64, error) {
	need := roundUp(size, spaceAlign) + spaceAlign // with guard
	if need < size || size == 0 {
		return 0, fmt.Errorf("size %d does not fit the address space", size)
	}
	base := s.next
	if base+need > s.hi || base+need < base {
		// Wrapped: first fit among the gaps.
		base = 0
		prev := s.lo
		for _, sp := range s.spans {
			if sp.base-prev >= need {
				base = prev
				break
			}
			prev = sp.base + roundUp(sp.size, spaceAlign) + spaceAlign
		}
		if base == 0 && s.hi-prev >= need {
			base = prev
		}
		if base == 0 {
			return 0, fmt.Errorf("synthetic address space of %d TiB exhausted by %d live buffers", (s.hi-s.lo)>>40, len(s.spans))
		}
	} else {
		s.next = base + need
	}
	i := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].base > base })
	s.spans = append(s.spans, span{})
	copy(s.spans[i+1:], s.spans[i:])
	s.spans[i] = span{base: base, size: size, mem: mem}
	return base, nil
}

// find returns the index of the live span containing p (base <= p <
// base+size).
func (s *space) find(p uint64) (int, bool) {
	i := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].base > p }) - 1
	if i < 0 || p-s.spans[i].base >= s.spans[i].size {
		return 0, false
	}
	return i, true
}

// remove deletes the span whose base is exactly p.
func (s *space) remove(p uint64) (span, bool) {
	i, ok := s.find(p)
	if !ok || s.spans[i].base != p {
		return span{}, false
	}
	sp := s.spans[i]
	s.spans = append(s.spans[:i], s.spans[i+1:]...)
	return sp, true
}
