//go:build cgo

// cabi.c: the C side of target/internal/cabi. Calling a tool's ompt_start_tool (the
// library is opened with internal/dl), the C entry points a C
// tool looks up (each calls into Go through an exported function), and the
// trampolines through which Go calls the tool's callbacks.

#include <stdlib.h>
#include <string.h>

#include "cabi.h"
#include "_cgo_export.h"

// ---- loading ----------------------------------------------------------

// A weak reference to ompt_start_tool: the linker resolves it to a
// definition linked into the program (a C file of a cgo package), which
// dlsym(RTLD_DEFAULT) finds only if the program exports its symbols
// (-rdynamic); NULL when the program defines none. gompt defines no
// ompt_start_tool itself.
extern ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) __attribute__((weak));

void *gompt_cabi_linked_start(void) { return (void *)ompt_start_tool; }

ompt_start_tool_result_t *gompt_cabi_call_start(void *fn, unsigned int omp_version, const char *runtime_version) {
	return ((ompt_start_tool_t)fn)(omp_version, runtime_version);
}

int gompt_cabi_call_initialize(ompt_start_tool_result_t *r, int initial_device_num) {
	return r->initialize(gompt_cabi_lookup, initial_device_num, &r->tool_data);
}

void gompt_cabi_call_finalize(ompt_start_tool_result_t *r) {
	if (r->finalize != NULL) {
		r->finalize(&r->tool_data);
	}
}

// ---- entry points (Table 4.1) ------------------------------------------

static int e_enumerate_states(int cur, int *next, const char **name) {
	struct gomptEnumerateStates_return r = gomptEnumerateStates(cur);
	if (r.r0 && next != NULL) *next = r.r1;
	if (r.r0 && name != NULL) *name = r.r2;
	return r.r0;
}

static int e_enumerate_mutex_impls(int cur, int *next, const char **name) {
	struct gomptEnumerateMutexImpls_return r = gomptEnumerateMutexImpls(cur);
	if (r.r0 && next != NULL) *next = r.r1;
	if (r.r0 && name != NULL) *name = r.r2;
	return r.r0;
}

static ompt_set_result_t e_set_callback(ompt_callbacks_t event, ompt_callback_t cb) {
	return gomptSetCallback(event, (uintptr_t)cb);
}

static int e_get_callback(ompt_callbacks_t event, ompt_callback_t *cb) {
	uintptr_t p = gomptGetCallback(event);
	if (p == 0) return 0;
	if (cb != NULL) *cb = (ompt_callback_t)p;
	return 1;
}

static ompt_data_t *e_get_thread_data(void) { return gomptGetThreadData(); }
static int e_get_num_places(void) { return gomptGetNumPlaces(); }

static int e_get_place_proc_ids(int place_num, int ids_size, int *ids) {
	if (ids_size < 0 || (ids_size > 0 && ids == NULL)) ids_size = 0;
	return gomptGetPlaceProcIDs(place_num, ids_size, ids);
}

static int e_get_place_num(void) { return gomptGetPlaceNum(); }

static int e_get_partition_place_nums(int size, int *nums) {
	if (size < 0 || (size > 0 && nums == NULL)) size = 0;
	return gomptGetPartitionPlaceNums(size, nums);
}

static int e_get_proc_id(void) { return gomptGetProcID(); }

static int e_get_state(ompt_wait_id_t *wait_id) {
	struct gomptGetState_return r = gomptGetState();
	if (wait_id != NULL) *wait_id = r.r1;
	return r.r0;
}

static int e_get_parallel_info(int level, ompt_data_t **parallel_data, int *team_size) {
	struct gomptGetParallelInfo_return r = gomptGetParallelInfo(level);
	if (r.r0 != 0) {
		if (parallel_data != NULL) *parallel_data = r.r1;
		if (team_size != NULL) *team_size = r.r2;
	}
	return r.r0;
}

static int e_get_task_info(int level, int *flags, ompt_data_t **task_data, ompt_frame_t **task_frame, ompt_data_t **parallel_data, int *thread_num) {
	struct gomptGetTaskInfo_return r = gomptGetTaskInfo(level);
	if (r.r0 != 0) {
		if (flags != NULL) *flags = r.r1;
		if (task_data != NULL) *task_data = r.r2;
		if (task_frame != NULL) *task_frame = r.r3;
		if (parallel_data != NULL) *parallel_data = r.r4;
		if (thread_num != NULL) *thread_num = r.r5;
	}
	return r.r0;
}

static int e_get_task_memory(void **addr, size_t *size, int block) {
	struct gomptGetTaskMemory_return r = gomptGetTaskMemory(block);
	if (r.r0 != 0) {
		if (addr != NULL) *addr = (void *)r.r1;
		if (size != NULL) *size = r.r2;
	}
	return r.r0;
}

static int e_get_num_devices(void) { return gomptGetNumDevices(); }
static int e_get_num_procs(void) { return gomptGetNumProcs(); }

static int e_get_target_info(uint64_t *device_num, ompt_id_t *target_id, ompt_id_t *host_op_id) {
	struct gomptGetTargetInfo_return r = gomptGetTargetInfo();
	if (r.r0 != 0) {
		if (device_num != NULL) *device_num = r.r1;
		if (target_id != NULL) *target_id = r.r2;
		if (host_op_id != NULL) *host_op_id = r.r3;
	}
	return r.r0;
}

static uint64_t e_get_unique_id(void) { return gomptGetUniqueID(); }
static void e_finalize_tool(void) { gomptFinalizeTool(); }

// ---- device entry points ---------------------------------------------

static int e_get_device_num_procs(ompt_device_t *device) {
	return gomptGetDeviceNumProcs((uintptr_t)device);
}

static ompt_device_time_t e_get_device_time(ompt_device_t *device) {
	return gomptGetDeviceTime((uintptr_t)device);
}

static double e_translate_time(ompt_device_t *device, ompt_device_time_t time) {
	return gomptTranslateTime((uintptr_t)device, time);
}

// ---- tracing entry points (trace.go) -----------------------------------
//
// Buffers are the tool's C memory; Go sees each as a []byte over it
// (unsafe.Slice), remembered from buffer_request to the owned
// buffer_complete, so the getters that receive only a pointer know its
// length and answer invalid/NULL for a pointer that is not such a buffer.

static ompt_set_result_t e_set_trace_ompt(ompt_device_t *device, unsigned int enable, unsigned int etype) {
	return gomptSetTraceOMPT((uintptr_t)device, enable, etype);
}

static ompt_set_result_t e_set_trace_native(ompt_device_t *device, int enable, int flags) {
	return gomptSetTraceNative((uintptr_t)device, enable, flags);
}

static int e_start_trace(ompt_device_t *device, ompt_callback_buffer_request_t request, ompt_callback_buffer_complete_t complete) {
	return gomptStartTrace((uintptr_t)device, (uintptr_t)request, (uintptr_t)complete);
}

static int e_pause_trace(ompt_device_t *device, int begin_pause) {
	return gomptPauseTrace((uintptr_t)device, begin_pause);
}

static int e_flush_trace(ompt_device_t *device) { return gomptFlushTrace((uintptr_t)device); }
static int e_stop_trace(ompt_device_t *device) { return gomptStopTrace((uintptr_t)device); }

static int e_advance_buffer_cursor(ompt_device_t *device, ompt_buffer_t *buffer, size_t size, ompt_buffer_cursor_t current, ompt_buffer_cursor_t *next) {
	struct gomptAdvanceBufferCursor_return r = gomptAdvanceBufferCursor((uintptr_t)device, buffer, size, current);
	if (r.r0 && next != NULL) *next = r.r1;
	return r.r0;
}

static ompt_record_t e_get_record_type(ompt_buffer_t *buffer, ompt_buffer_cursor_t current) {
	return gomptGetRecordType(buffer, current);
}

static ompt_record_ompt_t *e_get_record_ompt(ompt_buffer_t *buffer, ompt_buffer_cursor_t current) {
	return gomptGetRecordOMPT(buffer, current);
}

static void *e_get_record_native(ompt_buffer_t *buffer, ompt_buffer_cursor_t current, ompt_id_t *host_op_id) {
	struct gomptGetRecordNative_return r = gomptGetRecordNative(buffer, current);
	if (r.r0 != NULL && host_op_id != NULL) *host_op_id = r.r1;
	return r.r0;
}

static ompt_record_abstract_t *e_get_record_abstract(void *native_record) {
	return gomptGetRecordAbstract(native_record);
}

// OpenMP 6.0's ompt_get_buffer_limits (omp-tools.h of LLVM 19 has no
// typedef for it; this is 6.0's signature): 1 and both limits for a device
// that traces, 0 and nothing written otherwise.
static int e_get_buffer_limits(ompt_device_t *device, int *max_concurrent_allocs, size_t *recommended_bytes) {
	struct gomptGetBufferLimits_return r = gomptGetBufferLimits((uintptr_t)device);
	if (r.r0) {
		if (max_concurrent_allocs != NULL) *max_concurrent_allocs = r.r1;
		if (recommended_bytes != NULL) *recommended_bytes = r.r2;
	}
	return r.r0;
}

// gompt_cabi_entries: the order of entryNames in entry.go.
const ompt_interface_fn_t gompt_cabi_entries[] = {
	(ompt_interface_fn_t)e_enumerate_states,
	(ompt_interface_fn_t)e_enumerate_mutex_impls,
	(ompt_interface_fn_t)e_set_callback,
	(ompt_interface_fn_t)e_get_callback,
	(ompt_interface_fn_t)e_get_thread_data,
	(ompt_interface_fn_t)e_get_num_places,
	(ompt_interface_fn_t)e_get_place_proc_ids,
	(ompt_interface_fn_t)e_get_place_num,
	(ompt_interface_fn_t)e_get_partition_place_nums,
	(ompt_interface_fn_t)e_get_proc_id,
	(ompt_interface_fn_t)e_get_state,
	(ompt_interface_fn_t)e_get_parallel_info,
	(ompt_interface_fn_t)e_get_task_info,
	(ompt_interface_fn_t)e_get_task_memory,
	(ompt_interface_fn_t)e_get_num_devices,
	(ompt_interface_fn_t)e_get_num_procs,
	(ompt_interface_fn_t)e_get_target_info,
	(ompt_interface_fn_t)e_get_unique_id,
	(ompt_interface_fn_t)e_finalize_tool,
	(ompt_interface_fn_t)e_get_device_num_procs,
	(ompt_interface_fn_t)e_get_device_time,
	(ompt_interface_fn_t)e_translate_time,
	(ompt_interface_fn_t)e_set_trace_ompt,
	(ompt_interface_fn_t)e_set_trace_native,
	(ompt_interface_fn_t)e_start_trace,
	(ompt_interface_fn_t)e_pause_trace,
	(ompt_interface_fn_t)e_flush_trace,
	(ompt_interface_fn_t)e_stop_trace,
	(ompt_interface_fn_t)e_advance_buffer_cursor,
	(ompt_interface_fn_t)e_get_record_type,
	(ompt_interface_fn_t)e_get_record_ompt,
	(ompt_interface_fn_t)e_get_record_native,
	(ompt_interface_fn_t)e_get_record_abstract,
	(ompt_interface_fn_t)e_get_buffer_limits,
};
const int gompt_cabi_nentries = sizeof gompt_cabi_entries / sizeof gompt_cabi_entries[0];

// The lookups ask Go whether the tool's Go lookup resolves the name, and
// answer with the C entry point of the same index.
ompt_interface_fn_t gompt_cabi_lookup(const char *name) {
	if (name == NULL) return NULL;
	int i = gomptLookupIndex((char *)name, 0);
	return i >= 0 && i < gompt_cabi_nentries ? gompt_cabi_entries[i] : NULL;
}

ompt_interface_fn_t gompt_cabi_device_lookup(const char *name) {
	if (name == NULL) return NULL;
	int i = gomptLookupIndex((char *)name, 1);
	return i >= 0 && i < gompt_cabi_nentries ? gompt_cabi_entries[i] : NULL;
}

// ---- trampolines -------------------------------------------------------

void gompt_cabi_call_device_initialize(uintptr_t fn, int device_num, const char *type, ompt_device_t *device, const char *doc) {
	((ompt_callback_device_initialize_t)fn)(device_num, type, device, gompt_cabi_device_lookup, doc);
}

void gompt_cabi_call_device_finalize(uintptr_t fn, int device_num) {
	((ompt_callback_device_finalize_t)fn)(device_num);
}

void gompt_cabi_call_device_load(uintptr_t fn, int device_num, const char *filename, int64_t offset_in_file, uintptr_t vma_in_file, size_t bytes, uintptr_t host_addr, uintptr_t device_addr, uint64_t module_id) {
	((ompt_callback_device_load_t)fn)(device_num, filename, offset_in_file, (void *)vma_in_file, bytes, (void *)host_addr, (void *)device_addr, module_id);
}

void gompt_cabi_call_device_unload(uintptr_t fn, int device_num, uint64_t module_id) {
	((ompt_callback_device_unload_t)fn)(device_num, module_id);
}

void gompt_cabi_call_target(uintptr_t fn, int kind, int endpoint, int device_num, uintptr_t task_data, ompt_id_t target_id, uintptr_t code) {
	((ompt_callback_target_t)fn)(kind, endpoint, device_num, (ompt_data_t *)task_data, target_id, (const void *)code);
}

void gompt_cabi_call_target_emi(uintptr_t fn, int kind, int endpoint, int device_num, uintptr_t task_data, uintptr_t target_task_data, uintptr_t target_data, uintptr_t code) {
	((ompt_callback_target_emi_t)fn)(kind, endpoint, device_num, (ompt_data_t *)task_data, (ompt_data_t *)target_task_data, (ompt_data_t *)target_data, (const void *)code);
}

void gompt_cabi_call_target_data_op(uintptr_t fn, ompt_id_t target_id, ompt_id_t host_op_id, int optype, uintptr_t src, int src_dev, uintptr_t dest, int dest_dev, size_t bytes, uintptr_t code) {
	((ompt_callback_target_data_op_t)fn)(target_id, host_op_id, optype, (void *)src, src_dev, (void *)dest, dest_dev, bytes, (const void *)code);
}

void gompt_cabi_call_target_data_op_emi(uintptr_t fn, int endpoint, uintptr_t target_task_data, uintptr_t target_data, uintptr_t host_op_id, int optype, uintptr_t src, int src_dev, uintptr_t dest, int dest_dev, size_t bytes, uintptr_t code) {
	((ompt_callback_target_data_op_emi_t)fn)(endpoint, (ompt_data_t *)target_task_data, (ompt_data_t *)target_data, (ompt_id_t *)host_op_id, optype, (void *)src, src_dev, (void *)dest, dest_dev, bytes, (const void *)code);
}

void gompt_cabi_call_target_submit(uintptr_t fn, ompt_id_t target_id, ompt_id_t host_op_id, unsigned int teams) {
	((ompt_callback_target_submit_t)fn)(target_id, host_op_id, teams);
}

void gompt_cabi_call_target_submit_emi(uintptr_t fn, int endpoint, uintptr_t target_data, uintptr_t host_op_id, unsigned int teams) {
	((ompt_callback_target_submit_emi_t)fn)(endpoint, (ompt_data_t *)target_data, (ompt_id_t *)host_op_id, teams);
}

void gompt_cabi_call_target_map(uintptr_t fn, ompt_id_t target_id, unsigned int nitems, uintptr_t *host_addr, uintptr_t *device_addr, uint64_t *bytes, uint32_t *flags, uintptr_t code) {
	((ompt_callback_target_map_t)fn)(target_id, nitems, (void **)host_addr, (void **)device_addr, (size_t *)bytes, (unsigned int *)flags, (const void *)code);
}

void gompt_cabi_call_target_map_emi(uintptr_t fn, ompt_data_t *target_data, unsigned int nitems, uintptr_t *host_addr, uintptr_t *device_addr, uint64_t *bytes, uint32_t *flags, uintptr_t code) {
	((ompt_callback_target_map_emi_t)fn)(target_data, nitems, (void **)host_addr, (void **)device_addr, (size_t *)bytes, (unsigned int *)flags, (const void *)code);
}

void gompt_cabi_call_dependences(uintptr_t fn, uintptr_t task_data, ompt_dependence_t *deps, int ndeps) {
	((ompt_callback_dependences_t)fn)((ompt_data_t *)task_data, deps, ndeps);
}

// gompt_cabi_call_buffer_request calls the tool's buffer_request and
// returns the buffer (NULL: none), its size in *bytes.
void *gompt_cabi_call_buffer_request(uintptr_t fn, int device_num, size_t *bytes) {
	ompt_buffer_t *buffer = NULL;
	*bytes = 0;
	((ompt_callback_buffer_request_t)fn)(device_num, &buffer, bytes);
	if (buffer == NULL) *bytes = 0;
	return buffer;
}

void gompt_cabi_call_buffer_complete(uintptr_t fn, int device_num, void *buffer, size_t bytes, ompt_buffer_cursor_t begin, int owned) {
	((ompt_callback_buffer_complete_t)fn)(device_num, buffer, bytes, begin, owned);
}

// ---- host events: threads and tasks ------------------------------------

void gompt_cabi_call_thread_begin(uintptr_t fn, int type, uintptr_t thread_data) {
	((ompt_callback_thread_begin_t)fn)((ompt_thread_t)type, (ompt_data_t *)thread_data);
}

void gompt_cabi_call_thread_end(uintptr_t fn, uintptr_t thread_data) {
	((ompt_callback_thread_end_t)fn)((ompt_data_t *)thread_data);
}

void gompt_cabi_call_implicit_task(uintptr_t fn, int endpoint, uintptr_t parallel_data, uintptr_t task_data, unsigned int actual_parallelism, unsigned int index, int flags) {
	((ompt_callback_implicit_task_t)fn)((ompt_scope_endpoint_t)endpoint, (ompt_data_t *)parallel_data, (ompt_data_t *)task_data, actual_parallelism, index, flags);
}

void gompt_cabi_call_task_create(uintptr_t fn, uintptr_t encountering_task_data, uintptr_t encountering_frame, uintptr_t new_task_data, int flags, int has_dependences, uintptr_t code) {
	((ompt_callback_task_create_t)fn)((ompt_data_t *)encountering_task_data, (const ompt_frame_t *)encountering_frame, (ompt_data_t *)new_task_data, flags, has_dependences, (const void *)code);
}

void gompt_cabi_call_task_schedule(uintptr_t fn, uintptr_t prior_task_data, int prior_task_status, uintptr_t next_task_data) {
	((ompt_callback_task_schedule_t)fn)((ompt_data_t *)prior_task_data, (ompt_task_status_t)prior_task_status, (ompt_data_t *)next_task_data);
}
