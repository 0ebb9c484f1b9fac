package host

import (
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/device"
)

// Device memory.
//
// Each device has its own virtual address space: addresses start at
// addrBase + n<<spaceBits for device n, are 256-byte aligned, and are never 0.
// Every address range handed out is a slot of one size class; a slot is
// created once, by bumping the top of the space, and is reused for later
// allocations of its class after it is freed. Slots are therefore created in
// address order, and d.slots (append-only) stays sorted, so resolving an
// interior pointer is a binary search: O(log n).
//
// A slot's backing is Go memory (a []uint64, so 8-byte aligned, viewed as
// bytes). Freed slots up to cacheMaxClass keep their backing, up to
// cacheLimit bytes in all, so a repeated alloc/free of one size allocates
// nothing; larger freed slots drop their backing to the garbage collector and
// keep only their address range.

const (
	ptrBits   = 32 << (^uintptr(0) >> 63)
	spaceBits = 40*(ptrBits/64) + 24*(1-ptrBits/64) // 1 TiB per device on 64-bit hosts
	addrAlign = 256

	smallClassMax = 4096     // classes are multiples of 256 up to here
	cacheMaxClass = 64 << 20 // freed slots of larger classes drop their backing
	numClasses    = 16 + 4*(64-13)
)

// addrBase is the first address of device 0's space.
var addrBase = func() uint64 {
	if ptrBits == 64 {
		return 0x7e00_0000_0000
	}
	return 0x4000_0000
}()

// slot is one address range of one size class.
type slot struct {
	addr  uint64
	span  uint64 // bytes of address space: the class size
	size  int    // bytes asked for by the live allocation
	class int
	live  bool
	mem   []byte // backing; len >= size while live; may be nil when free
}

// sizeClass returns the class of an allocation of size bytes (size > 0) and
// the class's size, a multiple of 256: multiples of 256 up to 4 KiB, then
// four classes per power of two (at most 25% waste of address space).
func sizeClass(size int) (class int, span uint64) {
	s := uint64(size)
	if s <= smallClassMax {
		c := (s + addrAlign - 1) / addrAlign
		return int(c) - 1, c * addrAlign
	}
	k := bits.Len64(s - 1) // 2^(k-1) < s <= 2^k, k >= 13
	step := uint64(1) << (k - 3)
	span = (s + step - 1) / step * step
	return 16 + (k-13)*4 + int(span/step-5), span
}

// newBacking returns n bytes of Go memory, 8-byte aligned.
func newBacking(n int) []byte {
	return device.Bytes(make([]uint64, (n+7)/8))
}

// Alloc allocates size bytes of device memory; see device.Device. The memory
// is not initialised (a reused block keeps its old contents). Safe for
// concurrent use.
func (d *Device) Alloc(size int) (device.Buffer, error) {
	if size <= 0 || uint64(size) > d.info.MaxAlloc {
		return device.Buffer{}, device.Errorf(d.id, "alloc", device.CodeInvalidArgument,
			"size %d: want 1..%d bytes (MaxAlloc)", size, d.info.MaxAlloc)
	}
	class, span := sizeClass(size)
	need := size
	if span <= cacheMaxClass {
		need = int(span) // cacheable: back the whole class so any size of it fits
	}

	b, err, short := d.alloc(size, class, span, need)
	if short && d.shared.reclaim() > 0 {
		// Other devices' free blocks held the memory: try once more.
		b, err, _ = d.alloc(size, class, span, need)
	}
	return b, err
}

// alloc allocates size bytes of class (span bytes of address space), with
// need bytes of backing if no free block of the class has some. short
// reports that the shared budget had no room.
func (d *Device) alloc(size, class int, span uint64, need int) (b device.Buffer, err error, short bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var s *slot
	if free := d.free[class]; len(free) > 0 {
		s = &d.slots[free[len(free)-1]]
		d.free[class] = free[:len(free)-1]
		if s.mem != nil {
			d.cached -= int64(len(s.mem))
			if len(s.mem) < size {
				d.release(s)
			}
		}
	} else {
		if d.top+span > d.limit {
			return device.Buffer{}, device.Errorf(d.id, "alloc", device.CodeOutOfResources,
				"size %d: device address space %s is exhausted", size, d.spaceString()), false
		}
		d.slots = append(d.slots, slot{addr: d.top, span: span, class: class})
		d.top += span
		s = &d.slots[len(d.slots)-1]
	}
	if s.mem == nil {
		n := int64(backingSize(need))
		ok := d.shared.take(n)
		if !ok && d.dropCache() > 0 {
			ok = d.shared.take(n)
		}
		if !ok {
			d.free[class] = append(d.free[class], d.index(s))
			held, devs := d.shared.state()
			return device.Buffer{}, device.Errorf(d.id, "alloc", device.CodeOutOfResources,
				"size %d: the %d host devices hold %d bytes of the %d they share (this one %d in live allocations); free some memory",
				size, devs, held, d.shared.limit, d.liveBytes), true
		}
		s.mem = newBacking(need)
		d.backing += n
	}
	s.live, s.size = true, size
	d.liveBytes += int64(size)
	d.liveN++
	return device.Buffer{Ptr: device.DevicePtr(uintptr(s.addr)), Size: size}, nil, false
}

// backingSize is the length of newBacking(n).
func backingSize(n int) int { return (n + 7) / 8 * 8 }

// release gives the backing of slot s back to the garbage collector and
// its bytes back to the shared budget. d.mu is held.
func (d *Device) release(s *slot) {
	d.backing -= int64(len(s.mem))
	d.shared.give(int64(len(s.mem)))
	s.mem = nil
}

// Free releases an allocation made by Alloc; p must be its start. Freeing a
// pointer that is not a live allocation is a CodeInvalidArgument error and
// changes nothing. Safe for concurrent use.
func (d *Device) Free(p device.DevicePtr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := d.find(uint64(p))
	if i < 0 || d.slots[i].addr != uint64(p) || !d.slots[i].live {
		return device.Errorf(d.id, "free", device.CodeInvalidArgument,
			"pointer %v is not the start of a live allocation", p)
	}
	s := &d.slots[i]
	s.live = false
	d.liveBytes -= int64(s.size)
	d.liveN--
	s.size = 0
	if s.span <= cacheMaxClass && d.cached+int64(len(s.mem)) <= d.cacheLimit {
		d.cached += int64(len(s.mem))
	} else {
		d.release(s)
	}
	d.free[s.class] = append(d.free[s.class], int32(i))
	return nil
}

// dropCache gives the backing of every free slot back to the garbage
// collector, and its bytes to the shared budget, and returns how many
// bytes that was. d.mu is held.
func (d *Device) dropCache() (dropped int64) {
	for _, free := range d.free {
		for _, i := range free {
			if s := &d.slots[i]; s.mem != nil {
				dropped += int64(len(s.mem))
				d.release(s)
			}
		}
	}
	d.cached = 0
	return dropped
}

func (d *Device) index(s *slot) int32 {
	return int32((uintptr(unsafe.Pointer(s)) - uintptr(unsafe.Pointer(&d.slots[0]))) / unsafe.Sizeof(slot{}))
}

// find returns the index of the slot holding address a, or -1. d.mu is held.
func (d *Device) find(a uint64) int {
	lo, hi := 0, len(d.slots) // the first slot with addr > a is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if d.slots[m].addr <= a {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 || a >= d.slots[lo-1].addr+d.slots[lo-1].span {
		return -1
	}
	return lo - 1
}

// MemInUse returns the bytes and the number of live allocations made by
// Alloc and not yet freed (device.MemInfo). Cached free blocks do not count.
func (d *Device) MemInUse() (bytes int64, allocs int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.liveBytes, d.liveN
}

// Resolve returns the device memory [p, p+n) as bytes: the device's own
// storage, which the caller may read and write until the allocation is freed.
// p may point inside an allocation. The range must lie within one live
// allocation; otherwise the error (CodeInvalidArgument) names the range asked
// for and the allocation found there, if any. Safe for concurrent use.
func (d *Device) Resolve(p device.DevicePtr, n int) ([]byte, error) {
	if n < 0 {
		return nil, device.Errorf(d.id, "resolve", device.CodeInvalidArgument, "range at %v: negative length %d", p, n)
	}
	b, err := d.resolveTail(p, n, "resolve")
	if err != nil {
		return nil, err
	}
	return b[:n:n], nil
}

// resolveTail returns the device memory from p to the end of its allocation,
// checking that at least n bytes are there.
func (d *Device) resolveTail(p device.DevicePtr, n int, op string) ([]byte, error) {
	a := uint64(p)
	d.mu.Lock()
	i := d.find(a)
	if i < 0 || !d.slots[i].live {
		d.mu.Unlock()
		if n == 0 {
			return nil, device.Errorf(d.id, op, device.CodeInvalidArgument,
				"pointer %v is not inside any live allocation", p)
		}
		return nil, device.Errorf(d.id, op, device.CodeInvalidArgument,
			"range [%v,%#x) is not inside any live allocation", p, a+uint64(n))
	}
	s := &d.slots[i]
	off := a - s.addr
	if off+uint64(n) > uint64(s.size) {
		base, size := s.addr, s.size
		d.mu.Unlock()
		return nil, device.Errorf(d.id, op, device.CodeInvalidArgument,
			"range [%v,%#x) extends past allocation [%#x,%#x)", p, a+uint64(n), base, base+uint64(size))
	}
	b := s.mem[off:s.size:s.size]
	d.mu.Unlock()
	return b, nil
}

// spaceString describes the device's address space, for Info.Extra.
func (d *Device) spaceString() string {
	return fmt.Sprintf("[%#x,%#x)", d.base, d.limit)
}

// budget is the memory that host devices sharing it (every host device of
// a process, outside tests) may hold together: the backing of their live
// allocations and of the free blocks they keep for reuse. It exists because
// the devices all take their memory from one machine; a budget per device
// would let 64 devices promise 64 halves of it. Lock order: a device's mu,
// then budget.mu.
type budget struct {
	limit int64  // bytes the devices may hold together
	how   string // where the machine's memory size came from

	mu   sync.Mutex
	held int64
	devs []*Device
}

// processBudget is the budget of the process's host devices: half of the
// memory the process may use.
var processBudget = sync.OnceValue(func() *budget {
	total, how := PhysicalMemory()
	return newBudget(int64(min(total/2, 1<<62)), how)
})

func newBudget(limit int64, how string) *budget { return &budget{limit: limit, how: how} }

// add makes d one of the devices sharing b.
func (b *budget) add(d *Device) {
	b.mu.Lock()
	b.devs = append(b.devs, d)
	b.mu.Unlock()
}

// take reserves n bytes, reporting false, and reserving nothing, if that
// would pass the limit.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.limit-b.held {
		return false
	}
	b.held += n
	return true
}

// give returns n bytes taken.
func (b *budget) give(n int64) {
	b.mu.Lock()
	b.held -= n
	b.mu.Unlock()
}

// state returns the bytes held and the number of devices sharing b.
func (b *budget) state() (held int64, devs int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held, len(b.devs)
}

// reclaim drops the free blocks every device of b keeps for reuse, and
// returns how many bytes that gave back. No device lock may be held.
func (b *budget) reclaim() int64 {
	b.mu.Lock()
	devs := b.devs
	b.mu.Unlock()
	var n int64
	for _, d := range devs {
		d.mu.Lock()
		n += d.dropCache()
		d.mu.Unlock()
	}
	return n
}
