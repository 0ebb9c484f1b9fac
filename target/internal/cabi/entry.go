//go:build cgo

package cabi

/*
#include <stdlib.h>
#include "cabi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt/toolslot"
)

// entryNames lists the entry points that have a C form, in the order of
// gompt_cabi_entries in cabi.c; the first numHostEntries are the Table 4.1
// names, the rest device names (ompt.DeviceEntryNames, in its order: the
// three device entry points, then the eleven tracing ones of trace.go).
// To add one: write its C function in cabi.c calling an exported Go
// function, append it to gompt_cabi_entries and its name here, and bind
// its Go form.
var entryNames = [...]string{
	"ompt_enumerate_states", "ompt_enumerate_mutex_impls",
	"ompt_set_callback", "ompt_get_callback", "ompt_get_thread_data",
	"ompt_get_num_places", "ompt_get_place_proc_ids", "ompt_get_place_num",
	"ompt_get_partition_place_nums", "ompt_get_proc_id", "ompt_get_state",
	"ompt_get_parallel_info", "ompt_get_task_info", "ompt_get_task_memory",
	"ompt_get_num_devices", "ompt_get_num_procs", "ompt_get_target_info",
	"ompt_get_unique_id", "ompt_finalize_tool",
	// device entry points
	"ompt_get_device_num_procs", "ompt_get_device_time", "ompt_translate_time",
	// tracing entry points (trace.go)
	"ompt_set_trace_ompt", "ompt_set_trace_native", "ompt_start_trace",
	"ompt_pause_trace", "ompt_flush_trace", "ompt_stop_trace",
	"ompt_advance_buffer_cursor", "ompt_get_record_type",
	"ompt_get_record_ompt", "ompt_get_record_native", "ompt_get_record_abstract",
	// OpenMP 6.0's, resolved only with GOMPT_OMPT_VERSION=6.0
	ompt.BufferLimitsEntryName,
}

const numHostEntries = 19

// numDeviceEntries is the number of device names (ompt.DeviceEntryNames,
// in order, then ompt.BufferLimitsEntryName) that have a C form.
const numDeviceEntries = len(entryNames) - numHostEntries

var entryIndex = func() map[string]int {
	m := make(map[string]int, len(entryNames))
	for i, n := range entryNames {
		m[n] = i
	}
	return m
}()

// numCEntries is the length of the C table (tests compare it with
// entryNames).
func numCEntries() int { return int(C.gompt_cabi_nentries) }

// entries are the Go entry points of the C tool, as its Go lookup
// resolves them; ok[i] says that entryNames[i] resolved to the Go type the
// C form calls.
type entries struct {
	lookup ompt.LookupFunc
	ok     [len(entryNames)]bool

	enumStates   ompt.EnumerateStatesFunc
	enumMutex    ompt.EnumerateMutexImplsFunc
	set          ompt.SetCallbackFunc
	threadData   ompt.GetThreadDataFunc
	numPlaces    ompt.GetNumPlacesFunc
	placeProcIDs ompt.GetPlaceProcIDsFunc
	placeNum     ompt.GetPlaceNumFunc
	partition    ompt.GetPartitionPlaceNumsFunc
	procID       ompt.GetProcIDFunc
	state        ompt.GetStateFunc
	parallelInfo ompt.GetParallelInfoFunc
	taskInfo     ompt.GetTaskInfoFunc
	taskMemory   ompt.GetTaskMemoryFunc
	numDevices   ompt.GetNumDevicesFunc
	numProcs     ompt.GetNumProcsFunc
	targetInfo   ompt.GetTargetInfoFunc
	uniqueID     ompt.GetUniqueIDFunc
	finalizeTool ompt.FinalizeToolFunc
}

func bind[T any](e *entries, name string) T {
	v, ok := e.lookup(name).(T)
	e.ok[entryIndex[name]] = ok
	return v
}

func bindEntries(lookup ompt.LookupFunc) *entries {
	e := &entries{lookup: lookup}
	e.enumStates = bind[ompt.EnumerateStatesFunc](e, "ompt_enumerate_states")
	e.enumMutex = bind[ompt.EnumerateMutexImplsFunc](e, "ompt_enumerate_mutex_impls")
	e.set = bind[ompt.SetCallbackFunc](e, "ompt_set_callback")
	_ = bind[ompt.GetCallbackFunc](e, "ompt_get_callback") // answered from cabi's own table
	e.threadData = bind[ompt.GetThreadDataFunc](e, "ompt_get_thread_data")
	e.numPlaces = bind[ompt.GetNumPlacesFunc](e, "ompt_get_num_places")
	e.placeProcIDs = bind[ompt.GetPlaceProcIDsFunc](e, "ompt_get_place_proc_ids")
	e.placeNum = bind[ompt.GetPlaceNumFunc](e, "ompt_get_place_num")
	e.partition = bind[ompt.GetPartitionPlaceNumsFunc](e, "ompt_get_partition_place_nums")
	e.procID = bind[ompt.GetProcIDFunc](e, "ompt_get_proc_id")
	e.state = bind[ompt.GetStateFunc](e, "ompt_get_state")
	e.parallelInfo = bind[ompt.GetParallelInfoFunc](e, "ompt_get_parallel_info")
	e.taskInfo = bind[ompt.GetTaskInfoFunc](e, "ompt_get_task_info")
	e.taskMemory = bind[ompt.GetTaskMemoryFunc](e, "ompt_get_task_memory")
	e.numDevices = bind[ompt.GetNumDevicesFunc](e, "ompt_get_num_devices")
	e.numProcs = bind[ompt.GetNumProcsFunc](e, "ompt_get_num_procs")
	e.targetInfo = bind[ompt.GetTargetInfoFunc](e, "ompt_get_target_info")
	e.uniqueID = bind[ompt.GetUniqueIDFunc](e, "ompt_get_unique_id")
	e.finalizeTool = bind[ompt.FinalizeToolFunc](e, "ompt_finalize_tool")
	return e
}

func current() *entries {
	if c := theTool.Load(); c != nil {
		return c.ent.Load()
	}
	return nil
}

// gomptLookupIndex answers the C lookups: the index of name's C entry
// point if the Go lookup resolves it (the tool's for host names, a
// device's for device names), else -1.
//
//export gomptLookupIndex
func gomptLookupIndex(name *C.char, device C.int) C.int {
	i, ok := entryIndex[C.GoString(name)]
	if !ok {
		return -1
	}
	if device != 0 {
		if i < numHostEntries || !deviceResolves(entryNames[i]) {
			return -1
		}
		return C.int(i)
	}
	if e := current(); e == nil || i >= numHostEntries || !e.ok[i] {
		return -1
	}
	return C.int(i)
}

//export gomptEnumerateStates
func gomptEnumerateStates(cur C.int) (C.int, C.int, *C.char) {
	if e := current(); e != nil && e.enumStates != nil {
		if next, name, ok := e.enumStates(int(cur)); ok {
			return 1, C.int(next), cstring(name)
		}
	}
	return 0, 0, nil
}

//export gomptEnumerateMutexImpls
func gomptEnumerateMutexImpls(cur C.int) (C.int, C.int, *C.char) {
	if e := current(); e != nil && e.enumMutex != nil {
		if next, name, ok := e.enumMutex(int(cur)); ok {
			return 1, C.int(next), cstring(name)
		}
	}
	return 0, 0, nil
}

//export gomptSetCallback
func gomptSetCallback(ev C.int, fn C.uintptr_t) C.int {
	c := theTool.Load()
	if c == nil {
		return C.int(ompt.SetError)
	}
	return C.int(c.setCallback(ompt.Callback(ev), fn))
}

//export gomptGetCallback
func gomptGetCallback(ev C.int) C.uintptr_t {
	c := theTool.Load()
	if c == nil {
		return 0
	}
	return c.getCallback(ompt.Callback(ev))
}

//export gomptGetThreadData
func gomptGetThreadData() *C.ompt_data_t {
	if e := current(); e != nil && e.threadData != nil {
		if d := e.threadData(); d != nil {
			return &threadC(d, toolslot.ThreadOffset).thread_data
		}
	}
	return nil
}

//export gomptGetNumPlaces
func gomptGetNumPlaces() C.int {
	if e := current(); e != nil && e.numPlaces != nil {
		return C.int(e.numPlaces())
	}
	return 0
}

//export gomptGetPlaceProcIDs
func gomptGetPlaceProcIDs(place, size C.int, ids *C.int) C.int {
	e := current()
	if e == nil || e.placeProcIDs == nil {
		return 0
	}
	buf := make([]int, int(size))
	n := e.placeProcIDs(int(place), buf)
	if size > 0 {
		out := unsafe.Slice(ids, int(size))
		for i := range min(n, int(size)) {
			out[i] = C.int(buf[i])
		}
	}
	return C.int(n)
}

//export gomptGetPlaceNum
func gomptGetPlaceNum() C.int {
	if e := current(); e != nil && e.placeNum != nil {
		return C.int(e.placeNum())
	}
	return -1
}

//export gomptGetPartitionPlaceNums
func gomptGetPartitionPlaceNums(size C.int, nums *C.int) C.int {
	e := current()
	if e == nil || e.partition == nil {
		return 0
	}
	buf := make([]int, int(size))
	n := e.partition(buf)
	if size > 0 {
		out := unsafe.Slice(nums, int(size))
		for i := range min(n, int(size)) {
			out[i] = C.int(buf[i])
		}
	}
	return C.int(n)
}

//export gomptGetProcID
func gomptGetProcID() C.int {
	if e := current(); e != nil && e.procID != nil {
		return C.int(e.procID())
	}
	return -1
}

//export gomptGetState
func gomptGetState() (C.int, C.ompt_wait_id_t) {
	if e := current(); e != nil && e.state != nil {
		s, w := e.state()
		return C.int(s), C.ompt_wait_id_t(w)
	}
	return ompt.StateUndefined, 0
}

//export gomptGetParallelInfo
func gomptGetParallelInfo(level C.int) (C.int, *C.ompt_data_t, C.int) {
	e := current()
	if e == nil || e.parallelInfo == nil {
		return 0, nil, 0
	}
	pd, size, res := e.parallelInfo(int(level))
	if res == 0 {
		return 0, nil, 0
	}
	var cpd *C.ompt_data_t
	if pd != nil {
		cpd = &threadC(pd, toolslot.ParallelOffset).parallel_data
	}
	return C.int(res), cpd, C.int(size)
}

//export gomptGetTaskInfo
func gomptGetTaskInfo(level C.int) (C.int, C.int, *C.ompt_data_t, *C.ompt_frame_t, *C.ompt_data_t, C.int) {
	e := current()
	if e == nil || e.taskInfo == nil {
		return 0, 0, nil, nil, nil, 0
	}
	flags, td, fr, pd, thread, res := e.taskInfo(int(level))
	if res == 0 {
		return 0, 0, nil, nil, nil, 0
	}
	var ctd, cpd *C.ompt_data_t
	var cfr *C.ompt_frame_t
	if td != nil {
		cs := threadC(td, toolslot.TaskOffset)
		ctd = &cs.task_data
		if fr != nil {
			cfr = &cs.frame
		}
	}
	if pd != nil {
		cpd = &threadC(pd, toolslot.ParallelOffset).parallel_data
	}
	return C.int(res), C.int(flags), ctd, cfr, cpd, C.int(thread)
}

//export gomptGetTaskMemory
func gomptGetTaskMemory(block C.int) (C.int, C.uintptr_t, C.size_t) {
	if e := current(); e != nil && e.taskMemory != nil {
		addr, size, res := e.taskMemory(int(block))
		return C.int(res), C.uintptr_t(addr), C.size_t(size)
	}
	return 0, 0, 0
}

//export gomptGetNumDevices
func gomptGetNumDevices() C.int {
	if e := current(); e != nil && e.numDevices != nil {
		return C.int(e.numDevices())
	}
	return 0
}

//export gomptGetNumProcs
func gomptGetNumProcs() C.int {
	if e := current(); e != nil && e.numProcs != nil {
		return C.int(e.numProcs())
	}
	return 0
}

//export gomptGetTargetInfo
func gomptGetTargetInfo() (C.int, C.uint64_t, C.ompt_id_t, C.ompt_id_t) {
	if e := current(); e != nil && e.targetInfo != nil {
		if dev, tid, hop, ok := e.targetInfo(); ok {
			return 1, C.uint64_t(dev), C.ompt_id_t(tid), C.ompt_id_t(hop)
		}
	}
	return 0, 0, 0, 0
}

//export gomptGetUniqueID
func gomptGetUniqueID() C.uint64_t {
	if e := current(); e != nil && e.uniqueID != nil {
		return C.uint64_t(e.uniqueID())
	}
	return 0
}

//export gomptFinalizeTool
func gomptFinalizeTool() {
	if e := current(); e != nil && e.finalizeTool != nil {
		e.finalizeTool()
	}
}

//export gomptGetDeviceNumProcs
func gomptGetDeviceNumProcs(p C.uintptr_t) C.int {
	if d := deviceAt(p); d != nil && d.numProcs != nil {
		return C.int(d.numProcs(d.h))
	}
	return 0
}

//export gomptGetBufferLimits
func gomptGetBufferLimits(p C.uintptr_t) (C.int, C.int, C.size_t) {
	if d := deviceAt(p); d != nil && d.bufferLimits != nil {
		if n, b, ok := d.bufferLimits(d.h); ok {
			return 1, C.int(n), C.size_t(b)
		}
	}
	return 0, 0, 0
}

//export gomptGetDeviceTime
func gomptGetDeviceTime(p C.uintptr_t) C.ompt_device_time_t {
	if d := deviceAt(p); d != nil && d.time != nil {
		return C.ompt_device_time_t(d.time(d.h))
	}
	return 0
}

//export gomptTranslateTime
func gomptTranslateTime(p C.uintptr_t, t C.ompt_device_time_t) C.double {
	if d := deviceAt(p); d != nil && d.translate != nil {
		return C.double(d.translate(d.h, uint64(t)))
	}
	return 0
}
