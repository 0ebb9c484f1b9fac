package ompt

import (
	"reflect"
	"runtime"
	"testing"
)

func TestLookupNames(t *testing.T) {
	r := &recorder{}
	withTool(t, r, 2)
	want := map[string]any{
		"ompt_enumerate_states": EnumerateStatesFunc(nil), "ompt_enumerate_mutex_impls": EnumerateMutexImplsFunc(nil),
		"ompt_set_callback": SetCallbackFunc(nil), "ompt_get_callback": GetCallbackFunc(nil),
		"ompt_get_thread_data": GetThreadDataFunc(nil), "ompt_get_num_places": GetNumPlacesFunc(nil),
		"ompt_get_place_proc_ids": GetPlaceProcIDsFunc(nil), "ompt_get_place_num": GetPlaceNumFunc(nil),
		"ompt_get_partition_place_nums": GetPartitionPlaceNumsFunc(nil), "ompt_get_proc_id": GetProcIDFunc(nil),
		"ompt_get_state": GetStateFunc(nil), "ompt_get_parallel_info": GetParallelInfoFunc(nil),
		"ompt_get_task_info": GetTaskInfoFunc(nil), "ompt_get_task_memory": GetTaskMemoryFunc(nil),
		"ompt_get_num_devices": GetNumDevicesFunc(nil), "ompt_get_num_procs": GetNumProcsFunc(nil),
		"ompt_get_target_info": GetTargetInfoFunc(nil), "ompt_get_unique_id": GetUniqueIDFunc(nil),
		"ompt_finalize_tool": FinalizeToolFunc(nil),
	}
	if len(want) != len(HostEntryNames) || len(HostEntryNames) != 19 {
		t.Fatalf("HostEntryNames has %d names, Table 4.1 has 19", len(HostEntryNames))
	}
	for _, name := range HostEntryNames {
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
		"ompt_get_device_num_procs": GetDeviceNumProcsFunc(nil), "ompt_get_device_time": GetDeviceTimeFunc(nil),
		"ompt_translate_time": TranslateTimeFunc(nil), "ompt_set_trace_ompt": SetTraceOMPTFunc(nil),
		"ompt_set_trace_native": SetTraceNativeFunc(nil), "ompt_start_trace": StartTraceFunc(nil),
		"ompt_pause_trace": PauseTraceFunc(nil), "ompt_flush_trace": FlushTraceFunc(nil),
		"ompt_stop_trace": StopTraceFunc(nil), "ompt_advance_buffer_cursor": AdvanceBufferCursorFunc(nil),
		"ompt_get_record_type": GetRecordTypeFunc(nil), "ompt_get_record_ompt": GetRecordOMPTFunc(nil),
		"ompt_get_record_native": GetRecordNativeFunc(nil), "ompt_get_record_abstract": GetRecordAbstractFunc(nil),
	}
	for _, name := range DeviceEntryNames {
		f := dl(name)
		if f == nil || reflect.ValueOf(f).IsNil() || reflect.TypeOf(f) != reflect.TypeOf(wantDev[name]) {
			t.Errorf("device lookup(%q) = %T, want a non-nil %T", name, f, wantDev[name])
		}
	}
	if len(DeviceEntryNames) != 14 || dl("ompt_set_callback") != nil || dl("nope") != nil {
		t.Error("device lookup resolves names it should not")
	}
	if _, _, ok := GetDeviceInfo(1); ok {
		t.Error("GetDeviceInfo of a device never initialized answered ok")
	}
}

func TestSetCallbackResults(t *testing.T) {
	r := &recorder{}
	withTool(t, r, 1)
	set := r.lookup("ompt_set_callback").(SetCallbackFunc)
	get := r.lookup("ompt_get_callback").(GetCallbackFunc)
	// during initialize the recorder registered the device events; now
	// (active, after initialize) registrations still work.
	always := map[Callback]any{
		// OpenMP 5.2's mandatory host events: ompt_set_always only
		CallbackThreadBegin:      func(int, *Data) {},
		CallbackThreadEnd:        func(*Data) {},
		CallbackParallelBegin:    func(*Data, *Frame, *Data, uint32, int, uintptr) {},
		CallbackParallelEnd:      func(*Data, *Data, int, uintptr) {},
		CallbackTaskCreate:       func(*Data, *Frame, *Data, int, bool, uintptr) {},
		CallbackTaskSchedule:     func(*Data, int, *Data) {},
		CallbackImplicitTask:     func(Endpoint, *Data, *Data, uint32, uint32, int) {},
		CallbackTarget:           func(TargetKind, Endpoint, int, *Data, uint64, uintptr) {},
		CallbackTargetEMI:        TargetEMICallback(func(TargetKind, Endpoint, int, *Data, *Data, *Data, uintptr) {}),
		CallbackTargetDataOp:     func(uint64, uint64, DataOpKind, uintptr, int, uintptr, int, uint64, uintptr) {},
		CallbackTargetDataOpEMI:  func(Endpoint, *Data, *Data, *uint64, DataOpKind, uintptr, int, uintptr, int, uint64, uintptr) {},
		CallbackTargetSubmit:     func(uint64, uint64, uint32) {},
		CallbackTargetSubmitEMI:  func(Endpoint, *Data, *uint64, uint32) {},
		CallbackTargetMap:        func(uint64, []uintptr, []uintptr, []uint64, []uint32, uintptr) {},
		CallbackTargetMapEMI:     func(*Data, []uintptr, []uintptr, []uint64, []uint32, uintptr) {},
		CallbackDeviceInitialize: func(int, string, *DeviceHandle, LookupFunc, string) {},
		CallbackDeviceFinalize:   func(int) {},
		CallbackDeviceLoad:       func(int, string, int64, uintptr, uint64, uintptr, uintptr, uint64) {},
		CallbackDeviceUnload:     func(int, uint64) {},
		CallbackDependences:      func(*Data, []Dependence) {},
	}
	for ev, f := range always {
		if res := set(ev, f); res != SetAlways {
			t.Errorf("set_callback(%v) = %v, want ompt_set_always", ev, res)
		}
		g, ok := get(ev)
		if !ok || reflect.TypeOf(g) != callbackTypes[ev] {
			t.Errorf("get_callback(%v) = %T %v", ev, g, ok)
		}
	}
	for ev := CallbackThreadBegin; ev <= CallbackError; ev++ {
		if _, ok := always[ev]; ok {
			continue
		}
		if res := set(ev, func() {}); res != SetNever {
			t.Errorf("set_callback(%v) = %v, want ompt_set_never (gompt never dispatches host events)", ev, res)
		}
		if _, ok := get(ev); ok {
			t.Errorf("get_callback(%v) reports a callback for a never-dispatched event", ev)
		}
	}
	for _, ev := range []Callback{0, -1, 38, 1000} {
		if res := set(ev, func() {}); res != SetError {
			t.Errorf("set_callback(unknown %d) = %v, want ompt_set_error", ev, res)
		}
		if _, ok := get(ev); ok {
			t.Errorf("get_callback(unknown %d) ok", ev)
		}
	}
	// wrong types: error, nothing registered, no panic later.
	before, _ := get(CallbackTarget)
	for _, wrong := range []any{
		func(TargetKind, Endpoint, int, *Data, uint64) {}, // one argument short
		TargetEMICallback(func(TargetKind, Endpoint, int, *Data, *Data, *Data, uintptr) {}),
		42, "ompt_callback_target", &struct{}{},
	} {
		if res := set(CallbackTarget, wrong); res != SetError {
			t.Errorf("set_callback(target, %T) = %v, want ompt_set_error", wrong, res)
		}
	}
	if after, _ := get(CallbackTarget); reflect.ValueOf(after).Pointer() != reflect.ValueOf(before).Pointer() {
		t.Error("a rejected registration replaced the callback")
	}
	region(KindTarget, 0, 1) // must not panic
	// nil unregisters, typed or untyped
	if res := set(CallbackTarget, nil); res != SetAlways {
		t.Errorf("unregister: %v", res)
	}
	if res := set(CallbackDeviceInitialize, DeviceInitializeCallback(nil)); res != SetAlways {
		t.Errorf("unregister with typed nil: %v", res)
	}
	if _, ok := get(CallbackTarget); ok {
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
	if res := set(CallbackTarget, func(TargetKind, Endpoint, int, *Data, uint64, uintptr) {}); res != SetError {
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
	region(KindTargetEnterData, 0, 0)
	enum := l("ompt_enumerate_states").(EnumerateStatesFunc)
	var names []string
	for s, name, ok := enum(StateUndefined); ok; s, name, ok = enum(s) {
		names = append(names, name)
	}
	if want := []string{"ompt_state_work_serial", "ompt_state_wait_target", "ompt_state_wait_target_map", "ompt_state_wait_target_update"}; !reflect.DeepEqual(names, want) {
		t.Errorf("states %v, want %v", names, want)
	}
	if _, _, ok := l("ompt_enumerate_mutex_impls").(EnumerateMutexImplsFunc)(0); ok {
		t.Error("gompt has no mutex implementations to enumerate")
	}
	td := l("ompt_get_thread_data").(GetThreadDataFunc)
	if td() == nil || td() != td() {
		t.Error("thread data must be one stable slot")
	}
	if l("ompt_get_num_places").(GetNumPlacesFunc)() != 0 || l("ompt_get_place_num").(GetPlaceNumFunc)() != -1 ||
		l("ompt_get_place_proc_ids").(GetPlaceProcIDsFunc)(0, make([]int, 4)) != 0 ||
		l("ompt_get_partition_place_nums").(GetPartitionPlaceNumsFunc)(make([]int, 4)) != 0 {
		t.Error("places: gompt has none")
	}
	if p := l("ompt_get_proc_id").(GetProcIDFunc)(); p < -1 || p >= runtime.NumCPU() {
		t.Errorf("proc id %d", p)
	}
	if n := l("ompt_get_num_devices").(GetNumDevicesFunc)(); n != 2 {
		t.Errorf("num devices %d, want 2", n)
	}
	if n := l("ompt_get_num_procs").(GetNumProcsFunc)(); n != runtime.NumCPU() {
		t.Errorf("num procs %d", n)
	}
	if st, w := l("ompt_get_state").(GetStateFunc)(); st != StateWorkSerial || w != 0 {
		t.Errorf("state outside constructs %#x", st)
	}
	pd, size, res := l("ompt_get_parallel_info").(GetParallelInfoFunc)(0)
	if res != 2 || size != 1 || pd == nil {
		t.Errorf("parallel info level 0: %v %d %d", pd, size, res)
	}
	if _, _, res := l("ompt_get_parallel_info").(GetParallelInfoFunc)(1); res != 0 {
		t.Error("parallel info level 1 must be 0")
	}
	flags, task, frame, par, thr, res := l("ompt_get_task_info").(GetTaskInfoFunc)(0)
	if res != 2 || flags != TaskInitial || task == nil || frame == nil || par != pd || thr != 0 {
		t.Errorf("task info level 0: %x %v %v %v %d %d", flags, task, frame, par, thr, res)
	}
	if _, _, _, _, _, res := l("ompt_get_task_info").(GetTaskInfoFunc)(1); res != 0 {
		t.Error("task info level 1 must be 0")
	}
	if _, _, res := l("ompt_get_task_memory").(GetTaskMemoryFunc)(0); res != 0 {
		t.Error("task memory: none")
	}
	uid := l("ompt_get_unique_id").(GetUniqueIDFunc)
	a, b := uid(), uid()
	if a == 0 || a == b {
		t.Errorf("unique ids %d %d", a, b)
	}
	// the task data passed to target callbacks is the task_info slot
	var seen *Data
	l("ompt_set_callback").(SetCallbackFunc)(CallbackTarget, TargetCallback(func(_ TargetKind, _ Endpoint, _ int, d *Data, _ uint64, _ uintptr) { seen = d }))
	region(KindTarget, 0, 1)
	if seen != task {
		t.Error("target task_data is not the encountering (initial) task's slot")
	}
}
