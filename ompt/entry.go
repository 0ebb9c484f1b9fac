package ompt

import (
	"reflect"
	"runtime"
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

// states gompt employs, in enumeration order.
var states = []struct {
	v    int
	name string
}{
	{StateWorkSerial, "ompt_state_work_serial"},
	{StateWaitTarget, "ompt_state_wait_target"},
	{StateWaitTargetMap, "ompt_state_wait_target_map"},
	{StateWaitTargetUpdate, "ompt_state_wait_target_update"},
}

// hostEntries builds the entry points of one tool: the ones that keep
// per-tool state (callbacks, data slots, finalize_tool) are bound to t.
func hostEntries(t *tool) map[string]any {
	return map[string]any{
		"ompt_enumerate_states": EnumerateStatesFunc(func(cur int) (int, string, bool) {
			i := 0
			if cur != StateUndefined {
				for i = 0; i < len(states) && states[i].v != cur; i++ {
				}
				i++
			}
			if i >= len(states) {
				return 0, "", false
			}
			return states[i].v, states[i].name, true
		}),
		"ompt_enumerate_mutex_impls": EnumerateMutexImplsFunc(func(int) (int, string, bool) {
			return 0, "", false // gompt has no OpenMP locks
		}),
		"ompt_set_callback": SetCallbackFunc(t.setCallback),
		"ompt_get_callback": GetCallbackFunc(func(ev Callback) (any, bool) {
			if ev <= 0 || ev >= numCallbacks {
				return nil, false
			}
			f := t.callback(ev)
			return f, f != nil
		}),
		"ompt_get_thread_data": GetThreadDataFunc(func() *Data {
			if s := t.threadSlots(); s != nil {
				return &s.thread
			}
			return nil
		}),
		"ompt_get_num_places": GetNumPlacesFunc(func() int { return 0 }),
		"ompt_get_place_proc_ids": GetPlaceProcIDsFunc(func(int, []int) int {
			return 0
		}),
		"ompt_get_place_num": GetPlaceNumFunc(func() int { return -1 }),
		"ompt_get_partition_place_nums": GetPartitionPlaceNumsFunc(func([]int) int {
			return 0
		}),
		"ompt_get_proc_id": GetProcIDFunc(procID),
		"ompt_get_state":   GetStateFunc(getState),
		"ompt_get_parallel_info": GetParallelInfoFunc(func(level int) (*Data, int, int) {
			s := t.threadSlots()
			if level != 0 || s == nil {
				return nil, 0, 0
			}
			return &s.parallel, 1, 2
		}),
		"ompt_get_task_info": GetTaskInfoFunc(func(level int) (int, *Data, *Frame, *Data, int, int) {
			s := t.threadSlots()
			if level != 0 || s == nil {
				return 0, nil, nil, nil, 0, 0
			}
			return TaskInitial, &s.task, &s.frame, &s.parallel, 0, 2
		}),
		"ompt_get_task_memory": GetTaskMemoryFunc(func(int) (uintptr, uint64, int) {
			return 0, 0, 0
		}),
		"ompt_get_num_devices": GetNumDevicesFunc(numDevices),
		"ompt_get_num_procs":   GetNumProcsFunc(runtime.NumCPU),
		"ompt_get_target_info": GetTargetInfoFunc(func() (int, uint64, uint64, bool) { return targetInfoFor(t) }),
		"ompt_get_unique_id":   GetUniqueIDFunc(nextID),
		"ompt_finalize_tool":   FinalizeToolFunc(func() { detach(t) }),
	}
}

func numDevices() int {
	mu.Lock()
	rt := runtimeIfc
	mu.Unlock()
	if rt == nil {
		return 0
	}
	return rt.NumDevices()
}

// getTargetInfo answers with the runtime's ids (as for a tool that holds
// none of its own).
func getTargetInfo() (int, uint64, uint64, bool) { return targetInfoFor(nil) }

// targetInfoFor is ompt_get_target_info for tool tl: the construct the
// calling goroutine is in, with the ids tl holds in its slots (an EMI
// tool's own target_data value and host_op_id), the runtime's where tl
// left a slot 0; the host_op_id is 0 between operations.
func targetInfoFor(tl *tool) (int, uint64, uint64, bool) {
	t, id := currentTarget()
	if t == nil {
		return 0, 0, 0, false
	}
	if tl == nil {
		return t.dev, id, t.opID, true
	}
	tid, hop := t.idsFor(tl, t.opID)
	return t.dev, tid, hop, true
}

func getState() (int, uint64) {
	t, _ := currentTarget()
	if t == nil {
		return StateWorkSerial, 0
	}
	kind := t.kind
	switch {
	case kind == KindTargetUpdate || kind == KindTargetUpdateNowait:
		return StateWaitTargetUpdate, 0
	case t.opState == opData, kind != KindTarget && kind != KindTargetNowait:
		return StateWaitTargetMap, 0
	}
	return StateWaitTarget, 0
}

func (t *tool) callback(ev Callback) any {
	mu.Lock()
	defer mu.Unlock()
	return t.cbs[ev]
}

// eventResult says what set_callback answers for each event gompt knows.
func eventResult(ev Callback) SetResult {
	if ev.Dispatched() {
		return SetAlways
	}
	if ev > 0 && ev < numCallbacks {
		return SetNever // host events: gompt has no host parallel regions, tasks or locks
	}
	return SetError
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

// setCallback is ompt_set_callback for tool t. It accepts registrations
// while t is initializing or active (a registration after initialize takes
// effect for constructs that begin afterwards); before and after that it
// answers SetError, as the standard allows. An unknown event number, or a
// callback whose type is not the event's callback type, is SetError and
// changes nothing. A nil callback unregisters and answers as a
// registration would. Events gompt never dispatches answer SetNever and
// are not recorded.
func (t *tool) setCallback(ev Callback, cb any) SetResult {
	res := eventResult(ev)
	if res == SetError {
		return SetError
	}
	var val any
	if cb != nil {
		rv := reflect.ValueOf(cb)
		if res == SetNever {
			if rv.Kind() != reflect.Func {
				return SetError
			}
			return SetNever
		}
		want := callbackTypes[ev]
		if rv.Kind() != reflect.Func || !rv.Type().ConvertibleTo(want) {
			return SetError
		}
		if !rv.IsNil() {
			val = rv.Convert(want).Interface()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if t.done.Load() || (!t.initializing && !t.isActiveLocked()) {
		return SetError
	}
	if res == SetNever {
		return SetNever
	}
	t.cbs[ev] = val
	if !t.initializing {
		publishLocked()
	}
	return res
}

func (t *tool) isActiveLocked() bool {
	for _, a := range active {
		if a == t {
			return true
		}
	}
	return false
}
