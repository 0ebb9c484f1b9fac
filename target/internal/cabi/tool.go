//go:build cgo

package cabi

/*
#include <stdlib.h>
#include "cabi.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt"
	"github.com/gompt/gompt/target/internal/omptrt/toolslot"
)

// ctool is the one C tool of the process (the C search stops at the first
// ompt_start_tool that returns non-NULL, so there is at most one).
type ctool struct {
	res *C.ompt_start_tool_result_t // the tool's own memory (its library stays open)

	ent atomic.Pointer[entries] // Go entry points, bound before the C initializer runs

	mu  sync.Mutex             // serializes registrations
	cfn [numEvents]C.uintptr_t // accepted C callbacks, for ompt_get_callback
}

// numEvents bounds the event numbers omp-tools.h defines (1..37).
const numEvents = ompt.CallbackError + 1

var theTool atomic.Pointer[ctool]

func newTool(name string, res *C.ompt_start_tool_result_t) omptrt.Found {
	c := &ctool{res: res}
	theTool.Store(c)
	sr := &ompt.StartResult{
		Finalize: func(*ompt.Data) { C.gompt_cabi_call_finalize(c.res) },
	}
	if res.initialize != nil {
		sr.Initialize = func(lookup ompt.LookupFunc, initial int, _ *ompt.Data) int {
			c.ent.Store(bindEntries(lookup))
			return int(C.gompt_cabi_call_initialize(c.res, C.int(initial)))
		}
	}
	return omptrt.Found{Name: name, Result: sr, Native: true}
}

// setCallback is ompt_set_callback for the C tool: it registers a Go
// callback with the core that calls fn with the omp-tools.h arguments, and
// answers what the core answers. EMI callbacks get target_data (and
// target_task_data) slots in C memory (slots.go).
func (c *ctool) setCallback(ev ompt.Callback, fn C.uintptr_t) ompt.SetResult {
	e := c.ent.Load()
	if e == nil || e.set == nil {
		return ompt.SetError
	}
	if ev <= 0 || ev >= numEvents {
		return e.set(ev, nil) // the core answers ompt_set_error
	}
	if !ev.Dispatched() {
		if fn == 0 {
			return e.set(ev, nil)
		}
		return e.set(ev, func() {}) // never dispatched: the core answers ompt_set_never
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	res := e.set(ev, c.wrap(ev, fn))
	switch res {
	case ompt.SetError:
	case ompt.SetNever: // registered nowhere (GOMPT_TOOL_PROFILE=llvm's target_map)
		c.cfn[ev] = 0
	default:
		c.cfn[ev] = fn
	}
	return res
}

// getCallback is ompt_get_callback: the C function the tool registered
// for ev and the core accepted, or 0.
func (c *ctool) getCallback(ev ompt.Callback) C.uintptr_t {
	if ev <= 0 || ev >= numEvents {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfn[ev]
}

// wrap returns the Go callback (of the event's Go callback type) that
// calls the C callback fn, or nil when fn is 0.
func (c *ctool) wrap(ev ompt.Callback, fn C.uintptr_t) any {
	if fn == 0 {
		return nil
	}
	switch ev {
	case ompt.CallbackThreadBegin:
		return ompt.ThreadBeginCallback(func(typ int, td *ompt.Data) {
			C.gompt_cabi_call_thread_begin(fn, C.int(typ), cptr(&threadC(td, toolslot.ThreadOffset).thread_data))
		})
	case ompt.CallbackThreadEnd:
		return ompt.ThreadEndCallback(func(td *ompt.Data) {
			C.gompt_cabi_call_thread_end(fn, cptr(&threadC(td, toolslot.ThreadOffset).thread_data))
		})
	case ompt.CallbackImplicitTask:
		return ompt.ImplicitTaskCallback(func(ep ompt.Endpoint, _, task *ompt.Data, n, index uint32, flags int) {
			cs := threadC(task, toolslot.TaskOffset)
			C.gompt_cabi_call_implicit_task(fn, C.int(ep), cptr(&cs.parallel_data), cptr(&cs.task_data), C.uint(n), C.uint(index), C.int(flags))
		})
	case ompt.CallbackTaskCreate:
		return ompt.TaskCreateCallback(func(enc *ompt.Data, _ *ompt.Frame, ttd *ompt.Data, flags int, deps bool, code uintptr) {
			cs := threadC(enc, toolslot.TaskOffset)
			d := C.int(0)
			if deps {
				d = 1
			}
			C.gompt_cabi_call_task_create(fn, cptr(&cs.task_data), cptr(&cs.frame), cptr(&scopeOfTask(ttd).target_task_data), C.int(flags), d, C.uintptr_t(code))
		})
	case ompt.CallbackTaskSchedule:
		return ompt.TaskScheduleCallback(func(prior *ompt.Data, status int, next *ompt.Data) {
			// one is the thread's initial task, the other the target task
			if status == ompt.TaskSwitch {
				C.gompt_cabi_call_task_schedule(fn, cptr(&threadC(prior, toolslot.TaskOffset).task_data), C.int(status), cptr(&scopeOfTask(next).target_task_data))
			} else {
				C.gompt_cabi_call_task_schedule(fn, cptr(&scopeOfTask(prior).target_task_data), C.int(status), cptr(&threadC(next, toolslot.TaskOffset).task_data))
			}
		})
	case ompt.CallbackParallelBegin:
		// gompt has no parallel regions: registered (ompt_set_always, as
		// OpenMP requires), never called
		return ompt.ParallelBeginCallback(func(*ompt.Data, *ompt.Frame, *ompt.Data, uint32, int, uintptr) {})
	case ompt.CallbackParallelEnd:
		return ompt.ParallelEndCallback(func(*ompt.Data, *ompt.Data, int, uintptr) {})
	case ompt.CallbackDeviceInitialize:
		return ompt.DeviceInitializeCallback(func(dev int, typ string, h *ompt.DeviceHandle, lookup ompt.LookupFunc, doc string) {
			d := deviceFor(h, typ, lookup)
			C.gompt_cabi_call_device_initialize(fn, C.int(dev), d.typ, unsafe.Pointer(d.c), cstring(doc))
		})
	case ompt.CallbackDeviceFinalize:
		return ompt.DeviceFinalizeCallback(func(dev int) {
			C.gompt_cabi_call_device_finalize(fn, C.int(dev))
		})
	case ompt.CallbackDeviceLoad:
		return ompt.DeviceLoadCallback(func(dev int, file string, off int64, vma uintptr, bytes uint64, host, daddr uintptr, mod uint64) {
			var cf *C.char // NULL: the image has no file
			if file != "" {
				cf = C.CString(file)
				defer C.free(unsafe.Pointer(cf))
			}
			C.gompt_cabi_call_device_load(fn, C.int(dev), cf, C.int64_t(off), addrOrNone(vma), C.size_t(bytes), addrOrNone(host), addrOrNone(daddr), C.uint64_t(mod))
		})
	case ompt.CallbackDeviceUnload:
		return ompt.DeviceUnloadCallback(func(dev int, mod uint64) {
			C.gompt_cabi_call_device_unload(fn, C.int(dev), C.uint64_t(mod))
		})
	case ompt.CallbackTargetEMI:
		return ompt.TargetEMICallback(func(kind ompt.TargetKind, ep ompt.Endpoint, dev int, taskData, ttd, td *ompt.Data, code uintptr) {
			task := &threadC(taskData, toolslot.TaskOffset).task_data
			sc := scopeOf(td)
			var cttd *C.ompt_data_t
			if ttd != nil {
				cttd = &sc.target_task_data
			}
			C.gompt_cabi_call_target_emi(fn, C.int(kind), C.int(ep), C.int(dev), cptr(task), cptr(cttd), cptr(&sc.target_data), C.uintptr_t(code))
		})
	case ompt.CallbackTarget:
		return ompt.TargetCallback(func(kind ompt.TargetKind, ep ompt.Endpoint, dev int, taskData *ompt.Data, id uint64, code uintptr) {
			task := &threadC(taskData, toolslot.TaskOffset).task_data
			C.gompt_cabi_call_target(fn, C.int(kind), C.int(ep), C.int(dev), cptr(task), C.ompt_id_t(id), C.uintptr_t(code))
		})
	case ompt.CallbackTargetDataOp:
		return ompt.TargetDataOpCallback(func(tid, hop uint64, op ompt.DataOpKind, src uintptr, sdev int, dst uintptr, ddev int, n uint64, code uintptr) {
			C.gompt_cabi_call_target_data_op(fn, C.ompt_id_t(tid), C.ompt_id_t(hop), C.int(op), C.uintptr_t(src), C.int(sdev), C.uintptr_t(dst), C.int(ddev), C.size_t(n), C.uintptr_t(code))
		})
	case ompt.CallbackTargetDataOpEMI:
		return ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, ttd, td *ompt.Data, hop *uint64, op ompt.DataOpKind, src uintptr, sdev int, dst uintptr, ddev int, n uint64, code uintptr) {
			sc := scopeOf(td) // a construct's, or a device memory routine's own
			var cttd *C.ompt_data_t
			if ttd != nil {
				cttd = &sc.target_task_data
			}
			if ep == ompt.ScopeBegin {
				sc.host_op_id = C.ompt_id_t(*hop)
			}
			C.gompt_cabi_call_target_data_op_emi(fn, C.int(ep), cptr(cttd), cptr(&sc.target_data), cptr(&sc.host_op_id), C.int(op), C.uintptr_t(src), C.int(sdev), C.uintptr_t(dst), C.int(ddev), C.size_t(n), C.uintptr_t(code))
		})
	case ompt.CallbackTargetSubmit:
		return ompt.TargetSubmitCallback(func(tid, hop uint64, teams uint32) {
			C.gompt_cabi_call_target_submit(fn, C.ompt_id_t(tid), C.ompt_id_t(hop), C.uint(teams))
		})
	case ompt.CallbackTargetSubmitEMI:
		return ompt.TargetSubmitEMICallback(func(ep ompt.Endpoint, td *ompt.Data, hop *uint64, teams uint32) {
			sc := scopeOf(td)
			if ep == ompt.ScopeBegin {
				sc.host_op_id = C.ompt_id_t(*hop)
			}
			C.gompt_cabi_call_target_submit_emi(fn, C.int(ep), cptr(&sc.target_data), cptr(&sc.host_op_id), C.uint(teams))
		})
	case ompt.CallbackTargetMap:
		return ompt.TargetMapCallback(func(tid uint64, host, daddr []uintptr, bytes []uint64, flags []uint32, code uintptr) {
			n := mapLen(host, daddr, bytes, flags)
			if n == 0 {
				C.gompt_cabi_call_target_map(fn, C.ompt_id_t(tid), 0, nil, nil, nil, nil, C.uintptr_t(code))
				return
			}
			C.gompt_cabi_call_target_map(fn, C.ompt_id_t(tid), C.uint(n), (*C.uintptr_t)(unsafe.Pointer(&host[0])), (*C.uintptr_t)(unsafe.Pointer(&daddr[0])),
				(*C.uint64_t)(unsafe.Pointer(&bytes[0])), (*C.uint32_t)(unsafe.Pointer(&flags[0])), C.uintptr_t(code))
		})
	case ompt.CallbackTargetMapEMI:
		return ompt.TargetMapEMICallback(func(td *ompt.Data, host, daddr []uintptr, bytes []uint64, flags []uint32, code uintptr) {
			sc := scopeOf(td)
			n := mapLen(host, daddr, bytes, flags)
			if n == 0 {
				C.gompt_cabi_call_target_map_emi(fn, &sc.target_data, 0, nil, nil, nil, nil, C.uintptr_t(code))
				return
			}
			C.gompt_cabi_call_target_map_emi(fn, &sc.target_data, C.uint(n), (*C.uintptr_t)(unsafe.Pointer(&host[0])), (*C.uintptr_t)(unsafe.Pointer(&daddr[0])),
				(*C.uint64_t)(unsafe.Pointer(&bytes[0])), (*C.uint32_t)(unsafe.Pointer(&flags[0])), C.uintptr_t(code))
		})
	case ompt.CallbackDependences:
		return ompt.DependencesCallback(func(ttd *ompt.Data, deps []ompt.Dependence) {
			// ttd is a construct's target_task_data slot: the C tool
			// gets the one its target_emi events pass.
			sc := scopeOfTask(ttd)
			n := min(len(deps), 1<<31-1)
			if n == 0 {
				C.gompt_cabi_call_dependences(fn, cptr(&sc.target_task_data), nil, 0)
				return
			}
			cd := make([]C.ompt_dependence_t, n)
			for i := range cd {
				*(*uintptr)(unsafe.Pointer(&cd[i].variable)) = deps[i].Addr
				cd[i].dependence_type = C.ompt_dependence_type_t(deps[i].Type)
			}
			C.gompt_cabi_call_dependences(fn, cptr(&sc.target_task_data), &cd[0], C.int(n))
		})
	}
	return nil
}

// mapLen is the number of map items (the core passes slices of one length).
func mapLen(host, daddr []uintptr, bytes []uint64, flags []uint32) int {
	return min(len(host), len(daddr), len(bytes), len(flags), 1<<31)
}

// addrOrNone turns 0 ("does not exist") into ompt_addr_none (~0).
func addrOrNone(a uintptr) C.uintptr_t {
	if a == 0 {
		return ^C.uintptr_t(0)
	}
	return C.uintptr_t(a)
}

// cptr passes a pointer to C memory (the tool's slots, a construct's
// scope) as an integer, which spares the cgo pointer check on the hot path
// of every callback: the memory is C's, never Go's.
func cptr[T any](p *T) C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(p))) }
