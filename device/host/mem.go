package host

import (
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/generic"
	"github.com/gompt/gompt/internal/sysmem"
)

// Device memory.
//
// The live allocations, the checks of Alloc, Free and of every pointer a
// queue is given, and the cache of freed blocks are the generic device's
// (device/generic): the host device only makes and releases memory
// (MemAlloc, MemFree), and an allocation's handle there is its memory, so
// a queue's Lookup gives the bytes without a second lock.
//
// Each device has its own virtual address space: addresses start at
// addrBase + n<<spaceBitsFor(count) for device n of count, are 256-byte
// aligned, and are never 0.
// Every address range handed out is a slot of one size class
// (generic.SizeClass); a slot is created once, by bumping the top of the
// space, and is reused for later allocations of its class after it is
// released. Slots are therefore created in address order, and d.slots
// (append-only) stays sorted, so MemFree finds one by binary search.
//
// A slot's backing, up to cacheMaxClass, is Go memory (a []uint64, so
// 8-byte aligned, viewed as bytes) of its class's whole size, so that the
// generic device's cache can hand a freed block to any later allocation of
// its class: a repeated alloc/free of one size allocates nothing and never
// reaches MemAlloc. Blocks the cache gives back (it holds cacheLimit bytes
// at most) drop their backing to the garbage collector and keep only
// their address range. A slot of a larger class is backed by an anonymous
// mapping of its whole class size (bigBacking): made in one system call,
// with no zeroing (the kernel gives zero pages at first touch), and kept
// with the slot; releasing the slot hands its pages back to the operating
// system at once (releasePages), so that a program that unmaps a few large
// arrays does not keep their memory.
//
// Backing is made without d.mu held: a large allocation takes time (Go
// zeroes its memory; a mapping faults its pages in later, outside any lock)
// that the device's other allocations, frees and lookups need not wait
// for. Its slot is on no free list meanwhile, so nothing else uses it.

const (
	ptrBits   = 32 << (^uintptr(0) >> 63)
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

// spaceBitsFor returns log2 of the bytes of address space each device
// gets when the plugin makes count devices: 1 TiB on 64-bit hosts. On
// 32-bit hosts, whose device addresses must fit a pointer (tools see them
// as void*), it is the largest power of two of which count fit between
// addrBase and 4 GiB: 2 GiB for one device, 32 MiB for MaxDevices.
func spaceBitsFor(count int) int {
	if ptrBits == 64 {
		return 40
	}
	return bits.Len64((1<<32-addrBase)/uint64(max(count, 1))) - 1
}

// slot is one address range of one size class.
type slot struct {
	addr  uint64
	span  uint64 // bytes of address space: the class size
	class int
	mem   []byte // backing while allocated (len >= span, or the mapping); nil when released
	// big: mem is an anonymous mapping of span bytes, kept while the
	// slot exists; held is how many of its bytes the budget counts (0
	// while the slot is released: its pages went back to the system).
	big  bool
	held int64
}

// sizeClass returns the class of an allocation of size bytes (size > 0) and
// the class's size (generic.SizeClass): multiples of 256 up to 4 KiB, then
// four classes per power of two (at most 25% waste of address space).
func sizeClass(size int) (class int, span uint64) {
	c, sp := generic.SizeClass(size)
	return c, uint64(sp)
}

// newBacking returns n bytes of Go memory, 8-byte aligned.
func newBacking(n int) []byte {
	return device.Bytes(make([]uint64, (n+7)/8))
}

// MemAlloc allocates an allocation of size bytes, with need bytes of
// backing (generic.Driver, through driver: the Device exports only the
// checked Alloc): a released slot of size's class, or a new one. need is
// the class's whole size for a block the generic cache may keep, so that
// any size of the class fits it. The memory is not initialised. When the
// budget the host devices share has no room, the blocks every device
// keeps for reuse are dropped and it tries once more. Safe for
// concurrent use.
func (d driver) MemAlloc(size, need int) (device.DevicePtr, []byte, error) {
	class, span := sizeClass(size)
	p, mem, err, short := d.alloc(size, class, span, need)
	if short && d.shared.reclaim() > 0 {
		// Freed blocks kept for reuse held the memory: try once more.
		p, mem, err, _ = d.alloc(size, class, span, need)
	}
	return p, mem, err
}

// alloc allocates size bytes of class (span bytes of address space), with
// need bytes of backing. short reports that the shared budget had no room.
// The backing is made with d.mu released (see the comment at the top of
// this file).
func (d *Device) alloc(size, class int, span uint64, need int) (p device.DevicePtr, mem []byte, err error, short bool) {
	big := span > cacheMaxClass
	d.mu.Lock()
	d.reclaimRetired()
	var s *slot
	if free := d.free[class]; len(free) > 0 {
		s = &d.slots[free[len(free)-1]]
		d.free[class] = free[:len(free)-1]
	} else {
		if d.top+span > d.limit {
			d.mu.Unlock()
			return 0, nil, device.Errorf(d.ID(), "alloc", device.CodeOutOfResources,
				"size %d: device address space %s is exhausted", size, d.spaceString()), false
		}
		d.slots = append(d.slots, slot{addr: d.top, span: span, class: class, big: big})
		d.top += span
		s = &d.slots[len(d.slots)-1]
	}
	// The budget counts a mapping's bytes while its slot is allocated,
	// and Go memory while it is held.
	n := int64(backingSize(need))
	if !d.shared.take(n) {
		d.free[class] = append(d.free[class], d.index(s))
		d.mu.Unlock()
		held, devs := d.shared.state()
		live, _ := d.MemInUse()
		return 0, nil, device.Errorf(d.ID(), "alloc", device.CodeOutOfResources,
			"size %d: the %d host devices hold %d bytes of the %d they share (this one %d in live allocations); free some memory",
			size, devs, held, d.shared.limit, live), true
	}
	d.backing += n
	if s.mem == nil {
		i := d.index(s)
		d.mu.Unlock()
		m, err := makeBacking(big, need, span)
		d.mu.Lock()
		s = &d.slots[i] // d.slots may have grown meanwhile
		if err != nil {
			d.backing -= n
			d.shared.give(n)
			d.free[class] = append(d.free[class], i)
			d.mu.Unlock()
			return 0, nil, device.Errorf(d.ID(), "alloc", device.CodeOutOfResources, "size %d: %v", size, err), false
		}
		s.mem = m
	}
	s.held = n
	p, mem = device.DevicePtr(uintptr(s.addr)), s.mem
	d.mu.Unlock()
	return p, mem, nil, false
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
	d.backing -= s.held
	d.shared.give(s.held)
	s.held = 0
	if s.big {
		releasePages(s.mem)
		return
	}
	s.mem = nil
}

// MemFree releases the slot at p (generic.Driver): its backing goes back
// (release), and the slot to its class's free list for a later MemAlloc.
// Safe for concurrent use.
func (d driver) MemFree(p device.DevicePtr, _ []byte, _ int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := d.find(uint64(p))
	if i < 0 || d.slots[i].addr != uint64(p) || d.slots[i].held == 0 {
		return device.Errorf(d.ID(), "free", device.CodeInvalidArgument, "pointer %v is not the start of an allocated slot", p)
	}
	s := &d.slots[i]
	if s.big && d.queued.Load() != 0 {
		// Work queued before the free may still use the mapping, which
		// the slot keeps for its next allocation: the slot waits, its
		// pages in place, until no queued work is left (reclaimRetired).
		d.backing -= s.held
		d.shared.give(s.held)
		s.held = 0
		d.retired = append(d.retired, int32(i))
		return nil
	}
	d.release(s)
	d.free[s.class] = append(d.free[s.class], int32(i))
	return nil
}

// reclaimRetired puts the big slots freed while work was queued back on
// their classes' free lists, their pages released, once no operation is
// queued on the device's queues: the work queued before their frees is
// done. d.mu is held.
func (d *Device) reclaimRetired() {
	if len(d.retired) == 0 || d.queued.Load() != 0 {
		return
	}
	for _, i := range d.retired {
		s := &d.slots[i]
		releasePages(s.mem)
		d.free[s.class] = append(d.free[s.class], i)
	}
	d.retired = d.retired[:0]
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

// Resolve returns the device memory [p, p+n) as bytes: the device's own
// storage, which the caller may read and write until the allocation is freed.
// p may point inside an allocation. The range must lie within one live
// allocation; otherwise the error (CodeInvalidArgument) names the range asked
// for and the allocation found there, if any. Safe for concurrent use.
func (d *Device) Resolve(p device.DevicePtr, n int) ([]byte, error) {
	mem, off, _, err := d.Lookup("resolve", p, n)
	if err != nil {
		return nil, err
	}
	return mem[off : off+n : off+n], nil
}

// resolveTail returns the device memory from p to the end of its
// allocation, for a launch's buffer argument.
func (d *Device) resolveTail(p device.DevicePtr, op string) ([]byte, error) {
	mem, off, size, err := d.Lookup(op, p, 0)
	if err != nil {
		return nil, err
	}
	return mem[off:size:size], nil
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
	total, how := sysmem.PhysicalMemory()
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

// reclaim drops the freed blocks every device of b keeps for reuse
// (generic.Device.Trim), and returns how many bytes that gave back. No
// device lock may be held.
func (b *budget) reclaim() int64 {
	b.mu.Lock()
	devs := b.devs
	b.mu.Unlock()
	var n int64
	for _, d := range devs {
		dropped, _ := d.Trim() // MemFree of a block the cache held does not fail
		n += dropped
	}
	return n
}
