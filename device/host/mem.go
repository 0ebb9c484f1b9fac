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
// A slot's backing, up to cacheMaxClass, is Go memory (a []uint64, so
// 8-byte aligned, viewed as bytes). Freed slots of those classes keep their
// backing, up to cacheLimit bytes in all, so a repeated alloc/free of one
// size allocates nothing; past the cache they drop it to the garbage
// collector and keep only their address range. A slot of a larger class is
// backed by an anonymous mapping of its whole class size (bigBacking):
// made in one system call, with no zeroing (the kernel gives zero pages at
// first touch), and kept with the slot; freeing the slot hands its pages
// back to the operating system at once (releasePages), so that a program
// that unmaps a few large arrays does not keep their memory.
//
// Backing is made without d.mu held: a large allocation takes time (Go
// zeroes its memory; a mapping faults its pages in later, outside any lock)
// that the device's other allocations, frees and resolves need not wait
// for. Its slot is neither live nor free meanwhile, so nothing else uses
// it.

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
	// big: mem is an anonymous mapping of span bytes, kept while the
	// slot exists; held is how many of its bytes the budget counts (0
	// while the slot is free: its pages went back to the system).
	big  bool
	held int64
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
// reports that the shared budget had no room. The backing is made with
// d.mu released (see the comment at the top of this file).
func (d *Device) alloc(size, class int, span uint64, need int) (b device.Buffer, err error, short bool) {
	big := span > cacheMaxClass
	d.mu.Lock()
	var s *slot
	if free := d.free[class]; len(free) > 0 {
		s = &d.slots[free[len(free)-1]]
		d.free[class] = free[:len(free)-1]
		if s.mem != nil && !s.big {
			d.cached -= int64(len(s.mem))
			if len(s.mem) < size {
				d.release(s)
			}
		}
	} else {
		if d.top+span > d.limit {
			d.mu.Unlock()
			return device.Buffer{}, device.Errorf(d.id, "alloc", device.CodeOutOfResources,
				"size %d: device address space %s is exhausted", size, d.spaceString()), false
		}
		d.slots = append(d.slots, slot{addr: d.top, span: span, class: class, big: big})
		d.top += span
		s = &d.slots[len(d.slots)-1]
	}
	if s.mem == nil || s.big {
		// The budget counts a mapping's bytes while its slot is live,
		// and Go memory while it is held.
		n := int64(backingSize(need))
		ok := d.shared.take(n)
		if !ok && d.dropCache() > 0 {
			ok = d.shared.take(n)
		}
		if !ok {
			d.free[class] = append(d.free[class], d.index(s))
			held, devs := d.shared.state()
			err := device.Errorf(d.id, "alloc", device.CodeOutOfResources,
				"size %d: the %d host devices hold %d bytes of the %d they share (this one %d in live allocations); free some memory",
				size, devs, held, d.shared.limit, d.liveBytes)
			d.mu.Unlock()
			return device.Buffer{}, err, true
		}
		d.backing += n
		if s.mem == nil {
			i := d.index(s)
			d.mu.Unlock()
			mem, err := makeBacking(big, need, span)
			d.mu.Lock()
			s = &d.slots[i] // d.slots may have grown meanwhile
			if err != nil {
				d.backing -= n
				d.shared.give(n)
				d.free[class] = append(d.free[class], i)
				d.mu.Unlock()
				return device.Buffer{}, device.Errorf(d.id, "alloc", device.CodeOutOfResources, "size %d: %v", size, err), false
			}
			s.mem = mem
		}
		s.held = n
	}
	s.live, s.size = true, size
	d.liveBytes += int64(size)
	d.liveN++
	d.mu.Unlock()
	return device.Buffer{Ptr: device.DevicePtr(uintptr(s.addr)), Size: size}, nil, false
}

// makeBacking makes a slot's backing: need bytes of Go memory, or for a
// big class a mapping of its span bytes.
func makeBacking(big bool, need int, span uint64) ([]byte, error) {
	if backingHook != nil {
		backingHook(need)
	}
	if big {
		return bigBacking(span)
	}
	return newBacking(need), nil
}

// backingHook, when set (by tests), is called before a slot's backing is
// made, with the bytes it needs.
var backingHook func(need int)

// backingSize is the length of newBacking(n).
func backingSize(n int) int { return (n + 7) / 8 * 8 }

// release gives the backing of slot s back: Go memory to the garbage
// collector, a big slot's pages to the operating system (its mapping
// stays, for the slot's next allocation), and its bytes to the shared
// budget. d.mu is held.
func (d *Device) release(s *slot) {
	if s.big {
		if s.held > 0 {
			releasePages(s.mem)
			d.backing -= s.held
			d.shared.give(s.held)
			s.held = 0
		}
		return
	}
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
	if !s.big && d.cached+int64(len(s.mem)) <= d.cacheLimit {
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
			if s := &d.slots[i]; s.mem != nil && !s.big { // a free big slot holds nothing
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
