package omptrt

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/gompt/gompt/internal/omptrt/link"
	"github.com/gompt/gompt/ompt"
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
	if len(want) != len(ompt.HostEntryNames) || len(ompt.HostEntryNames) != 19 {
		t.Fatalf("HostEntryNames has %d names, Table 4.1 has 19", len(ompt.HostEntryNames))
	}
	for _, name := range ompt.HostEntryNames {
		f := r.lookup(name)
		if f == nil || reflect.ValueOf(f).IsNil() || reflect.TypeOf(f) != reflect.TypeOf(want[name]) {
			t.Errorf("lookup(%q) = %T, want a non-nil %T", name, f, want[name])
		}
	}
	for _, name := range []string{"", "ompt_get_thread_id", "ompt_set_trace_ompt", "OMPT_SET_CALLBACK", "ompt_set_callback "} {
		if f := r.lookup(name); f != nil {
			t.Errorf("host lookup(%q) = %T, want nil", name, f)
		}
	}
	h, dl, ok := GetDeviceInfo(0)
	if !ok || h.Num() != 0 || h.Type() != "fake" {
		t.Fatalf("GetDeviceInfo(0) = %v %v", h, ok)
	}
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
		if f == nil || reflect.ValueOf(f).IsNil() || reflect.TypeOf(f) != reflect.TypeOf(wantDev[name]) {
			t.Errorf("device lookup(%q) = %T, want a non-nil %T", name, f, wantDev[name])
		}
	}
	if len(ompt.DeviceEntryNames) != 14 || dl("ompt_set_callback") != nil || dl("nope") != nil {
		t.Error("device lookup resolves names it should not")
	}
	if _, _, ok := GetDeviceInfo(1); ok {
		t.Error("GetDeviceInfo of a device never initialized answered ok")
	}
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
		if res := set(ev, f); res != ompt.SetAlways {
			t.Errorf("set_callback(%v) = %v, want ompt_set_always", ev, res)
		}
		g, ok := get(ev)
		if !ok || reflect.TypeOf(g) != link.CallbackType(int32(ev)) {
			t.Errorf("get_callback(%v) = %T %v", ev, g, ok)
		}
	}
	for ev := ompt.CallbackThreadBegin; ev <= ompt.CallbackError; ev++ {
		if _, ok := always[ev]; ok {
			continue
		}
		if res := set(ev, func() {}); res != ompt.SetNever {
			t.Errorf("set_callback(%v) = %v, want ompt_set_never (gompt never dispatches host events)", ev, res)
		}
		if _, ok := get(ev); ok {
			t.Errorf("get_callback(%v) reports a callback for a never-dispatched event", ev)
		}
	}
	for _, ev := range []ompt.Callback{0, -1, 38, 1000} {
		if res := set(ev, func() {}); res != ompt.SetError {
			t.Errorf("set_callback(unknown %d) = %v, want ompt_set_error", ev, res)
		}
		if _, ok := get(ev); ok {
			t.Errorf("get_callback(unknown %d) ok", ev)
		}
	}
	// wrong types: error, nothing registered, no panic later.
	before, _ := get(ompt.CallbackTarget)
	for _, wrong := range []any{
		func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64) {}, // one argument short
		ompt.TargetEMICallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, *ompt.Data, *ompt.Data, uintptr) {}),
		42, "ompt_callback_target", &struct{}{},
	} {
		if res := set(ompt.CallbackTarget, wrong); res != ompt.SetError {
			t.Errorf("set_callback(target, %T) = %v, want ompt_set_error", wrong, res)
		}
	}
	if after, _ := get(ompt.CallbackTarget); reflect.ValueOf(after).Pointer() != reflect.ValueOf(before).Pointer() {
		t.Error("a rejected registration replaced the callback")
	}
	region(ompt.KindTarget, 0, 1) // must not panic
	// nil unregisters, typed or untyped
	if res := set(ompt.CallbackTarget, nil); res != ompt.SetAlways {
		t.Errorf("unregister: %v", res)
	}
	if res := set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(nil)); res != ompt.SetAlways {
		t.Errorf("unregister with typed nil: %v", res)
	}
	if _, ok := get(ompt.CallbackTarget); ok {
		t.Error("callback still registered after set_callback(nil)")
	}
	r.mu.Lock()
	n := len(r.events)
	r.mu.Unlock()
	DeviceInitialize(1, "fake", &clockDevice{rate: 1})
	if len(r.got()) != n {
		t.Error("unregistered device_initialize was dispatched")
	}
	Finalize()
	if res := set(ompt.CallbackTarget, func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64, uintptr) {}); res != ompt.SetError {
		t.Errorf("set_callback after finalize = %v, want ompt_set_error", res)
	}
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
	if want := []string{"ompt_state_work_serial", "ompt_state_wait_target", "ompt_state_wait_target_map", "ompt_state_wait_target_update"}; !reflect.DeepEqual(names, want) {
		t.Errorf("states %v, want %v", names, want)
	}
	if _, _, ok := l("ompt_enumerate_mutex_impls").(ompt.EnumerateMutexImplsFunc)(0); ok {
		t.Error("gompt has no mutex implementations to enumerate")
	}
	td := l("ompt_get_thread_data").(ompt.GetThreadDataFunc)
	if td() == nil || td() != td() {
		t.Error("thread data must be one stable slot")
	}
	if l("ompt_get_num_places").(ompt.GetNumPlacesFunc)() != 0 || l("ompt_get_place_num").(ompt.GetPlaceNumFunc)() != -1 ||
		l("ompt_get_place_proc_ids").(ompt.GetPlaceProcIDsFunc)(0, make([]int, 4)) != 0 ||
		l("ompt_get_partition_place_nums").(ompt.GetPartitionPlaceNumsFunc)(make([]int, 4)) != 0 {
		t.Error("places: gompt has none")
	}
	if p := l("ompt_get_proc_id").(ompt.GetProcIDFunc)(); p < -1 || p >= runtime.NumCPU() {
		t.Errorf("proc id %d", p)
	}
	if n := l("ompt_get_num_devices").(ompt.GetNumDevicesFunc)(); n != 2 {
		t.Errorf("num devices %d, want 2", n)
	}
	if n := l("ompt_get_num_procs").(ompt.GetNumProcsFunc)(); n != runtime.NumCPU() {
		t.Errorf("num procs %d", n)
	}
	if st, w := l("ompt_get_state").(ompt.GetStateFunc)(); st != ompt.StateWorkSerial || w != 0 {
		t.Errorf("state outside constructs %#x", st)
	}
	pd, size, res := l("ompt_get_parallel_info").(ompt.GetParallelInfoFunc)(0)
	if res != 2 || size != 1 || pd == nil {
		t.Errorf("parallel info level 0: %v %d %d", pd, size, res)
	}
	if _, _, res := l("ompt_get_parallel_info").(ompt.GetParallelInfoFunc)(1); res != 0 {
		t.Error("parallel info level 1 must be 0")
	}
	flags, task, frame, par, thr, res := l("ompt_get_task_info").(ompt.GetTaskInfoFunc)(0)
	if res != 2 || flags != ompt.TaskInitial || task == nil || frame == nil || par != pd || thr != 0 {
		t.Errorf("task info level 0: %x %v %v %v %d %d", flags, task, frame, par, thr, res)
	}
	if _, _, _, _, _, res := l("ompt_get_task_info").(ompt.GetTaskInfoFunc)(1); res != 0 {
		t.Error("task info level 1 must be 0")
	}
	if _, _, res := l("ompt_get_task_memory").(ompt.GetTaskMemoryFunc)(0); res != 0 {
		t.Error("task memory: none")
	}
	uid := l("ompt_get_unique_id").(ompt.GetUniqueIDFunc)
	a, b := uid(), uid()
	if a == 0 || a == b {
		t.Errorf("unique ids %d %d", a, b)
	}
	// the task data passed to target callbacks is the task_info slot
	var seen *ompt.Data
	l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, _ ompt.Endpoint, _ int, d *ompt.Data, _ uint64, _ uintptr) { seen = d }))
	region(ompt.KindTarget, 0, 1)
	if seen != task {
		t.Error("target task_data is not the encountering (initial) task's slot")
	}
}
