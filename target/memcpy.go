package target

import (
	"fmt"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/callsite"
	"github.com/gompt/gompt/target/internal/omptrt"
)

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
