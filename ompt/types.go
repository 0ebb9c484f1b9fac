package ompt

import (
	"strconv"
	"unsafe"
)

// Data is the Go form of ompt_data_t: a slot the runtime keeps for a tool
// (tool data, task data, target data, target task data). The tool may
// write it in one callback and read it back in a later one. Value is the
// 64-bit word a C tool sees (the C face hands C tools a pointer to Value);
// Ptr lets a Go tool hang a Go object on the slot without hiding it from
// the garbage collector. The runtime zeroes both when it creates the slot.
type Data struct {
	Value uint64
	Ptr   any
}

// Callback is an event number, ompt_callbacks_t of omp-tools.h.
type Callback int

// Event numbers, as in omp-tools.h. gompt dispatches the device and target
// events; the host events are listed so that ompt_set_callback can answer
// ompt_set_never for them truthfully.
const (
	CallbackThreadBegin      Callback = 1
	CallbackThreadEnd        Callback = 2
	CallbackParallelBegin    Callback = 3
	CallbackParallelEnd      Callback = 4
	CallbackTaskCreate       Callback = 5
	CallbackTaskSchedule     Callback = 6
	CallbackImplicitTask     Callback = 7
	CallbackTarget           Callback = 8
	CallbackTargetDataOp     Callback = 9
	CallbackTargetSubmit     Callback = 10
	CallbackControlTool      Callback = 11
	CallbackDeviceInitialize Callback = 12
	CallbackDeviceFinalize   Callback = 13
	CallbackDeviceLoad       Callback = 14
	CallbackDeviceUnload     Callback = 15
	CallbackSyncRegionWait   Callback = 16
	CallbackMutexReleased    Callback = 17
	CallbackDependences      Callback = 18
	CallbackTaskDependence   Callback = 19
	CallbackWork             Callback = 20
	CallbackMasked           Callback = 21
	CallbackTargetMap        Callback = 22
	CallbackSyncRegion       Callback = 23
	CallbackLockInit         Callback = 24
	CallbackLockDestroy      Callback = 25
	CallbackMutexAcquire     Callback = 26
	CallbackMutexAcquired    Callback = 27
	CallbackNestLock         Callback = 28
	CallbackFlush            Callback = 29
	CallbackCancel           Callback = 30
	CallbackReduction        Callback = 31
	CallbackDispatch         Callback = 32
	CallbackTargetEMI        Callback = 33
	CallbackTargetDataOpEMI  Callback = 34
	CallbackTargetSubmitEMI  Callback = 35
	CallbackTargetMapEMI     Callback = 36
	CallbackError            Callback = 37
)

var callbackNames = [...]string{
	1: "ompt_callback_thread_begin", 2: "ompt_callback_thread_end",
	3: "ompt_callback_parallel_begin", 4: "ompt_callback_parallel_end",
	5: "ompt_callback_task_create", 6: "ompt_callback_task_schedule",
	7: "ompt_callback_implicit_task", 8: "ompt_callback_target",
	9: "ompt_callback_target_data_op", 10: "ompt_callback_target_submit",
	11: "ompt_callback_control_tool", 12: "ompt_callback_device_initialize",
	13: "ompt_callback_device_finalize", 14: "ompt_callback_device_load",
	15: "ompt_callback_device_unload", 16: "ompt_callback_sync_region_wait",
	17: "ompt_callback_mutex_released", 18: "ompt_callback_dependences",
	19: "ompt_callback_task_dependence", 20: "ompt_callback_work",
	21: "ompt_callback_masked", 22: "ompt_callback_target_map",
	23: "ompt_callback_sync_region", 24: "ompt_callback_lock_init",
	25: "ompt_callback_lock_destroy", 26: "ompt_callback_mutex_acquire",
	27: "ompt_callback_mutex_acquired", 28: "ompt_callback_nest_lock",
	29: "ompt_callback_flush", 30: "ompt_callback_cancel",
	31: "ompt_callback_reduction", 32: "ompt_callback_dispatch",
	33: "ompt_callback_target_emi", 34: "ompt_callback_target_data_op_emi",
	35: "ompt_callback_target_submit_emi", 36: "ompt_callback_target_map_emi",
	37: "ompt_callback_error",
}

// String returns the omp-tools.h name, or "ompt_callback(N)" for a number
// the header does not define.
func (c Callback) String() string {
	if c > 0 && int(c) < len(callbackNames) {
		return callbackNames[c]
	}
	return "ompt_callback(" + strconv.Itoa(int(c)) + ")"
}

// SetResult is ompt_set_result_t: what ompt_set_callback (and later
// ompt_set_trace_ompt) says about an event.
type SetResult int

// Set results, as in omp-tools.h.
const (
	SetError           SetResult = 0 // registration failed: bad event, bad callback, or wrong time
	SetNever           SetResult = 1 // the callback will never be invoked by gompt
	SetImpossible      SetResult = 2 // the event may occur but no callback is possible
	SetSometimes       SetResult = 3 // the callback is invoked at some occurrences
	SetSometimesPaired SetResult = 4 // invoked at some occurrences, begin and end always paired
	SetAlways          SetResult = 5 // invoked at every occurrence
)

func (r SetResult) String() string {
	switch r {
	case SetError:
		return "ompt_set_error"
	case SetNever:
		return "ompt_set_never"
	case SetImpossible:
		return "ompt_set_impossible"
	case SetSometimes:
		return "ompt_set_sometimes"
	case SetSometimesPaired:
		return "ompt_set_sometimes_paired"
	case SetAlways:
		return "ompt_set_always"
	}
	return "ompt_set_result(" + strconv.Itoa(int(r)) + ")"
}

// Endpoint is ompt_scope_endpoint_t.
type Endpoint int

// Scope endpoints, as in omp-tools.h.
const (
	ScopeBegin    Endpoint = 1
	ScopeEnd      Endpoint = 2
	ScopeBeginEnd Endpoint = 3
)

func (e Endpoint) String() string {
	switch e {
	case ScopeBegin:
		return "begin"
	case ScopeEnd:
		return "end"
	case ScopeBeginEnd:
		return "beginend"
	}
	return "endpoint(" + strconv.Itoa(int(e)) + ")"
}

// TargetKind is ompt_target_t: which construct a target event is for.
type TargetKind int

// Target construct kinds, as in omp-tools.h. A target data construct is
// reported as an enter-data construct where it begins and an exit-data
// construct where it ends.
const (
	KindTarget                TargetKind = 1
	KindTargetEnterData       TargetKind = 2
	KindTargetExitData        TargetKind = 3
	KindTargetUpdate          TargetKind = 4
	KindTargetNowait          TargetKind = 9
	KindTargetEnterDataNowait TargetKind = 10
	KindTargetExitDataNowait  TargetKind = 11
	KindTargetUpdateNowait    TargetKind = 12
)

// Nowait reports whether k is one of the nowait kinds (a deferred target
// task exists, and target_task_data is passed).
func (k TargetKind) Nowait() bool { return k >= KindTargetNowait && k <= KindTargetUpdateNowait }

func (k TargetKind) String() string {
	switch k {
	case KindTarget:
		return "ompt_target"
	case KindTargetEnterData:
		return "ompt_target_enter_data"
	case KindTargetExitData:
		return "ompt_target_exit_data"
	case KindTargetUpdate:
		return "ompt_target_update"
	case KindTargetNowait:
		return "ompt_target_nowait"
	case KindTargetEnterDataNowait:
		return "ompt_target_enter_data_nowait"
	case KindTargetExitDataNowait:
		return "ompt_target_exit_data_nowait"
	case KindTargetUpdateNowait:
		return "ompt_target_update_nowait"
	}
	return "ompt_target(" + strconv.Itoa(int(k)) + ")"
}

// DataOpKind is ompt_target_data_op_t.
type DataOpKind int

// Data operation kinds, as in omp-tools.h; DataOpMemset is OpenMP 6.0's
// ompt_target_data_memset (8), as LLVM uses it (the 5.1 header has no
// memset). The async kinds are for operations of nowait constructs.
// DataOpTransfer, DataOpTransferRect and their async forms are OpenMP
// 6.0's, reported only with GOMPT_OMPT_VERSION=6.0 (see the package
// documentation, "OpenMP versions"), which reports no
// transfer_to_device or transfer_from_device kind.
const (
	DataOpAlloc                   DataOpKind = 1
	DataOpTransferToDevice        DataOpKind = 2
	DataOpTransferFromDevice      DataOpKind = 3
	DataOpDelete                  DataOpKind = 4
	DataOpAssociate               DataOpKind = 5
	DataOpDisassociate            DataOpKind = 6
	DataOpTransfer                DataOpKind = 7
	DataOpMemset                  DataOpKind = 8
	DataOpTransferRect            DataOpKind = 9
	DataOpAllocAsync              DataOpKind = 17
	DataOpTransferToDeviceAsync   DataOpKind = 18
	DataOpTransferFromDeviceAsync DataOpKind = 19
	DataOpDeleteAsync             DataOpKind = 20
	DataOpTransferAsync           DataOpKind = 23
	DataOpMemsetAsync             DataOpKind = 24
	DataOpTransferRectAsync       DataOpKind = 25
)

func (k DataOpKind) String() string {
	switch k {
	case DataOpAlloc:
		return "ompt_target_data_alloc"
	case DataOpTransferToDevice:
		return "ompt_target_data_transfer_to_device"
	case DataOpTransferFromDevice:
		return "ompt_target_data_transfer_from_device"
	case DataOpDelete:
		return "ompt_target_data_delete"
	case DataOpAssociate:
		return "ompt_target_data_associate"
	case DataOpDisassociate:
		return "ompt_target_data_disassociate"
	case DataOpTransfer:
		return "ompt_target_data_transfer"
	case DataOpMemset:
		return "ompt_target_data_memset"
	case DataOpTransferRect:
		return "ompt_target_data_transfer_rect"
	case DataOpAllocAsync:
		return "ompt_target_data_alloc_async"
	case DataOpTransferToDeviceAsync:
		return "ompt_target_data_transfer_to_device_async"
	case DataOpTransferFromDeviceAsync:
		return "ompt_target_data_transfer_from_device_async"
	case DataOpDeleteAsync:
		return "ompt_target_data_delete_async"
	case DataOpTransferAsync:
		return "ompt_target_data_transfer_async"
	case DataOpMemsetAsync:
		return "ompt_target_data_memset_async"
	case DataOpTransferRectAsync:
		return "ompt_target_data_transfer_rect_async"
	}
	return "ompt_target_data_op(" + strconv.Itoa(int(k)) + ")"
}

// Map flags (ompt_target_map_flag_t) for target_map events.
const (
	MapFlagTo       uint32 = 0x01
	MapFlagFrom     uint32 = 0x02
	MapFlagAlloc    uint32 = 0x04
	MapFlagRelease  uint32 = 0x08
	MapFlagDelete   uint32 = 0x10
	MapFlagImplicit uint32 = 0x20
)

// InitialDevice is omp_initial_device (-1): how the runtime names the
// host side of a data operation when it reports one (RUNTIME.md). By
// default (OpenMP 5.2) tools get the host as N, the initial device's
// number (initial_device_num), in data-op callbacks and records; with
// GOMPT_OMPT_VERSION=6.0 they get -1 in every event, and with
// GOMPT_TOOL_PROFILE=llvm -1 in data operations; see the package
// documentation, "OpenMP versions".
const InitialDevice = -1

// Subvolume is OpenMP 6.0's ompt_subvolume_t, byte for byte (48 bytes on
// 64-bit targets): one side of a rectangular copy
// (omp_target_memcpy_rect). Base is the array's address, Size its element
// size in bytes, NumDims the number of dimensions, and Volume, Offsets
// and Dimensions point to NumDims values each (the copied volume, this
// side's offsets and this side's array dimensions, outermost first).
// With GOMPT_OMPT_VERSION=6.0 a DataOpTransferRect operation's src and
// dest addresses point to one Subvolume each, valid during the
// callback only (SubvolumeAt reads them).
type Subvolume struct {
	Base       uintptr
	Size       uint64
	NumDims    uint64
	Volume     *uint64
	Offsets    *uint64
	Dimensions *uint64
}

// SubvolumeAt returns the Subvolume at addr, the src or dest address of a
// DataOpTransferRect or DataOpTransferRectAsync callback; only during
// that callback.
func SubvolumeAt(addr uintptr) *Subvolume {
	// addr is a runtime-owned *Subvolume, kept alive for the callback
	return *(**Subvolume)(unsafe.Pointer(&addr))
}

// Dims returns s's volume, offsets and dimensions as slices (valid while
// s is).
func (s *Subvolume) Dims() (volume, offsets, dimensions []uint64) {
	n := int(s.NumDims)
	return unsafe.Slice(s.Volume, n), unsafe.Slice(s.Offsets, n), unsafe.Slice(s.Dimensions, n)
}

// Thread states (ompt_state_t) that gompt employs; ompt_enumerate_states
// lists exactly these.
const (
	StateWorkSerial       = 0x000
	StateWaitTarget       = 0x080
	StateWaitTargetMap    = 0x081
	StateWaitTargetUpdate = 0x082
	StateUndefined        = 0x102
)

// Task flags (ompt_task_flag_t) reported by ompt_get_task_info,
// implicit_task and task_create.
const (
	TaskInitial = 0x00000001
	TaskTarget  = 0x00000008
)

// ThreadInitial is ompt_thread_initial, the thread type of thread_begin.
const ThreadInitial = 1

// Task statuses (ompt_task_status_t) of task_schedule.
const (
	TaskComplete = 1
	TaskSwitch   = 7
)

// Callback function types, the Go forms of the omp-tools.h typedefs. A
// tool passes a value of one of these types (or a func literal with the
// same signature) to ompt_set_callback. Pointer arguments (*Data,
// *uint64) point into slots the runtime owns: valid from the begin event to
// the matching end event, reused afterwards. Slices are valid only during
// the call. Addresses (uintptr) identify memory; tools must not
// dereference them. Callbacks run synchronously on the goroutine that
// causes the event, possibly several goroutines at once.
type (
	// ThreadBeginCallback is ompt_callback_thread_begin_t; threadType is
	// ThreadInitial (every OS thread that enters gompt is an initial
	// thread to the tool, as a native thread is to LLVM's libomp).
	ThreadBeginCallback func(threadType int, threadData *Data)
	// ThreadEndCallback is ompt_callback_thread_end_t.
	ThreadEndCallback func(threadData *Data)
	// ParallelBeginCallback is ompt_callback_parallel_begin_t (gompt has no
	// parallel regions: never called).
	ParallelBeginCallback func(encounteringTaskData *Data, encounteringTaskFrame *Frame, parallelData *Data, requestedParallelism uint32, flags int, codePtr uintptr)
	// ParallelEndCallback is ompt_callback_parallel_end_t (never called).
	ParallelEndCallback func(parallelData, encounteringTaskData *Data, flags int, codePtr uintptr)
	// TaskCreateCallback is ompt_callback_task_create_t.
	TaskCreateCallback func(encounteringTaskData *Data, encounteringTaskFrame *Frame, newTaskData *Data, flags int, hasDependences bool, codePtr uintptr)
	// TaskScheduleCallback is ompt_callback_task_schedule_t.
	TaskScheduleCallback func(priorTaskData *Data, priorTaskStatus int, nextTaskData *Data)
	// ImplicitTaskCallback is ompt_callback_implicit_task_t.
	ImplicitTaskCallback func(endpoint Endpoint, parallelData, taskData *Data, actualParallelism, index uint32, flags int)

	// DeviceInitializeCallback is ompt_callback_device_initialize_t.
	DeviceInitializeCallback func(deviceNum int, typ string, device *DeviceHandle, lookup LookupFunc, documentation string)
	// DeviceFinalizeCallback is ompt_callback_device_finalize_t.
	DeviceFinalizeCallback func(deviceNum int)
	// DeviceLoadCallback is ompt_callback_device_load_t; filename is "" for
	// an image that has no file, and vmaInFile, hostAddr, deviceAddr are 0
	// where they do not exist (the C face passes ompt_addr_none).
	DeviceLoadCallback func(deviceNum int, filename string, offsetInFile int64, vmaInFile uintptr, bytes uint64, hostAddr, deviceAddr uintptr, moduleID uint64)
	// DeviceUnloadCallback is ompt_callback_device_unload_t.
	DeviceUnloadCallback func(deviceNum int, moduleID uint64)

	// TargetCallback is ompt_callback_target_t.
	TargetCallback func(kind TargetKind, endpoint Endpoint, deviceNum int, taskData *Data, targetID uint64, codePtr uintptr)
	// TargetEMICallback is ompt_callback_target_emi_t; targetTaskData is
	// nil for synchronous constructs.
	TargetEMICallback func(kind TargetKind, endpoint Endpoint, deviceNum int, taskData, targetTaskData, targetData *Data, codePtr uintptr)
	// TargetDataOpCallback is ompt_callback_target_data_op_t.
	TargetDataOpCallback func(targetID, hostOpID uint64, op DataOpKind, srcAddr uintptr, srcDeviceNum int, destAddr uintptr, destDeviceNum int, bytes uint64, codePtr uintptr)
	// TargetDataOpEMICallback is ompt_callback_target_data_op_emi_t;
	// targetData is nil outside a construct, targetTaskData nil unless the
	// construct is nowait.
	TargetDataOpEMICallback func(endpoint Endpoint, targetTaskData, targetData *Data, hostOpID *uint64, op DataOpKind, srcAddr uintptr, srcDeviceNum int, destAddr uintptr, destDeviceNum int, bytes uint64, codePtr uintptr)
	// TargetSubmitCallback is ompt_callback_target_submit_t.
	TargetSubmitCallback func(targetID, hostOpID uint64, requestedNumTeams uint32)
	// TargetSubmitEMICallback is ompt_callback_target_submit_emi_t.
	TargetSubmitEMICallback func(endpoint Endpoint, targetData *Data, hostOpID *uint64, requestedNumTeams uint32)
	// TargetMapCallback is ompt_callback_target_map_t; the slices have one
	// element per item (nitems = len(hostAddr)).
	TargetMapCallback func(targetID uint64, hostAddr, deviceAddr []uintptr, bytes []uint64, mappingFlags []uint32, codePtr uintptr)
	// TargetMapEMICallback is ompt_callback_target_map_emi_t.
	TargetMapEMICallback func(targetData *Data, hostAddr, deviceAddr []uintptr, bytes []uint64, mappingFlags []uint32, codePtr uintptr)
	// DependencesCallback is ompt_callback_dependences_t: the depend
	// items of a target task (ndeps = len(deps)); taskData is the
	// construct's target_task_data slot. deps is read only during the call.
	DependencesCallback func(taskData *Data, deps []Dependence)
)

// DependenceType is ompt_dependence_type_t.
type DependenceType int

// Dependence types, as in omp-tools.h.
const (
	DependenceIn            DependenceType = 1
	DependenceOut           DependenceType = 2
	DependenceInOut         DependenceType = 3
	DependenceMutexInOutSet DependenceType = 4
	DependenceSource        DependenceType = 5
	DependenceSink          DependenceType = 6
	DependenceInOutSet      DependenceType = 7
)

func (d DependenceType) String() string {
	switch d {
	case DependenceIn:
		return "ompt_dependence_type_in"
	case DependenceOut:
		return "ompt_dependence_type_out"
	case DependenceInOut:
		return "ompt_dependence_type_inout"
	case DependenceMutexInOutSet:
		return "ompt_dependence_type_mutexinoutset"
	case DependenceSource:
		return "ompt_dependence_type_source"
	case DependenceSink:
		return "ompt_dependence_type_sink"
	case DependenceInOutSet:
		return "ompt_dependence_type_inoutset"
	}
	return "ompt_dependence_type(" + strconv.Itoa(int(d)) + ")"
}

// Dependence is ompt_dependence_t: Addr is the variable's address (the
// first byte of the list item; variable.ptr in C).
type Dependence struct {
	Addr uintptr
	Type DependenceType
}
