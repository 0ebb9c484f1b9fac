package omptrt

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookupNames(t *testing.T) {
	r := &recorder{}
	withTool(t, r, 2)
	want := map[string]any{
		"ompt_enumerate_states": ompt.EnumerateStatesFunc(nil), "ompt_enumerate_mutex_impls": ompt.EnumerateMutexImplsFunc(nil),
		"ompt_set_callback": ompt.SetCallbackFunc(nil), "ompt_get_callback": ompt.GetCallbackFunc(nil),
		"ompt_get_thread_data": ompt.GetThreadDataFunc(nil), "ompt_get_num_places": ompt.GetNumPlacesFunc(nil),
		"ompt_get_place_proc_ids": ompt.GetPlaceProcIDsFunc(nil), "ompt_get_place_num": ompt.GetPlaceNumFunc(nil),
		"ompt_get_partition_place_nums": ompt.GetPartitionPlaceNumsFunc(nil), "ompt_get_proc_id": ompt.GetProcIDFunc(nil),
		"ompt_get_state": ompt.GetStateFunc(nil), "ompt_get_parallel_info": ompt.GetParallelInfoFunc(nil),
		"ompt_get_task_info": ompt.GetTaskInfoFunc(nil), "ompt_get_task_memory": ompt.GetTaskMemoryFunc(nil),
		"ompt_get_num_devices": ompt.GetNumDevicesFunc(nil), "ompt_get_num_procs": ompt.GetNumProcsFunc(nil),
		"ompt_get_target_info": ompt.GetTargetInfoFunc(nil), "ompt_get_unique_id": ompt.GetUniqueIDFunc(nil),
		"ompt_finalize_tool": ompt.FinalizeToolFunc(nil),
	}
	require.Len(t, ompt.HostEntryNames, 19, "HostEntryNames: Table 4.1 has 19")
	require.Len(t, want, len(ompt.HostEntryNames), "the names this test expects")
	for _, name := range ompt.HostEntryNames {
		f := r.lookup(name)
		assert.NotNil(t, f, "lookup(%q): want a non-nil %T", name, want[name])
		assert.IsType(t, want[name], f, "lookup(%q)", name)
	}
	for _, name := range []string{"", "ompt_get_thread_id", "ompt_set_trace_ompt", "OMPT_SET_CALLBACK", "ompt_set_callback "} {
		assert.Nil(t, r.lookup(name), "host lookup(%q)", name)
	}
	h, dl, ok := GetDeviceInfo(0)
	require.True(t, ok, "GetDeviceInfo(0) = %v %v", h, ok)
	require.Equal(t, 0, h.Num(), "GetDeviceInfo(0)'s handle")
	require.Equal(t, "fake", h.Type(), "GetDeviceInfo(0)'s handle")
	wantDev := map[string]any{
		"ompt_get_device_num_procs": ompt.GetDeviceNumProcsFunc(nil), "ompt_get_device_time": ompt.GetDeviceTimeFunc(nil),
		"ompt_translate_time": ompt.TranslateTimeFunc(nil), "ompt_set_trace_ompt": ompt.SetTraceOMPTFunc(nil),
		"ompt_set_trace_native": ompt.SetTraceNativeFunc(nil), "ompt_start_trace": ompt.StartTraceFunc(nil),
		"ompt_pause_trace": ompt.PauseTraceFunc(nil), "ompt_flush_trace": ompt.FlushTraceFunc(nil),
		"ompt_stop_trace": ompt.StopTraceFunc(nil), "ompt_advance_buffer_cursor": ompt.AdvanceBufferCursorFunc(nil),
		"ompt_get_record_type": ompt.GetRecordTypeFunc(nil), "ompt_get_record_ompt": ompt.GetRecordOMPTFunc(nil),
		"ompt_get_record_native": ompt.GetRecordNativeFunc(nil), "ompt_get_record_abstract": ompt.GetRecordAbstractFunc(nil),
	}
	for _, name := range ompt.DeviceEntryNames {
		f := dl(name)
		assert.NotNil(t, f, "device lookup(%q): want a non-nil %T", name, wantDev[name])
		assert.IsType(t, wantDev[name], f, "device lookup(%q)", name)
	}
	assert.Len(t, ompt.DeviceEntryNames, 14, "device entry names")
	assert.Nil(t, dl("ompt_set_callback"), "device lookup resolves a host name")
	assert.Nil(t, dl("nope"), "device lookup resolves an unknown name")
	_, _, ok = GetDeviceInfo(1)
	assert.False(t, ok, "GetDeviceInfo of a device never initialized answered ok")
}

func TestSetCallbackResults(t *testing.T) {
	r := &recorder{}
	withTool(t, r, 1)
	set := r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)
	get := r.lookup("ompt_get_callback").(ompt.GetCallbackFunc)
	// during initialize the recorder registered the device events; now
	// (active, after initialize) registrations still work.
	always := map[ompt.Callback]any{
		// OpenMP 5.2's mandatory host events: ompt_set_always only
		ompt.CallbackThreadBegin:   func(int, *ompt.Data) {},
		ompt.CallbackThreadEnd:     func(*ompt.Data) {},
		ompt.CallbackParallelBegin: func(*ompt.Data, *ompt.Frame, *ompt.Data, uint32, int, uintptr) {},
		ompt.CallbackParallelEnd:   func(*ompt.Data, *ompt.Data, int, uintptr) {},
		ompt.CallbackTaskCreate:    func(*ompt.Data, *ompt.Frame, *ompt.Data, int, bool, uintptr) {},
		ompt.CallbackTaskSchedule:  func(*ompt.Data, int, *ompt.Data) {},
		ompt.CallbackImplicitTask:  func(ompt.Endpoint, *ompt.Data, *ompt.Data, uint32, uint32, int) {},
		ompt.CallbackTarget:        func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64, uintptr) {},
		ompt.CallbackTargetEMI:     ompt.TargetEMICallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, *ompt.Data, *ompt.Data, uintptr) {}),
		ompt.CallbackTargetDataOp:  func(uint64, uint64, ompt.DataOpKind, uintptr, int, uintptr, int, uint64, uintptr) {},
		ompt.CallbackTargetDataOpEMI: func(ompt.Endpoint, *ompt.Data, *ompt.Data, *uint64, ompt.DataOpKind, uintptr, int, uintptr, int, uint64, uintptr) {
		},
		ompt.CallbackTargetSubmit:     func(uint64, uint64, uint32) {},
		ompt.CallbackTargetSubmitEMI:  func(ompt.Endpoint, *ompt.Data, *uint64, uint32) {},
		ompt.CallbackTargetMap:        func(uint64, []uintptr, []uintptr, []uint64, []uint32, uintptr) {},
		ompt.CallbackTargetMapEMI:     func(*ompt.Data, []uintptr, []uintptr, []uint64, []uint32, uintptr) {},
		ompt.CallbackDeviceInitialize: func(int, string, *ompt.DeviceHandle, ompt.LookupFunc, string) {},
		ompt.CallbackDeviceFinalize:   func(int) {},
		ompt.CallbackDeviceLoad:       func(int, string, int64, uintptr, uint64, uintptr, uintptr, uint64) {},
		ompt.CallbackDeviceUnload:     func(int, uint64) {},
		ompt.CallbackDependences:      func(*ompt.Data, []ompt.Dependence) {},
	}
	for ev, f := range always {
		assert.Equal(t, ompt.SetAlways, set(ev, f), "set_callback(%v)", ev)
		g, ok := get(ev)
		assert.True(t, ok, "get_callback(%v) = %T %v", ev, g, ok)
		assert.Equal(t, omptlink.CallbackType(int32(ev)), reflect.TypeOf(g), "get_callback(%v)'s type", ev)
	}
	for ev := ompt.CallbackThreadBegin; ev <= ompt.CallbackError; ev++ {
		if _, ok := always[ev]; ok {
			continue
		}
		assert.Equal(t, ompt.SetNever, set(ev, func() {}), "set_callback(%v): gompt never dispatches host events", ev)
		_, ok := get(ev)
		assert.False(t, ok, "get_callback(%v) reports a callback for a never-dispatched event", ev)
	}
	for _, ev := range []ompt.Callback{0, -1, 38, 1000} {
		assert.Equal(t, ompt.SetError, set(ev, func() {}), "set_callback(unknown %d)", ev)
		_, ok := get(ev)
		assert.False(t, ok, "get_callback(unknown %d) ok", ev)
	}
	// wrong types: error, nothing registered, no panic later.
	before, _ := get(ompt.CallbackTarget)
	for _, wrong := range []any{
		func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64) {}, // one argument short
		ompt.TargetEMICallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, *ompt.Data, *ompt.Data, uintptr) {}),
		42, "ompt_callback_target", &struct{}{},
	} {
		assert.Equal(t, ompt.SetError, set(ompt.CallbackTarget, wrong), "set_callback(target, %T)", wrong)
	}
	after, _ := get(ompt.CallbackTarget)
	assert.Equal(t, reflect.ValueOf(before).Pointer(), reflect.ValueOf(after).Pointer(), "a rejected registration replaced the callback")
	region(ompt.KindTarget, 0, 1) // must not panic
	// nil unregisters, typed or untyped
	assert.Equal(t, ompt.SetAlways, set(ompt.CallbackTarget, nil), "unregister")
	assert.Equal(t, ompt.SetAlways, set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(nil)), "unregister with typed nil")
	_, ok := get(ompt.CallbackTarget)
	assert.False(t, ok, "callback still registered after set_callback(nil)")
	r.mu.Lock()
	n := len(r.events)
	r.mu.Unlock()
	DeviceInitialize(1, "fake", &clockDevice{rate: 1})
	assert.Len(t, r.got(), n, "unregistered device_initialize was dispatched")
	Finalize()
	assert.Equal(t, ompt.SetError, set(ompt.CallbackTarget, func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64, uintptr) {}), "set_callback after finalize")
}

func TestEntryPointValues(t *testing.T) {
	r := &recorder{}
	withTool(t, r, 2)
	l := r.lookup
	// the per-thread answers are the calling OS thread's: hold it, and
	// make it an OpenMP thread with a first event
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	region(ompt.KindTargetEnterData, 0, 0)
	enum := l("ompt_enumerate_states").(ompt.EnumerateStatesFunc)
	var names []string
	for s, name, ok := enum(ompt.StateUndefined); ok; s, name, ok = enum(s) {
		names = append(names, name)
	}
	assert.Equal(t, []string{"ompt_state_work_serial", "ompt_state_wait_target", "ompt_state_wait_target_map", "ompt_state_wait_target_update"}, names, "states")
	s, name, ok := enum(ompt.StateWaitTargetUpdate)
	assert.Equal(t, []any{0, "", false}, []any{s, name, ok}, "enumerate_states after the last state")
	_, _, ok = l("ompt_enumerate_mutex_impls").(ompt.EnumerateMutexImplsFunc)(0)
	assert.False(t, ok, "gompt has no mutex implementations to enumerate")
	td := l("ompt_get_thread_data").(ompt.GetThreadDataFunc)
	assert.NotNil(t, td(), "thread data must be a slot")
	assert.Same(t, td(), td(), "thread data must be one stable slot")
	// places: gompt has none
	assert.Zero(t, l("ompt_get_num_places").(ompt.GetNumPlacesFunc)(), "get_num_places")
	assert.Equal(t, -1, l("ompt_get_place_num").(ompt.GetPlaceNumFunc)(), "get_place_num")
	assert.Zero(t, l("ompt_get_place_proc_ids").(ompt.GetPlaceProcIDsFunc)(0, make([]int, 4)), "get_place_proc_ids")
	assert.Zero(t, l("ompt_get_partition_place_nums").(ompt.GetPartitionPlaceNumsFunc)(make([]int, 4)), "get_partition_place_nums")
	p := l("ompt_get_proc_id").(ompt.GetProcIDFunc)()
	assert.GreaterOrEqual(t, p, -1, "proc id")
	assert.Less(t, p, runtime.NumCPU(), "proc id")
	assert.Equal(t, 2, l("ompt_get_num_devices").(ompt.GetNumDevicesFunc)(), "num devices")
	assert.Equal(t, runtime.NumCPU(), l("ompt_get_num_procs").(ompt.GetNumProcsFunc)(), "num procs")
	st, w := l("ompt_get_state").(ompt.GetStateFunc)()
	assert.Equal(t, ompt.StateWorkSerial, st, "state outside constructs")
	assert.Zero(t, w, "wait id outside constructs")
	pd, size, res := l("ompt_get_parallel_info").(ompt.GetParallelInfoFunc)(0)
	assert.Equal(t, 2, res, "parallel info level 0: result")
	assert.Equal(t, 1, size, "parallel info level 0: team size")
	assert.NotNil(t, pd, "parallel info level 0: parallel data")
	pd1, size1, res := l("ompt_get_parallel_info").(ompt.GetParallelInfoFunc)(1)
	assert.Zero(t, res, "parallel info level 1 must be 0")
	assert.Nil(t, pd1, "parallel info level 1: parallel data")
	assert.Zero(t, size1, "parallel info level 1: team size")
	flags, task, frame, par, thr, res := l("ompt_get_task_info").(ompt.GetTaskInfoFunc)(0)
	assert.Equal(t, 2, res, "task info level 0: result")
	assert.Equal(t, ompt.TaskInitial, flags, "task info level 0: flags")
	assert.NotNil(t, task, "task info level 0: task data")
	assert.NotNil(t, frame, "task info level 0: frame")
	assert.Same(t, pd, par, "task info level 0: parallel data against parallel info's")
	assert.Zero(t, thr, "task info level 0: thread num")
	flags1, task1, frame1, par1, thr1, res := l("ompt_get_task_info").(ompt.GetTaskInfoFunc)(1)
	assert.Zero(t, res, "task info level 1 must be 0")
	assert.Zero(t, flags1, "task info level 1: flags")
	assert.Nil(t, task1, "task info level 1: task data")
	assert.Nil(t, frame1, "task info level 1: frame")
	assert.Nil(t, par1, "task info level 1: parallel data")
	assert.Zero(t, thr1, "task info level 1: thread num")
	addr, msize, res := l("ompt_get_task_memory").(ompt.GetTaskMemoryFunc)(0)
	assert.Zero(t, res, "task memory: none")
	assert.Zero(t, addr, "task memory: address of none")
	assert.Zero(t, msize, "task memory: size of none")
	dev, tid, hop, ok := l("ompt_get_target_info").(ompt.GetTargetInfoFunc)()
	assert.False(t, ok, "target info outside constructs")
	assert.Equal(t, [3]uint64{0, 0, 0}, [3]uint64{uint64(dev), tid, hop}, "target info outside constructs: device, target id, host_op_id are zero values")
	uid := l("ompt_get_unique_id").(ompt.GetUniqueIDFunc)
	a, b := uid(), uid()
	assert.NotZero(t, a, "unique id")
	assert.NotEqual(t, a, b, "two unique ids")
	// the task data passed to target callbacks is the task_info slot
	var seen *ompt.Data
	l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, _ ompt.Endpoint, _ int, d *ompt.Data, _ uint64, _ uintptr) { seen = d }))
	region(ompt.KindTarget, 0, 1)
	assert.Same(t, task, seen, "target task_data is not the encountering (initial) task's slot")
}
