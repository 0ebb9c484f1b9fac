//go:build cgo

package cabi

/*
#include <stdlib.h>
#include "cabi.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt/toolslot"
)

// Construct slots. The core gives each tool a Go ompt.Data per construct
// (target_data, target_task_data) and a *uint64 host_op_id slot; a C tool
// must get C memory it may keep a pointer to for the construct's life.
// Beside each of its target_data slots the core keeps a word it never
// clears (package toolslot), and the core reuses the slots, construct
// after construct: the word holds a gompt_scope (C memory) made the first
// time the slot is used and freed only if the core drops the slot. The
// core zeroes the scope when its construct (or device memory routine)
// ends (toolslot.Reset), stores each operation's runtime host_op_id in it
// before the operation's begin event (toolslot.SetOp), and reads the ids
// the C tool wrote there (toolslot.IDs) for ompt_get_target_info and the
// trace records delivered to the C tool: they are the tool's ids. Only
// the goroutine running the construct writes its slots.

func init() {
	toolslot.Free = func(p unsafe.Pointer) { C.free(p) }
	toolslot.Reset = func(p unsafe.Pointer) { *(*C.gompt_scope)(p) = C.gompt_scope{} }
	toolslot.SetOp = func(p unsafe.Pointer, id uint64) { (*C.gompt_scope)(p).host_op_id = C.ompt_id_t(id) }
	toolslot.IDs = func(p unsafe.Pointer) (uint64, uint64) {
		sc := (*C.gompt_scope)(p)
		return *(*uint64)(unsafe.Pointer(&sc.target_data)), uint64(sc.host_op_id)
	}
}

// Thread slots: the core keeps, for each OS thread it has held, a word
// beside the C tool's Go thread_data, task_data and parallel_data; it
// holds the thread's gompt_tool_slots (C memory, made by the core
// through toolslot.NewThread when the thread is first seen, never freed,
// zeroed when each life of the thread ends, after its thread_end).
func init() {
	toolslot.NewThread = func() unsafe.Pointer {
		p := C.calloc(1, C.sizeof_gompt_tool_slots)
		if p == nil {
			panic("cabi: out of C memory for a thread's tool slots")
		}
		return p
	}
	toolslot.ResetThread = func(p unsafe.Pointer) { *(*C.gompt_tool_slots)(p) = C.gompt_tool_slots{} }
}

// threadC returns the C slots of the thread whose Go slot of kind off
// (toolslot.ThreadOffset, TaskOffset, ParallelOffset) is p.
func threadC(p *ompt.Data, off uintptr) *C.gompt_tool_slots {
	return (*C.gompt_tool_slots)(toolslot.ThreadWord(unsafe.Pointer(p), off))
}

// scopeOfTask returns the C scope of the construct whose Go
// target_task_data slot is ttd, making it on the slot's first use.
func scopeOfTask(ttd *ompt.Data) *C.gompt_scope {
	w := (*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(ttd), toolslot.TargetTaskOffset))
	if sc := (*C.gompt_scope)(*w); sc != nil {
		return sc
	}
	return hangScope(w)
}

// hangScope makes a zeroed scope and hangs it on slot word w: a slot's
// first use, out of the inlined path of scopeOf and scopeOfTask.
func hangScope(w *unsafe.Pointer) *C.gompt_scope {
	sc := newScope()
	*w = unsafe.Pointer(sc)
	return sc
}

// newScope makes a zeroed scope.
func newScope() *C.gompt_scope {
	sc := (*C.gompt_scope)(C.calloc(1, C.sizeof_gompt_scope))
	if sc == nil {
		panic("cabi: out of C memory for a construct's tool slots")
	}
	return sc
}

// scopeOf returns the C scope of the construct (or device memory
// routine) whose Go target_data slot is td (a slot the core passed to an
// EMI callback), making it on the slot's first use.
func scopeOf(td *ompt.Data) *C.gompt_scope {
	w := (*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(td), toolslot.Offset)) // toolslot.Word, within the inlining budget
	if sc := (*C.gompt_scope)(*w); sc != nil {
		return sc
	}
	return hangScope(w)
}

// Devices. A C tool gets a gompt_device (C memory, never freed) as
// ompt_device_t *; the device entry points find the Go handle by its
// address, so a pointer gompt did not hand out is answered with 0, never
// dereferenced.

// cdevice is one device as the C face knows it.
type cdevice struct {
	h      *ompt.DeviceHandle
	c      *C.gompt_device
	typ    *C.char
	lookup ompt.LookupFunc

	numProcs  ompt.GetDeviceNumProcsFunc
	time      ompt.GetDeviceTimeFunc
	translate ompt.TranslateTimeFunc

	setTraceOMPT   ompt.SetTraceOMPTFunc
	setTraceNative ompt.SetTraceNativeFunc
	startTrace     ompt.StartTraceFunc
	pauseTrace     ompt.PauseTraceFunc
	flushTrace     ompt.FlushTraceFunc
	stopTrace      ompt.StopTraceFunc
	bufferLimits   ompt.GetBufferLimitsFunc // OpenMP 6.0's; nil unless GOMPT_OMPT_VERSION=6.0
}

const deviceMagic = 0x676f6d7074646576 // "gomptdev"

var (
	devMu    sync.RWMutex
	devByH   = map[*ompt.DeviceHandle]*cdevice{}
	devByPtr = map[uintptr]*cdevice{}
)

// deviceFor returns the C face of device handle h, making it on first use.
func deviceFor(h *ompt.DeviceHandle, typ string, lookup ompt.LookupFunc) *cdevice {
	devMu.RLock()
	d := devByH[h]
	devMu.RUnlock()
	if d != nil {
		return d
	}
	devMu.Lock()
	defer devMu.Unlock()
	if d = devByH[h]; d != nil {
		return d
	}
	d = &cdevice{h: h, typ: C.CString(typ), lookup: lookup}
	d.c = (*C.gompt_device)(C.calloc(1, C.sizeof_gompt_device))
	d.c.num = C.int(h.Num())
	d.c.magic = deviceMagic
	d.numProcs, _ = lookup("ompt_get_device_num_procs").(ompt.GetDeviceNumProcsFunc)
	d.time, _ = lookup("ompt_get_device_time").(ompt.GetDeviceTimeFunc)
	d.translate, _ = lookup("ompt_translate_time").(ompt.TranslateTimeFunc)
	d.setTraceOMPT, _ = lookup("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)
	d.setTraceNative, _ = lookup("ompt_set_trace_native").(ompt.SetTraceNativeFunc)
	d.startTrace, _ = lookup("ompt_start_trace").(ompt.StartTraceFunc)
	d.pauseTrace, _ = lookup("ompt_pause_trace").(ompt.PauseTraceFunc)
	d.flushTrace, _ = lookup("ompt_flush_trace").(ompt.FlushTraceFunc)
	d.stopTrace, _ = lookup("ompt_stop_trace").(ompt.StopTraceFunc)
	d.bufferLimits, _ = lookup(ompt.BufferLimitsEntryName).(ompt.GetBufferLimitsFunc)
	bindGetters(lookup)
	devByH[h] = d
	devByPtr[uintptr(unsafe.Pointer(d.c))] = d
	return d
}

// deviceAt returns the device whose C handle is at p, or nil.
func deviceAt(p C.uintptr_t) *cdevice {
	devMu.RLock()
	defer devMu.RUnlock()
	return devByPtr[uintptr(p)]
}

// deviceResolves reports whether the Go lookup of some device the C tool
// knows resolves name (the C device lookup is one function for all).
func deviceResolves(name string) bool {
	devMu.RLock()
	defer devMu.RUnlock()
	for _, d := range devByH {
		if d.lookup(name) != nil {
			return true
		}
	}
	return false
}

// C strings handed to the tool that must stay valid (state names, the
// device documentation): made once, never freed.
var (
	cstrMu sync.Mutex
	cstrs  = map[string]*C.char{}
)

func cstring(s string) *C.char {
	cstrMu.Lock()
	defer cstrMu.Unlock()
	p := cstrs[s]
	if p == nil {
		p = C.CString(s)
		cstrs[s] = p
	}
	return p
}
