package target

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"
	"weak"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/internal/omptrt"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/callsite"
)

// hostMem is the initial device's side of the device memory routines:
// AllocMem on the initial device hands out Go memory kept alive here, and
// MappedPtr on the initial device (which returns the slice's own address,
// as omp_get_mapped_ptr does) records the slice here, held weakly, so that
// On(initial, p) can find its bounds.
type hostMem struct {
	mu    sync.Mutex
	m     map[DevicePtr][]byte
	views map[DevicePtr]*hostView // by start address
}

// hostView is a slice of the program's memory whose address MappedPtr
// returned for the initial device. It does not keep the memory alive: once
// the garbage collector frees it, resolving an address in it is an error,
// and a cleanup drops the view.
type hostView struct {
	p weak.Pointer[byte]
	n int
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

// view records b, the memory of a slice MappedPtr was asked about on the
// initial device. Memory the Go runtime does not manage (from mmap, or C)
// is not recorded: On cannot bound it, and says so.
func (h *hostMem) view(b []byte) {
	if len(b) == 0 {
		return
	}
	p := DevicePtr(addr(b))
	h.mu.Lock()
	if v := h.views[p]; v != nil && v.n >= len(b) && v.p.Value() != nil {
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	v := &hostView{n: len(b)}
	if !addCleanup(&b[0], func(v *hostView) { h.drop(p, v) }, v) {
		return
	}
	v.p = weak.Make(&b[0])
	h.mu.Lock()
	if old := h.views[p]; old == nil || old.n < v.n || old.p.Value() == nil {
		if h.views == nil {
			h.views = map[DevicePtr]*hostView{}
		}
		h.views[p] = v
	}
	h.mu.Unlock()
	runtime.KeepAlive(b)
}

// drop removes view v at p, unless another view has replaced it.
func (h *hostMem) drop(p DevicePtr, v *hostView) {
	h.mu.Lock()
	if h.views[p] == v {
		delete(h.views, p)
	}
	h.mu.Unlock()
}

// addCleanup is runtime.AddCleanup, reporting false instead of panicking
// for memory the Go runtime does not manage.
func addCleanup(p *byte, fn func(*hostView), v *hostView) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	runtime.AddCleanup(p, fn, v)
	return true
}

// initialAllocMax is the largest AllocMem on the initial device: half of
// the memory the process may use, the budget the host offload devices
// share.
// Larger sizes fail with an error rather than Go's fatal out-of-memory.
var initialAllocMax = sync.OnceValue(func() uint64 {
	total, _ := host.PhysicalMemory()
	return total / 2
})

// resolve returns the memory from p to the end of its allocation, or of
// the longest live slice MappedPtr returned an address in.
func (h *hostMem) resolve(p DevicePtr) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for base, b := range h.m {
		if p >= base && p < base+DevicePtr(len(b)) {
			return b[p-base:], nil
		}
	}
	var out []byte
	gone := false
	for base, v := range h.views {
		if p < base || p >= base+DevicePtr(v.n) || int(base+DevicePtr(v.n)-p) <= len(out) {
			continue
		}
		first := v.p.Value()
		if first == nil {
			gone = true
			continue
		}
		out = unsafe.Slice(first, v.n)[p-base:]
	}
	if out != nil {
		return out, nil
	}
	if gone {
		return nil, fmt.Errorf("%v was in a slice that target.MappedPtr returned for the initial device, but the slice has been garbage collected since: keep it reachable (runtime.KeepAlive) while its address is in use", p)
	}
	return nil, fmt.Errorf("%v is not in any initial-device allocation made by target.AllocMem, nor in a slice of Go memory that target.MappedPtr returned for the initial device", p)
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
	if d != nil {
		if err := rt.beginRoutine(); err != nil {
			return 0, err
		}
		defer rt.endRoutine()
	}
	if size <= 0 {
		return 0, fmt.Errorf("target: alloc of %d bytes: size must be positive", size)
	}
	r := omptrt.RoutineBegin(pc)
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
	t0 := r.TraceNow()
	b, err := d.d.Alloc(size)
	r.DataOpEnd(uintptr(b.Ptr))
	r.TraceDone(t0)
	if err != nil {
		return 0, err
	}
	d.amu.Lock()
	d.allocs[b.Ptr] = size
	d.amu.Unlock()
	return b.Ptr, nil
}

// FreeMem releases memory from AllocMem (omp_target_free). Freeing a pointer
// that AllocMem did not return, or freeing it twice, is an error, and so is
// freeing an allocation that host memory is still associated with
// (Associate): it frees nothing, and the error names the host range to
// disassociate first.
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
	if d != nil {
		if err := rt.beginRoutine(); err != nil {
			return err
		}
		defer rt.endRoutine()
	}
	r := omptrt.RoutineBegin(pc)
	defer r.End()
	if d == nil {
		r.DataOpBegin(ompt.DataOpDelete, uintptr(p), ompt.InitialDevice, 0, ompt.InitialDevice, 0)
		err := state().initial.free(p)
		r.DataOpEnd(0)
		return err
	}
	d.amu.Lock()
	size, ok := d.allocs[p]
	if !ok {
		d.amu.Unlock()
		return fmt.Errorf("target: free %v on device %d (%s): not a live allocation (freed twice, or never allocated by target.AllocMem)", p, n, d.id)
	}
	if a, more := d.associated(p, size); more > 0 {
		d.amu.Unlock()
		also := ""
		if more > 1 {
			also = fmt.Sprintf(" and %d more host ranges", more-1)
		}
		return memErr("free", device.CodeInvalidArgument,
			"%v on device %d (%s): host memory %s%s is still associated with it (target.Associate at %v); disassociate it first (target.Disassociate); nothing was freed",
			p, n, d.id, mapping.RangeString(a.host, a.n), also, a.p)
	}
	delete(d.allocs, p)
	d.amu.Unlock()
	r.DataOpBegin(ompt.DataOpDelete, uintptr(p), n, 0, ompt.InitialDevice, 0)
	t0 := r.TraceNow()
	err = d.d.Free(p)
	r.DataOpEnd(0)
	r.TraceDone(t0)
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
// On the initial device, p is an AllocMem allocation there or an address
// MappedPtr returned for it (see MappedPtr for how long that stays valid).
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
	d       *dev // nil for host memory
	num     int  // device number for the tools: -1 for host memory
	p       DevicePtr
	host    []byte
	avail   int
	initial int // the initial device's number, for a pointer there (p != 0)
}

// String names the memory in messages: "0x7f0000 on device 0 (opencl:0)",
// "0x7f0000 on the initial device (2)", or "host slice 0xc000010000".
func (e *end) String() string {
	switch {
	case e.d != nil:
		return fmt.Sprintf("%v on device %d (%s)", e.p, e.d.num, e.d.id)
	case e.p != 0:
		return fmt.Sprintf("%v on the initial device (%d)", e.p, e.initial)
	}
	return fmt.Sprintf("host slice %#x", addr(e.host))
}

// endOf resolves l; what names it in errors ("memcpy source").
func (rs *runtimeState) endOf(l Loc, what string) (end, error) {
	if l.bad != nil {
		return end{}, pointersErr(what, l.bad)
	}
	if l.isHo {
		if rs.closing.Load() { // as every routine, also one between host slices
			return end{}, fmt.Errorf("target: %s: %w", what, ErrShutdown)
		}
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
		return end{host: b, p: l.ptr, avail: len(b), num: ompt.InitialDevice, initial: n}, nil
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
		return fmt.Errorf("target: memset of %d bytes at %v: out of bounds, only %d bytes there", n, &de, de.avail)
	}
	r := omptrt.RoutineBegin(pc)
	defer r.End()
	r.DataOpBegin(ompt.DataOpMemset, 0, ompt.InitialDevice, de.address(0), de.num, uint64(n))
	t0 := r.TraceNow()
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
	r.TraceDone(t0)
	return err
}

// seg is one contiguous piece of a copy: offsets from each side's start.
type seg struct{ dst, src, n int }

// rows is a copy of count[0] x count[1] rows of n bytes: row (i, j) starts
// at base + i*stride[0] + j*stride[1] on each side. A plain memcpy is one
// row. Walking it makes no list, so a rectangle of millions of rows costs
// no memory.
type rows struct {
	n        int
	count    [2]int
	dst, src rowSide
}

type rowSide struct {
	base   int
	stride [2]int
}

// each calls fn with every row in order, stopping at its first error.
func (r *rows) each(fn func(s seg) error) error {
	for i := 0; i < r.count[0]; i++ {
		d, s := r.dst.base+i*r.dst.stride[0], r.src.base+i*r.src.stride[0]
		for j := 0; j < r.count[1]; j++ {
			if err := fn(seg{d + j*r.dst.stride[1], s + j*r.src.stride[1], r.n}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Memcpy copies n bytes from src to dst (omp_target_memcpy), between any
// two devices including the initial device. Both ranges must lie inside
// one allocation, mapped buffer or slice; it returns when the copy is done.
// Within one allocation src == dst succeeds and moves nothing (the tools
// still see the data op and its record), and overlapping ranges are copied
// as memmove would, on every device. Between two devices of one plugin
// whose queues implement device.PeerCopier (two GPUs of the cuda plugin,
// two host devices) the copy goes from one device to the other directly;
// between others it is staged through a host buffer.
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
	rs := state()
	de, err := rs.endOf(dst, "memcpy destination")
	if err != nil {
		return err
	}
	se, err := rs.endOf(src, "memcpy source")
	if err != nil {
		return err
	}
	if n > de.avail {
		return fmt.Errorf("target: memcpy of %d bytes to %v (from %v): out of bounds, only %d bytes there", n, &de, &se, de.avail)
	}
	if n > se.avail {
		return fmt.Errorf("target: memcpy of %d bytes from %v (to %v): out of bounds, only %d bytes there", n, &se, &de, se.avail)
	}
	return copyRows(pc, &de, &se, &rows{n: n, count: [2]int{1, 1}})
}

// address returns the address of offset off of a memcpy side, for the tools.
func (e *end) address(off int) uintptr {
	if e.d != nil {
		return uintptr(e.p) + uintptr(off)
	}
	return addr(e.host) + uintptr(off)
}

// copyRows copies every row of r from se to de, whose bounds the caller
// has checked, as one device memory routine called at pc: one data op per
// row.
func copyRows(pc uintptr, de, se *end, r *rows) error {
	rt := omptrt.RoutineBegin(pc)
	defer rt.End()
	if rt != nil {
		return copyTraced(rt, de, se, r)
	}
	return copyPlain(de, se, r)
}

// copyTraced copies row by row, each a data op for the tools.
func copyTraced(r *omptrt.Target, de, se *end, rs *rows) error {
	op := ompt.DataOpTransferFromDevice // device to host, and device to device
	if se.d == nil {
		op = ompt.DataOpTransferToDevice
	}
	return rs.each(func(s seg) error {
		r.DataOpBegin(op, se.address(s.src), se.num, de.address(s.dst), de.num, uint64(s.n))
		t0 := r.TraceNow()
		one := rows{n: s.n, count: [2]int{1, 1}, dst: rowSide{base: s.dst}, src: rowSide{base: s.src}}
		err := copyPlain(de, se, &one)
		r.DataOpEnd(de.address(s.dst))
		r.TraceDone(t0)
		return err
	})
}

// copyPlain does the copies of r on the devices' queues.
func copyPlain(de, se *end, r *rows) error {
	if r.count[0] == 0 || r.count[1] == 0 {
		return nil
	}
	switch {
	case de.d == nil && se.d == nil:
		return r.each(func(s seg) error {
			copy(de.host[s.dst:s.dst+s.n], se.host[s.src:s.src+s.n])
			return nil
		})
	case de.d != nil && se.d == nil:
		return withQueue(de.d, func(q device.Queue) error {
			return r.each(func(s seg) error { return q.CopyIn(de.p+DevicePtr(s.dst), se.host[s.src:s.src+s.n]) })
		})
	case de.d == nil && se.d != nil:
		return withQueue(se.d, func(q device.Queue) error {
			return r.each(func(s seg) error { return q.CopyOut(de.host[s.dst:s.dst+s.n], se.p+DevicePtr(s.src)) })
		})
	case de.d == se.d:
		return withQueue(de.d, func(q device.Queue) error {
			return r.each(func(s seg) error { return q.Copy(de.p+DevicePtr(s.dst), se.p+DevicePtr(s.src), s.n) })
		})
	}
	// Two devices of one plugin whose queues copy from a peer: directly.
	if de.d.plugin == se.d.plugin {
		peer := false
		err := withQueue(de.d, func(q device.Queue) error {
			pc, ok := q.(device.PeerCopier)
			if !ok {
				return nil
			}
			peer = true
			return r.each(func(s seg) error { return pc.CopyPeer(de.p+DevicePtr(s.dst), se.d.d, se.p+DevicePtr(s.src), s.n) })
		})
		if peer || err != nil {
			return err
		}
	}
	// Otherwise stage each row through one host buffer.
	tmp := make([]byte, r.n)
	return r.each(func(s seg) error {
		if err := withQueue(se.d, func(q device.Queue) error { return q.CopyOut(tmp, se.p+DevicePtr(s.src)) }); err != nil {
			return err
		}
		return withQueue(de.d, func(q device.Queue) error { return q.CopyIn(de.p+DevicePtr(s.dst), tmp) })
	})
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

// rectErr is an invalid-argument error of MemcpyRect.
func rectErr(format string, args ...any) error {
	return device.Errorf("", "target: memcpy_rect", device.CodeInvalidArgument, format, args...)
}

// mulInt returns a*b for non-negative a and b, and false if it does not
// fit an int. b < 0 stands for a product that already did not fit: a*b
// is then 0 if a is 0, and does not fit otherwise.
func mulInt(a, b int) (int, bool) {
	if a == 0 {
		return 0, true
	}
	if b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt {
		return 0, false
	}
	return int(lo), true
}

// rectSide works out one array's side of MemcpyRect, with v, off and dims
// padded to three dimensions, every v[i] at least 1 and off[i]+v[i] at
// most dims[i]: where the rectangle starts, its plane and row strides (0
// where the volume has one plane or one row), and end, the highest byte
// it touches plus one. ok is false if end does not fit an int; when it
// fits, so does every offset of the copy, each being at most end.
func rectSide(elem int, v, off, dims [3]int) (s rowSide, end int, ok bool) {
	var stride [3]int // bytes per index in each dimension; -1 if more than an int holds
	stride[2] = elem
	for i := 1; i >= 0; i-- {
		var fits bool
		if stride[i], fits = mulInt(dims[i+1], stride[i+1]); !fits {
			stride[i] = -1
		}
	}
	for i := range 3 {
		hi := off[i] + v[i] - 1 // the last element's index; cannot overflow, being below dims[i]
		if i == 2 {
			hi++ // the end of the last row
		}
		last, fits := mulInt(hi, stride[i])
		if !fits || end > math.MaxInt-last {
			return s, 0, false
		}
		end += last
		first, _ := mulInt(off[i], stride[i]) // off[i] <= hi: fits
		s.base += first
	}
	// A stride used for more than one step is at most end.
	if v[0] > 1 {
		s.stride[0] = stride[0]
	}
	if v[1] > 1 {
		s.stride[1] = stride[1]
	}
	return s, end, true
}

// unpad returns the last nd of a's dimensions, for messages.
func unpad(a [3]int, nd int) []int { return append([]int(nil), a[3-nd:]...) }

// MemcpyRect copies a rectangular subvolume of up to three dimensions
// (omp_target_memcpy_rect). elem is the element size in bytes; volume the
// number of elements copied per dimension; dstOff and srcOff the
// subvolume's origin in each array; dstDims and srcDims each array's full
// dimensions. All slices have the same length, 1 to 3; the last dimension
// varies fastest, as in C. The rectangle is checked against both sides
// before anything is copied: an error names the argument at fault, or the
// side whose allocation, mapped buffer or slice is too small for it. Rows
// that follow each other on both sides are copied as one piece (one data
// op for the tools); a volume with a zero dimension copies nothing.
//
//go:noinline
func MemcpyRect(dst, src Loc, elem int, volume, dstOff, srcOff, dstDims, srcDims []int) error {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	nd := len(volume)
	if nd < 1 || nd > 3 {
		return rectErr("volume has %d dimensions; 1 to 3 are supported", nd)
	}
	if elem <= 0 {
		return rectErr("element size %d: must be positive", elem)
	}
	if len(dstOff) != nd || len(srcOff) != nd || len(dstDims) != nd || len(srcDims) != nd {
		return rectErr("volume has %d dimensions but dstOff, srcOff, dstDims and srcDims have %d, %d, %d and %d; all must have the same",
			nd, len(dstOff), len(srcOff), len(dstDims), len(srcDims))
	}
	// Pad to three dimensions: an outer dimension of 1 changes nothing.
	var v, do, so, dd, sd [3]int
	for i := range 3 - nd {
		v[i], dd[i], sd[i] = 1, 1, 1
	}
	empty := false
	for i := range nd {
		for _, a := range [...]struct {
			name string
			s    []int
		}{{"volume", volume}, {"dstOff", dstOff}, {"srcOff", srcOff}, {"dstDims", dstDims}, {"srcDims", srcDims}} {
			if a.s[i] < 0 {
				return rectErr("%s[%d] = %d: must not be negative", a.name, i, a.s[i])
			}
		}
		// dims - off cannot overflow: both are non-negative.
		if volume[i] > dstDims[i]-dstOff[i] || volume[i] > srcDims[i]-srcOff[i] {
			return rectErr("dimension %d: volume %d at offsets %d (dstOff) and %d (srcOff) exceeds dimensions %d (dstDims) and %d (srcDims)",
				i, volume[i], dstOff[i], srcOff[i], dstDims[i], srcDims[i])
		}
		empty = empty || volume[i] == 0
		j := i + 3 - nd
		v[j], do[j], so[j], dd[j], sd[j] = volume[i], dstOff[i], srcOff[i], dstDims[i], srcDims[i]
	}
	rs := state()
	de, err := rs.endOf(dst, "memcpy_rect destination")
	if err != nil {
		return err
	}
	se, err := rs.endOf(src, "memcpy_rect source")
	if err != nil {
		return err
	}
	r := rows{n: v[2] * elem, count: [2]int{v[0], v[1]}}
	if empty {
		return copyRows(pc, &de, &se, &rows{})
	}
	side := func(name string, e *end, off, dims [3]int, avail int) (rowSide, error) {
		name += " " + e.String()
		s, end, ok := rectSide(elem, v, off, dims)
		if !ok {
			return s, rectErr("%s: volume %v at offset %v in dimensions %v of %d-byte elements: more bytes than an int can count",
				name, volume, unpad(off, nd), unpad(dims, nd), elem)
		}
		if end > avail {
			return s, rectErr("%s: volume %v at offset %v in dimensions %v of %d-byte elements reaches byte %d, out of bounds: only %d bytes there",
				name, volume, unpad(off, nd), unpad(dims, nd), elem, end, avail)
		}
		return s, nil
	}
	if r.dst, err = side("destination", &de, do, dd, de.avail); err != nil {
		return err
	}
	if r.src, err = side("source", &se, so, sd, se.avail); err != nil {
		return err
	}
	// Rows that follow each other on both sides are one piece.
	if r.count[1] > 1 && r.dst.stride[1] == r.n && r.src.stride[1] == r.n {
		r.n *= r.count[1]
		r.count[1], r.dst.stride[1], r.src.stride[1] = 1, 0, 0
	}
	if r.count[1] == 1 && r.count[0] > 1 && r.dst.stride[0] == r.n && r.src.stride[0] == r.n {
		r.n *= r.count[0]
		r.count[0], r.dst.stride[0], r.src.stride[0] = 1, 0, 0
	}
	return copyRows(pc, &de, &se, &r)
}

// memErr is an error of the device memory routine op ("associate").
func memErr(op string, code device.Code, format string, args ...any) error {
	return device.Errorf("", "target: "+op, code, format, args...)
}

// offloadDevices says which device numbers name offload devices.
func offloadDevices() string {
	if n := NumDevices(); n > 0 {
		return fmt.Sprintf("offload devices are 0..%d", n-1)
	}
	return "there is no offload device (" + state().why() + ")"
}

// association is one Associate in force: host bytes [host, host+n) backed
// by device memory at p, inside the AllocMem allocation at alloc.
type association struct {
	alloc DevicePtr
	host  uintptr
	n     int
	p     DevicePtr
}

// associated returns the association with the lowest host address whose
// device memory lies in the allocation [base, base+size), and how many
// there are. d.amu is held.
func (d *dev) associated(base DevicePtr, size int) (first association, n int) {
	for _, a := range d.assocs {
		if a.alloc == base {
			if n == 0 || a.host < first.host {
				first = a
			}
			n++
		}
	}
	return first, n
}

// checkAssociate checks that len(b) bytes at p+devOffset lie inside one
// live AllocMem allocation of d and returns its start. d.amu is held.
func (d *dev) checkAssociate(b []byte, p DevicePtr, devOffset int) (DevicePtr, error) {
	what := func() string {
		return fmt.Sprintf("%s (%d bytes) with %v+%d on device %d (%s)", mapping.RangeString(addr(b), len(b)), len(b), p, devOffset, d.num, d.id)
	}
	if devOffset < 0 {
		return 0, memErr("associate", device.CodeInvalidArgument, "%s: the device offset must not be negative", what())
	}
	for base, size := range d.allocs {
		if p < base || p >= base+DevicePtr(size) {
			continue
		}
		room := size - int(p-base) // bytes from p to the allocation's end
		if devOffset > room || len(b) > room-devOffset {
			return 0, memErr("associate", device.CodeInvalidArgument,
				"%s: the device range [%v,+%d) extends past the allocation %s (%d bytes) made by target.AllocMem; only %d bytes there from %v",
				what(), p, devOffset+len(b), mapping.RangeString(uintptr(base), size), size, room, p)
		}
		return base, nil
	}
	return 0, memErr("associate", device.CodeInvalidArgument,
		"%s: %v is not inside any live allocation made by target.AllocMem on that device (freed, never allocated, or from another device)", what(), p)
}

// Associate makes device memory p+devOffset on dev the device copy of s
// (omp_target_associate_ptr): map clauses find s present there and never
// free it. p must be, or point inside, a live allocation that AllocMem made
// on dev, and the len(s) elements' bytes from p+devOffset must lie inside
// that allocation; FreeMem of it fails until Disassociate. The initial
// device has no separate memory to associate: naming it is an error. T
// must be free of Go pointers, as for a map.
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
	if err != nil {
		return err
	}
	if d == nil {
		return memErr("associate", device.CodeInvalidDevice,
			"device %d names the initial device, whose memory is the program's own: there is nothing to associate; %s", dev, offloadDevices())
	}
	b := device.Bytes(s)
	if len(b) == 0 {
		return memErr("associate", device.CodeInvalidArgument, "empty host slice (nil or zero length) on device %d (%s)", d.num, d.id)
	}
	d.amu.Lock()
	_, err = d.checkAssociate(b, p, devOffset)
	d.amu.Unlock()
	if err != nil {
		return err
	}
	q := p + DevicePtr(devOffset)
	r := omptrt.RoutineBegin(pc)
	defer r.End()
	r.DataOpBegin(ompt.DataOpAssociate, addr(b), ompt.InitialDevice, uintptr(q), d.num, uint64(len(b)))
	t0 := r.TraceNow()
	// Checked again with the table change under d.amu, so a FreeMem
	// meanwhile cannot leave the association pointing at freed memory.
	d.amu.Lock()
	base, err := d.checkAssociate(b, p, devOffset)
	if err == nil {
		err = d.table.Associate(b, q)
	}
	if err == nil {
		if d.assocs == nil {
			d.assocs = map[uintptr]association{}
		}
		d.assocs[addr(b)] = association{alloc: base, host: addr(b), n: len(b), p: q}
	}
	d.amu.Unlock()
	r.DataOpEnd(uintptr(q))
	r.TraceDone(t0)
	return err
}

// Disassociate undoes Associate (omp_target_disassociate_ptr): s must start
// where an associated slice starts (it may be shorter). It does not free the
// device memory. Nothing associated there is an error, as is the initial
// device, where nothing can be associated.
//
//go:noinline
func Disassociate[T any](s []T, dev int) error {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	d, err := offloadDev(dev, "disassociate")
	if err != nil {
		return err
	}
	if d == nil {
		return memErr("disassociate", device.CodeInvalidDevice,
			"device %d names the initial device, where nothing can be associated; %s", dev, offloadDevices())
	}
	b := device.Bytes(s)
	p, _ := d.table.Translate(b)
	r := omptrt.RoutineBegin(pc)
	defer r.End()
	r.DataOpBegin(ompt.DataOpDisassociate, addr(b), ompt.InitialDevice, uintptr(p), d.num, 0)
	t0 := r.TraceNow()
	d.amu.Lock()
	err = d.table.Disassociate(b)
	if err == nil {
		delete(d.assocs, addr(b))
	}
	d.amu.Unlock()
	r.DataOpEnd(uintptr(p))
	r.TraceDone(t0)
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
// (omp_get_mapped_ptr). On the initial device it is s's own address, which
// On(initial device, p) accepts for as long as s's memory is reachable:
// the runtime does not keep s alive (keep it reachable, with
// runtime.KeepAlive if need be, while p is in use), and a p whose slice
// was collected is an error, not a copy into freed memory. Memory that Go
// does not manage (mmap, C) gets its address, which On cannot bound.
func MappedPtr[T any](s []T, dev int) (DevicePtr, error) {
	d, err := offloadDev(dev, "mapped ptr")
	if err != nil {
		return 0, err
	}
	if d == nil {
		b := device.Bytes(s)
		state().initial.view(b)
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
