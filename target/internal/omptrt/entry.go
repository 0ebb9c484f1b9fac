package omptrt

import (
	"reflect"
	"runtime"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
)

// states gompt employs, in enumeration order.
var states = []struct {
	v    int
	name string
}{
	{ompt.StateWorkSerial, "ompt_state_work_serial"},
	{ompt.StateWaitTarget, "ompt_state_wait_target"},
	{ompt.StateWaitTargetMap, "ompt_state_wait_target_map"},
	{ompt.StateWaitTargetUpdate, "ompt_state_wait_target_update"},
}

// hostEntries builds the entry points of one tool: the ones that keep
// per-tool state (callbacks, data slots, finalize_tool) are bound to t.
func hostEntries(t *tool) map[string]any {
	return map[string]any{
		"ompt_enumerate_states": ompt.EnumerateStatesFunc(func(cur int) (int, string, bool) {
			i := 0
			if cur != ompt.StateUndefined {
				for i = 0; i < len(states) && states[i].v != cur; i++ {
				}
				i++
			}
			if i >= len(states) {
				return 0, "", false
			}
			return states[i].v, states[i].name, true
		}),
		"ompt_enumerate_mutex_impls": ompt.EnumerateMutexImplsFunc(func(int) (int, string, bool) {
			return 0, "", false // gompt has no OpenMP locks
		}),
		"ompt_set_callback": ompt.SetCallbackFunc(t.setCallback),
		"ompt_get_callback": ompt.GetCallbackFunc(func(ev ompt.Callback) (any, bool) {
			if ev <= 0 || ev >= numCallbacks {
				return nil, false
			}
			f := t.callback(ev)
			return f, f != nil
		}),
		"ompt_get_thread_data": ompt.GetThreadDataFunc(func() *ompt.Data {
			if s := t.threadSlots(); s != nil {
				return &s.thread
			}
			return nil
		}),
		"ompt_get_num_places": ompt.GetNumPlacesFunc(func() int { return 0 }),
		"ompt_get_place_proc_ids": ompt.GetPlaceProcIDsFunc(func(int, []int) int {
			return 0
		}),
		"ompt_get_place_num": ompt.GetPlaceNumFunc(func() int { return -1 }),
		"ompt_get_partition_place_nums": ompt.GetPartitionPlaceNumsFunc(func([]int) int {
			return 0
		}),
		"ompt_get_proc_id": ompt.GetProcIDFunc(procID),
		"ompt_get_state":   ompt.GetStateFunc(getState),
		"ompt_get_parallel_info": ompt.GetParallelInfoFunc(func(level int) (*ompt.Data, int, int) {
			s := t.threadSlots()
			if level != 0 || s == nil {
				return nil, 0, 0
			}
			return &s.parallel, 1, 2
		}),
		"ompt_get_task_info": ompt.GetTaskInfoFunc(func(level int) (int, *ompt.Data, *ompt.Frame, *ompt.Data, int, int) {
			s := t.threadSlots()
			if level != 0 || s == nil {
				return 0, nil, nil, nil, 0, 0
			}
			return ompt.TaskInitial, &s.task, &s.frame, &s.parallel, 0, 2
		}),
		"ompt_get_task_memory": ompt.GetTaskMemoryFunc(func(int) (uintptr, uint64, int) {
			return 0, 0, 0
		}),
		"ompt_get_num_devices": ompt.GetNumDevicesFunc(numDevices),
		"ompt_get_num_procs":   ompt.GetNumProcsFunc(runtime.NumCPU),
		"ompt_get_target_info": ompt.GetTargetInfoFunc(func() (int, uint64, uint64, bool) { return targetInfoFor(t) }),
		"ompt_get_unique_id":   ompt.GetUniqueIDFunc(nextID),
		"ompt_finalize_tool":   ompt.FinalizeToolFunc(func() { detach(t) }),
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
		return toolDev(t.dev), id, t.opID, true
	}
	tid, hop := t.idsFor(tl, t.opID)
	return toolDev(t.dev), tid, hop, true
}

func getState() (int, uint64) {
	t, _ := currentTarget()
	if t == nil {
		return ompt.StateWorkSerial, 0
	}
	kind := t.kind
	switch {
	case kind == ompt.KindTargetUpdate || kind == ompt.KindTargetUpdateNowait:
		return ompt.StateWaitTargetUpdate, 0
	case t.opState == opData, kind != ompt.KindTarget && kind != ompt.KindTargetNowait:
		return ompt.StateWaitTargetMap, 0
	}
	return ompt.StateWaitTarget, 0
}

func (t *tool) callback(ev ompt.Callback) any {
	mu.Lock()
	defer mu.Unlock()
	return t.cbs[ev]
}

// eventResult says what set_callback answers for each event gompt knows.
func eventResult(ev ompt.Callback) ompt.SetResult {
	if llvmProfile && (ev == ompt.CallbackTargetMap || ev == ompt.CallbackTargetMapEMI) {
		return ompt.SetNever // LLVM's runtime never dispatches them
	}
	if ev.Dispatched() {
		return ompt.SetAlways
	}
	if ev > 0 && ev < numCallbacks {
		return ompt.SetNever // host events: gompt has no host parallel regions, tasks or locks
	}
	return ompt.SetError
}

// setCallback is ompt_set_callback for tool t. It accepts registrations
// while t is initializing or active (a registration after initialize takes
// effect for constructs that begin afterwards); before and after that it
// answers SetError, as the standard allows. An unknown event number, or a
// callback whose type is not the event's callback type, is SetError and
// changes nothing. A nil callback unregisters and answers as a
// registration would. Events gompt never dispatches answer SetNever and
// are not recorded.
func (t *tool) setCallback(ev ompt.Callback, cb any) ompt.SetResult {
	res := eventResult(ev)
	if res == ompt.SetError {
		return ompt.SetError
	}
	var val any
	if cb != nil {
		rv := reflect.ValueOf(cb)
		if res == ompt.SetNever {
			if rv.Kind() != reflect.Func {
				return ompt.SetError
			}
			return ompt.SetNever
		}
		want := omptlink.CallbackType(int32(ev))
		if rv.Kind() != reflect.Func || !rv.Type().ConvertibleTo(want) {
			return ompt.SetError
		}
		if !rv.IsNil() {
			val = rv.Convert(want).Interface()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if t.done.Load() || (!t.initializing && !t.isActiveLocked()) {
		return ompt.SetError
	}
	if res == ompt.SetNever {
		return ompt.SetNever
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
