package target

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/internal/callsite"
	"github.com/gompt/gompt/ompt"
)

// hostMem is the initial device's side of the device memory routines:
// AllocMem on the initial device hands out Go memory kept alive here.
type hostMem struct {
	mu sync.Mutex
	m  map[DevicePtr][]byte
}

func (h *hostMem) alloc(size int) DevicePtr {
	b := make([]uint64, (size+7)/8)
	p := DevicePtr(uintptr(unsafe.Pointer(&b[0])))
	h.mu.Lock()
	if h.m == nil {
		h.m = map[DevicePtr][]byte{}
	}
	h.m[p] = device.Bytes(b)[:size]
	h.mu.Unlock()
	return p
}

func (h *hostMem) free(p DevicePtr) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.m[p]; !ok {
		return fmt.Errorf("target: free %v on the initial device: not a live allocation (freed twice, or never allocated by target.AllocMem)", p)
	}
	delete(h.m, p)
	return nil
}

// initialAllocMax is the largest AllocMem on the initial device: half of
// the memory the process may use, the budget a host offload device has.
// Larger sizes fail with an error rather than Go's fatal out-of-memory.
var initialAllocMax = sync.OnceValue(func() uint64 {
	total, _ := host.PhysicalMemory()
	return total / 2
})

// resolve returns the memory from p to the end of its allocation.
func (h *hostMem) resolve(p DevicePtr) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for base, b := range h.m {
		if p >= base && p < base+DevicePtr(len(b)) {
			return b[p-base:], nil
		}
	}
	return nil, fmt.Errorf("%v is not in any initial-device allocation made by target.AllocMem", p)
}

// AllocMem allocates size bytes on device dev (omp_target_alloc). On the
// initial device it returns Go memory owned by the runtime. Free it with
// FreeMem.
//
//go:noinline
func AllocMem(size int, dev int) (DevicePtr, error) {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	n, d, err := open(dev)
	if err != nil {
		return 0, err
	}
	if size <= 0 {
		return 0, fmt.Errorf("target: alloc of %d bytes: size must be positive", size)
	}
	r := ompt.RoutineBegin(pc)
	defer r.End()
	if d == nil {
		if limit := initialAllocMax(); uint64(size) > limit {
			return 0, fmt.Errorf("target: alloc of %d bytes on the initial device: more than %d, half of the memory this process may use", size, limit)
		}
		r.DataOpBegin(ompt.DataOpAlloc, 0, ompt.InitialDevice, 0, ompt.InitialDevice, uint64(size))
		p := state().initial.alloc(size)
		r.DataOpEnd(uintptr(p))
		return p, nil
	}
	r.DataOpBegin(ompt.DataOpAlloc, 0, ompt.InitialDevice, 0, n, uint64(size))
	t0, tr := traceStart(r, d)
	b, err := d.d.Alloc(size)
	r.DataOpEnd(uintptr(b.Ptr))
	if tr {
		routineRecord(r, d, t0)
	}
	if err != nil {
		return 0, err
	}
	d.amu.Lock()
	d.allocs[b.Ptr] = size
	d.amu.Unlock()
	return b.Ptr, nil
}

// FreeMem releases memory from AllocMem (omp_target_free). Freeing a pointer
// that AllocMem did not return, or freeing it twice, is an error.
//
//go:noinline
func FreeMem(p DevicePtr, dev int) error {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	n, d, err := open(dev)
	if err != nil {
		return err
	}
	r := ompt.RoutineBegin(pc)
	defer r.End()
	if d == nil {
		r.DataOpBegin(ompt.DataOpDelete, uintptr(p), ompt.InitialDevice, 0, ompt.InitialDevice, 0)
		err := state().initial.free(p)
		r.DataOpEnd(0)
		return err
	}
	d.amu.Lock()
	_, ok := d.allocs[p]
	delete(d.allocs, p)
	d.amu.Unlock()
	if !ok {
		return fmt.Errorf("target: free %v on device %d (%s): not a live allocation (freed twice, or never allocated by target.AllocMem)", p, n, d.id)
	}
	r.DataOpBegin(ompt.DataOpDelete, uintptr(p), n, 0, ompt.InitialDevice, 0)
	t0, tr := traceStart(r, d)
	err = d.d.Free(p)
	r.DataOpEnd(0)
	if tr {
		routineRecord(r, d, t0)
	}
	return err
}

// Loc is one side of a memcpy: device memory or host memory.
type Loc struct {
	dev  int
	ptr  DevicePtr
	host []byte
	isHo bool
	bad  *elemType // Host's T, when it holds Go pointers: the routine fails
}

// On names device memory at p on device dev (from AllocMem, or MappedPtr).
func On(dev int, p DevicePtr) Loc { return Loc{dev: dev, ptr: p} }

// Host names the program's own memory s (on the initial device). T must
// be free of Go pointers (numbers, and arrays and structs of them): a
// routine given another fails before it copies, naming the type.
func Host[T any](s []T) Loc { return Loc{host: device.Bytes(s), isHo: true, bad: badElem[T]()} }

// Add returns l advanced by off bytes.
func (l Loc) Add(off int) Loc {
	if l.isHo {
		if off >= 0 && off <= len(l.host) {
			l.host = l.host[off:]
		} else {
			l.host, l.ptr = nil, DevicePtr(off) // reported by Memcpy
		}
		return l
	}
	l.ptr += DevicePtr(off)
	return l
}

// end is a resolved memcpy side: host bytes, or a device and address with
// the bytes available from there to the end of its allocation.
type end struct {
	d     *dev // nil for host memory
	num   int  // device number for the tools: -1 for host memory
	p     DevicePtr
	host  []byte
	avail int
}

// endOf resolves l; what names it in errors ("memcpy source").
func (rs *runtimeState) endOf(l Loc, what string) (end, error) {
	if l.bad != nil {
		return end{}, pointersErr(what, l.bad)
	}
	if l.isHo {
		if l.host == nil && l.ptr != 0 {
			return end{}, fmt.Errorf("target: %s: offset %d is outside the host slice", what, int(l.ptr))
		}
		return end{host: l.host, avail: len(l.host), num: ompt.InitialDevice}, nil
	}
	n, d, err := open(l.dev)
	if err != nil {
		return end{}, fmt.Errorf("target: %s: %w", what, err)
	}
	if d == nil {
		b, err := rs.initial.resolve(l.ptr)
		if err != nil {
			return end{}, fmt.Errorf("target: %s: %w", what, err)
		}
		return end{host: b, avail: len(b), num: ompt.InitialDevice}, nil
	}
	avail, err := d.extent(l.ptr)
	if err != nil {
		return end{}, fmt.Errorf("target: %s: %w", what, err)
	}
	return end{d: d, num: n, p: l.ptr, avail: avail}, nil
}

// extent returns how many bytes lie from p to the end of the allocation
// or mapped buffer that holds p.
func (d *dev) extent(p DevicePtr) (int, error) {
	d.amu.Lock()
	for base, size := range d.allocs {
		if p >= base && p < base+DevicePtr(size) {
			d.amu.Unlock()
			return size - int(p-base), nil
		}
	}
	d.amu.Unlock()
	if n, ok := d.table.DeviceExtent(p); ok {
		return n, nil
	}
	return 0, fmt.Errorf("%v is not inside any allocation or mapped buffer on device %d (%s)", p, d.num, d.id)
}

// Memset sets n bytes at dst to value (omp_target_memset), on any device
// including the initial device; dst's range must lie inside one
// allocation, mapped buffer or slice. It returns when the memory is set.
//
//go:noinline
func Memset(dst Loc, value byte, n int) error {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	if n < 0 {
		return fmt.Errorf("target: memset of %d bytes: length must not be negative", n)
	}
	de, err := state().endOf(dst, "memset destination")
	if err != nil {
		return err
	}
	if n > de.avail {
		return fmt.Errorf("target: memset of %d bytes: out of bounds, only %d bytes there", n, de.avail)
	}
	r := ompt.RoutineBegin(pc)
	defer r.End()
	r.DataOpBegin(ompt.DataOpMemset, 0, ompt.InitialDevice, de.address(0), de.num, uint64(n))
	t0, tr := traceStart(r, de.d)
	if de.d == nil {
		b := de.host[:n]
		for i := range b {
			b[i] = value
		}
	} else {
		// The contract has no fill operation: stage a filled host buffer.
		b := make([]byte, n)
		if value != 0 {
			for i := range b {
				b[i] = value
			}
		}
		err = withQueue(de.d, func(q device.Queue) error { return q.CopyIn(de.p, b) })
	}
	r.DataOpEnd(de.address(0))
	if tr {
		routineRecord(r, de.d, t0)
	}
	return err
}

// seg is one contiguous piece of a copy: offsets from each side's start.
type seg struct{ dst, src, n int }

// Memcpy copies n bytes from src to dst (omp_target_memcpy), between any
// two devices including the initial device. Both ranges must lie inside
// one allocation, mapped buffer or slice; it returns when the copy is done.
//
//go:noinline
func Memcpy(dst, src Loc, n int) error {
	if n < 0 {
		return fmt.Errorf("target: memcpy of %d bytes: length must not be negative", n)
	}
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	return copySegs(pc, dst, src, []seg{{0, 0, n}})
}

// address returns the address of offset off of a memcpy side, for the tools.
func (e *end) address(off int) uintptr {
	if e.d != nil {
		return uintptr(e.p) + uintptr(off)
	}
	return addr(e.host) + uintptr(off)
}

// copySegs copies each segment from src to dst, as one device memory
// routine called at pc: one data op per segment.
func copySegs(pc uintptr, dst, src Loc, segs []seg) error {
	rs := state()
	de, err := rs.endOf(dst, "memcpy destination")
	if err != nil {
		return err
	}
	se, err := rs.endOf(src, "memcpy source")
	if err != nil {
		return err
	}
	for _, s := range segs {
		if s.dst+s.n > de.avail {
			return fmt.Errorf("target: memcpy of %d bytes at destination offset %d: out of bounds, only %d bytes there", s.n, s.dst, de.avail)
		}
		if s.src+s.n > se.avail {
			return fmt.Errorf("target: memcpy of %d bytes at source offset %d: out of bounds, only %d bytes there", s.n, s.src, se.avail)
		}
	}
	r := ompt.RoutineBegin(pc)
	defer r.End()
	if r != nil {
		return copyTraced(r, &de, &se, segs)
	}
	return copyPlain(&de, &se, segs)
}

// copyTraced copies segment by segment, each a data op for the tools.
func copyTraced(r *ompt.Target, de, se *end, segs []seg) error {
	op := ompt.DataOpTransferFromDevice // device to host, and device to device
	if se.d == nil {
		op = ompt.DataOpTransferToDevice
	}
	rd := de.d // the record's device: the destination, else the source
	if rd == nil {
		rd = se.d
	}
	for _, s := range segs {
		r.DataOpBegin(op, se.address(s.src), se.num, de.address(s.dst), de.num, uint64(s.n))
		t0, tr := traceStart(r, rd)
		err := copyPlain(de, se, []seg{s})
		r.DataOpEnd(de.address(s.dst))
		if tr {
			routineRecord(r, rd, t0)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// copyPlain does the copies of segs on the devices' queues.
func copyPlain(de, se *end, segs []seg) error {
	switch {
	case de.d == nil && se.d == nil:
		for _, s := range segs {
			copy(de.host[s.dst:s.dst+s.n], se.host[s.src:s.src+s.n])
		}
		return nil
	case de.d != nil && se.d == nil:
		return withQueue(de.d, func(q device.Queue) error {
			for _, s := range segs {
				if err := q.CopyIn(de.p+DevicePtr(s.dst), se.host[s.src:s.src+s.n]); err != nil {
					return err
				}
			}
			return nil
		})
	case de.d == nil && se.d != nil:
		return withQueue(se.d, func(q device.Queue) error {
			for _, s := range segs {
				if err := q.CopyOut(de.host[s.dst:s.dst+s.n], se.p+DevicePtr(s.src)); err != nil {
					return err
				}
			}
			return nil
		})
	case de.d == se.d:
		return withQueue(de.d, func(q device.Queue) error {
			for _, s := range segs {
				if err := q.Copy(de.p+DevicePtr(s.dst), se.p+DevicePtr(s.src), s.n); err != nil {
					return err
				}
			}
			return nil
		})
	}
	// Two different devices: stage each piece through host memory.
	for _, s := range segs {
		tmp := make([]byte, s.n)
		if err := withQueue(se.d, func(q device.Queue) error { return q.CopyOut(tmp, se.p+DevicePtr(s.src)) }); err != nil {
			return err
		}
		if err := withQueue(de.d, func(q device.Queue) error { return q.CopyIn(de.p+DevicePtr(s.dst), tmp) }); err != nil {
			return err
		}
	}
	return nil
}

// withQueue runs fn on a queue of d and waits for its work.
func withQueue(d *dev, fn func(q device.Queue) error) error {
	c, err := d.take()
	if err != nil {
		return err
	}
	// Routines record their times with the device clock: a queue that an
	// earlier traced construct left profiling would keep a timing per
	// operation here, never recycled.
	c.startTracing()
	return c.end(fn(c.q))
}

// MemcpyRect copies a rectangular subvolume of up to three dimensions
// (omp_target_memcpy_rect). elem is the element size in bytes; volume the
// number of elements copied per dimension; dstOff and srcOff the
// subvolume's origin in each array; dstDims and srcDims each array's full
// dimensions. All slices have the same length, 1 to 3; the last dimension
// varies fastest, as in C.
//
//go:noinline
func MemcpyRect(dst, src Loc, elem int, volume, dstOff, srcOff, dstDims, srcDims []int) error {
	nd := len(volume)
	if nd < 1 || nd > 3 {
		return fmt.Errorf("target: memcpy_rect: %d dimensions; 1 to 3 are supported", nd)
	}
	if elem <= 0 {
		return fmt.Errorf("target: memcpy_rect: element size %d must be positive", elem)
	}
	for _, s := range [][]int{dstOff, srcOff, dstDims, srcDims} {
		if len(s) != nd {
			return fmt.Errorf("target: memcpy_rect: volume has %d dimensions but offsets and dimensions have %d, %d, %d, %d",
				nd, len(dstOff), len(srcOff), len(dstDims), len(srcDims))
		}
	}
	for i := 0; i < nd; i++ {
		if volume[i] < 0 || dstOff[i] < 0 || srcOff[i] < 0 {
			return errors.New("target: memcpy_rect: negative volume or offset")
		}
		if dstOff[i]+volume[i] > dstDims[i] || srcOff[i]+volume[i] > srcDims[i] {
			return fmt.Errorf("target: memcpy_rect: dimension %d: volume %d at offsets %d (dst) and %d (src) exceeds dimensions %d and %d",
				i, volume[i], dstOff[i], srcOff[i], dstDims[i], srcDims[i])
		}
	}
	// Every offset lies inside its array, so arrays whose byte sizes fit
	// an int keep every offset computed below from overflowing.
	for _, dims := range [][]int{dstDims, srcDims} {
		size := uint64(elem)
		for _, n := range dims {
			hi, lo := bits.Mul64(size, uint64(n))
			if hi != 0 || lo > math.MaxInt {
				return fmt.Errorf("target: memcpy_rect: dimensions %v of %d-byte elements: more bytes than an int can count", dims, elem)
			}
			size = lo
		}
	}
	// Pad to three dimensions and walk the rows of the last one.
	pad := func(s []int, fill int) [3]int {
		var out [3]int
		for i := range out {
			out[i] = fill
		}
		copy(out[3-len(s):], s)
		return out
	}
	v, do, so, dd, sd := pad(volume, 1), pad(dstOff, 0), pad(srcOff, 0), pad(dstDims, 1), pad(srcDims, 1)
	var segs []seg
	for i := 0; i < v[0]; i++ {
		for j := 0; j < v[1]; j++ {
			dOff := (((do[0]+i)*dd[1]+(do[1]+j))*dd[2] + do[2]) * elem
			sOff := (((so[0]+i)*sd[1]+(so[1]+j))*sd[2] + so[2]) * elem
			segs = append(segs, seg{dOff, sOff, v[2] * elem})
		}
	}
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	return copySegs(pc, dst, src, segs)
}

// Associate makes device memory p+devOffset on dev the device copy of s
// (omp_target_associate_ptr). The runtime never frees it; map clauses
// find s present. T must be free of Go pointers, as for a map.
//
//go:noinline
func Associate[T any](s []T, p DevicePtr, devOffset int, dev int) error {
	if et := badElem[T](); et != nil {
		return pointersErr("associate", et)
	}
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	d, err := offloadDev(dev, "associate")
	if err != nil || d == nil {
		return err
	}
	b := device.Bytes(s)
	q := p + DevicePtr(devOffset)
	r := ompt.RoutineBegin(pc)
	defer r.End()
	r.DataOpBegin(ompt.DataOpAssociate, addr(b), ompt.InitialDevice, uintptr(q), d.num, uint64(len(b)))
	err = d.table.Associate(b, q)
	r.DataOpEnd(uintptr(q))
	return err
}

// Disassociate undoes Associate (omp_target_disassociate_ptr).
//
//go:noinline
func Disassociate[T any](s []T, dev int) error {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	d, err := offloadDev(dev, "disassociate")
	if err != nil || d == nil {
		return err
	}
	b := device.Bytes(s)
	p, _ := d.table.Translate(b)
	r := ompt.RoutineBegin(pc)
	defer r.End()
	r.DataOpBegin(ompt.DataOpDisassociate, addr(b), ompt.InitialDevice, uintptr(p), d.num, 0)
	err = d.table.Disassociate(b)
	r.DataOpEnd(uintptr(p))
	return err
}

// IsPresent reports whether s has a device copy on dev (omp_target_is_present).
// Everything is present on the initial device.
func IsPresent[T any](s []T, dev int) bool {
	d, err := offloadDev(dev, "is present")
	if err != nil {
		return false
	}
	return d == nil || d.table.IsPresent(device.Bytes(s))
}

// IsAccessible reports whether dev can use the host memory s directly
// (omp_target_is_accessible): true on the initial device and on devices
// that share memory with the host.
func IsAccessible[T any](s []T, dev int) bool {
	d, err := offloadDev(dev, "is accessible")
	if err != nil {
		return false
	}
	return d == nil || d.info.UnifiedMemory
}

// MappedPtr returns the device address of present host memory s on dev
// (omp_get_mapped_ptr).
func MappedPtr[T any](s []T, dev int) (DevicePtr, error) {
	d, err := offloadDev(dev, "mapped ptr")
	if err != nil {
		return 0, err
	}
	if d == nil {
		return DevicePtr(uintptr(unsafe.Pointer(unsafe.SliceData(s)))), nil
	}
	return d.table.Translate(device.Bytes(s))
}

// offloadDev resolves dev; nil (and no error) means the initial device.
func offloadDev(num int, op string) (*dev, error) {
	_, d, err := open(num)
	if err != nil {
		return nil, fmt.Errorf("target: %s: %w", op, err)
	}
	return d, nil
}
