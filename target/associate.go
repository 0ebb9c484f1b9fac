package target

import (
	"fmt"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/callsite"
	"github.com/gompt/gompt/target/internal/omptrt"
)

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
