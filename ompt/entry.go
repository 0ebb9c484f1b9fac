package ompt

import (
	"reflect"

	"github.com/gompt/gompt/internal/omptlink"
)

// LookupFunc is the Go form of ompt_function_lookup_t: it returns the
// entry point with the given name, a value of the named function type
// listed in the package documentation (SetCallbackFunc for
// "ompt_set_callback", ...), or nil for a name gompt does not provide.
// Safe for concurrent use, at any time after the tool's initializer is
// called.
type LookupFunc func(name string) any

// Entry point types: the Go forms of the omp-tools.h typedefs of Table 4.1.
// Results that C returns through pointer arguments are Go results.
type (
	// EnumerateStatesFunc is ompt_enumerate_states_t: start with
	// StateUndefined; ok is false after the last state.
	EnumerateStatesFunc func(currentState int) (nextState int, name string, ok bool)
	// EnumerateMutexImplsFunc is ompt_enumerate_mutex_impls_t: start with 0
	// (ompt_mutex_impl_none).
	EnumerateMutexImplsFunc func(currentImpl int) (nextImpl int, name string, ok bool)
	// SetCallbackFunc is ompt_set_callback_t; callback is a value of the
	// event's callback type (TargetCallback for CallbackTarget, ...) or a
	// func literal with that signature; nil unregisters.
	SetCallbackFunc func(event Callback, callback any) SetResult
	// GetCallbackFunc is ompt_get_callback_t: the callback the calling
	// tool registered for event, as its named type.
	GetCallbackFunc func(event Callback) (callback any, ok bool)
	// GetThreadDataFunc is ompt_get_thread_data_t.
	GetThreadDataFunc func() *Data
	// GetNumPlacesFunc is ompt_get_num_places_t.
	GetNumPlacesFunc func() int
	// GetPlaceProcIDsFunc is ompt_get_place_proc_ids_t: fills ids, returns
	// the number of processors of the place.
	GetPlaceProcIDsFunc func(placeNum int, ids []int) int
	// GetPlaceNumFunc is ompt_get_place_num_t.
	GetPlaceNumFunc func() int
	// GetPartitionPlaceNumsFunc is ompt_get_partition_place_nums_t.
	GetPartitionPlaceNumsFunc func(placeNums []int) int
	// GetProcIDFunc is ompt_get_proc_id_t.
	GetProcIDFunc func() int
	// GetStateFunc is ompt_get_state_t.
	GetStateFunc func() (state int, waitID uint64)
	// GetParallelInfoFunc is ompt_get_parallel_info_t: result 2 when the
	// region exists and is described, 0 when there is none.
	GetParallelInfoFunc func(ancestorLevel int) (parallelData *Data, teamSize int, result int)
	// GetTaskInfoFunc is ompt_get_task_info_t: result 2 when the task
	// exists and is described, 0 when there is none.
	GetTaskInfoFunc func(ancestorLevel int) (flags int, taskData *Data, taskFrame *Frame, parallelData *Data, threadNum int, result int)
	// GetTaskMemoryFunc is ompt_get_task_memory_t.
	GetTaskMemoryFunc func(block int) (addr uintptr, size uint64, result int)
	// GetTargetInfoFunc is ompt_get_target_info_t: ok is false when the
	// calling goroutine is in no target construct.
	GetTargetInfoFunc func() (deviceNum int, targetID, hostOpID uint64, ok bool)
	// GetNumDevicesFunc is ompt_get_num_devices_t.
	GetNumDevicesFunc func() int
	// GetNumProcsFunc is ompt_get_num_procs_t.
	GetNumProcsFunc func() int
	// GetUniqueIDFunc is ompt_get_unique_id_t.
	GetUniqueIDFunc func() uint64
	// FinalizeToolFunc is ompt_finalize_tool_t.
	FinalizeToolFunc func()
)

// Frame is ompt_frame_t. gompt has no host tasks of its own, so the frames
// it returns are zero (no frame information).
type Frame struct {
	ExitFrame, EnterFrame           Data
	ExitFrameFlags, EnterFrameFlags int
}

// HostEntryNames lists the Table 4.1 names, each resolved by a tool's
// lookup function.
var HostEntryNames = []string{
	"ompt_enumerate_states", "ompt_enumerate_mutex_impls",
	"ompt_set_callback", "ompt_get_callback", "ompt_get_thread_data",
	"ompt_get_num_places", "ompt_get_place_proc_ids", "ompt_get_place_num",
	"ompt_get_partition_place_nums", "ompt_get_proc_id", "ompt_get_state",
	"ompt_get_parallel_info", "ompt_get_task_info", "ompt_get_task_memory",
	"ompt_get_num_devices", "ompt_get_num_procs", "ompt_get_target_info",
	"ompt_get_unique_id", "ompt_finalize_tool",
}

// Dispatched reports whether gompt dispatches event c (the target and
// device events; set_callback answers ompt_set_always for them and
// ompt_set_never for the other events omp-tools.h defines).
func (c Callback) Dispatched() bool {
	_, ok := callbackTypes[c]
	return ok
}

// callbackTypes gives the Go callback type of each dispatched event.
var callbackTypes = map[Callback]reflect.Type{
	CallbackThreadBegin:      reflect.TypeFor[ThreadBeginCallback](),
	CallbackThreadEnd:        reflect.TypeFor[ThreadEndCallback](),
	CallbackParallelBegin:    reflect.TypeFor[ParallelBeginCallback](),
	CallbackParallelEnd:      reflect.TypeFor[ParallelEndCallback](),
	CallbackTaskCreate:       reflect.TypeFor[TaskCreateCallback](),
	CallbackTaskSchedule:     reflect.TypeFor[TaskScheduleCallback](),
	CallbackImplicitTask:     reflect.TypeFor[ImplicitTaskCallback](),
	CallbackTarget:           reflect.TypeFor[TargetCallback](),
	CallbackTargetEMI:        reflect.TypeFor[TargetEMICallback](),
	CallbackTargetDataOp:     reflect.TypeFor[TargetDataOpCallback](),
	CallbackTargetDataOpEMI:  reflect.TypeFor[TargetDataOpEMICallback](),
	CallbackTargetSubmit:     reflect.TypeFor[TargetSubmitCallback](),
	CallbackTargetSubmitEMI:  reflect.TypeFor[TargetSubmitEMICallback](),
	CallbackTargetMap:        reflect.TypeFor[TargetMapCallback](),
	CallbackTargetMapEMI:     reflect.TypeFor[TargetMapEMICallback](),
	CallbackDependences:      reflect.TypeFor[DependencesCallback](),
	CallbackDeviceInitialize: reflect.TypeFor[DeviceInitializeCallback](),
	CallbackDeviceFinalize:   reflect.TypeFor[DeviceFinalizeCallback](),
	CallbackDeviceLoad:       reflect.TypeFor[DeviceLoadCallback](),
	CallbackDeviceUnload:     reflect.TypeFor[DeviceUnloadCallback](),
}

func init() {
	omptlink.CallbackType = func(ev int32) reflect.Type { return callbackTypes[Callback(ev)] }
}
