package target

import (
	"fmt"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/callsite"
	"github.com/gompt/gompt/target/internal/omptrt"
)

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

// offloadDev resolves dev; nil (and no error) means the initial device.
func offloadDev(num int, op string) (*dev, error) {
	_, d, err := open(num)
	if err != nil {
		return nil, fmt.Errorf("target: %s: %w", op, err)
	}
	return d, nil
}
