// cabi.h: the part of omp-tools.h (OpenMP 5.1/5.2) that target/internal/cabi uses,
// declared here so that the package builds without the header installed.
// Every type below has the name, size and layout of its omp-tools.h
// namesake; abi_test.go compiles asserts generated from this side against
// the real header. Do not include omp-tools.h together with this file.

#ifndef GOMPT_CABI_H
#define GOMPT_CABI_H

#include <stddef.h>
#include <stdint.h>

typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *interface_function_name);
typedef void (*ompt_callback_t)(void);
typedef uint64_t ompt_id_t;
typedef uint64_t ompt_wait_id_t;
typedef uint64_t ompt_device_time_t;
typedef uint64_t ompt_buffer_cursor_t;
typedef uint64_t ompt_hwid_t;
typedef void ompt_device_t;
typedef void ompt_buffer_t;

typedef union ompt_data_t {
	uint64_t value;
	void *ptr;
} ompt_data_t;

typedef struct ompt_frame_t {
	ompt_data_t exit_frame;
	ompt_data_t enter_frame;
	int exit_frame_flags;
	int enter_frame_flags;
} ompt_frame_t;

typedef void (*ompt_finalize_t)(ompt_data_t *tool_data);
typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data);

typedef struct ompt_start_tool_result_t {
	ompt_initialize_t initialize;
	ompt_finalize_t finalize;
	ompt_data_t tool_data;
} ompt_start_tool_result_t;

typedef ompt_start_tool_result_t *(*ompt_start_tool_t)(unsigned int omp_version, const char *runtime_version);

// Enumerations travel as int (their C type on x86-64 and arm64 Linux).
typedef int ompt_callbacks_t;
typedef int ompt_set_result_t;
typedef int ompt_scope_endpoint_t;
typedef int ompt_target_t;
typedef int ompt_target_data_op_t;
typedef int ompt_record_t;
typedef int ompt_record_native_t;
typedef int ompt_dependence_type_t;

typedef struct ompt_dependence_t {
	ompt_data_t variable;
	ompt_dependence_type_t dependence_type;
} ompt_dependence_t;

// Callback types of the events gompt dispatches.
typedef int ompt_thread_t;
typedef int ompt_task_status_t;
typedef void (*ompt_callback_thread_begin_t)(ompt_thread_t thread_type, ompt_data_t *thread_data);
typedef void (*ompt_callback_thread_end_t)(ompt_data_t *thread_data);
typedef void (*ompt_callback_implicit_task_t)(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data, ompt_data_t *task_data, unsigned int actual_parallelism, unsigned int index, int flags);
typedef void (*ompt_callback_task_create_t)(ompt_data_t *encountering_task_data, const ompt_frame_t *encountering_task_frame, ompt_data_t *new_task_data, int flags, int has_dependences, const void *codeptr_ra);
typedef void (*ompt_callback_task_schedule_t)(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status, ompt_data_t *next_task_data);
typedef void (*ompt_callback_device_initialize_t)(int device_num, const char *type, ompt_device_t *device, ompt_function_lookup_t lookup, const char *documentation);
typedef void (*ompt_callback_device_finalize_t)(int device_num);
typedef void (*ompt_callback_device_load_t)(int device_num, const char *filename, int64_t offset_in_file, void *vma_in_file, size_t bytes, void *host_addr, void *device_addr, uint64_t module_id);
typedef void (*ompt_callback_device_unload_t)(int device_num, uint64_t module_id);
typedef void (*ompt_callback_target_t)(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num, ompt_data_t *task_data, ompt_id_t target_id, const void *codeptr_ra);
typedef void (*ompt_callback_target_emi_t)(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num, ompt_data_t *task_data, ompt_data_t *target_task_data, ompt_data_t *target_data, const void *codeptr_ra);
typedef void (*ompt_callback_target_data_op_t)(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t optype, void *src_addr, int src_device_num, void *dest_addr, int dest_device_num, size_t bytes, const void *codeptr_ra);
typedef void (*ompt_callback_target_data_op_emi_t)(ompt_scope_endpoint_t endpoint, ompt_data_t *target_task_data, ompt_data_t *target_data, ompt_id_t *host_op_id, ompt_target_data_op_t optype, void *src_addr, int src_device_num, void *dest_addr, int dest_device_num, size_t bytes, const void *codeptr_ra);
typedef void (*ompt_callback_target_submit_t)(ompt_id_t target_id, ompt_id_t host_op_id, unsigned int requested_num_teams);
typedef void (*ompt_callback_target_submit_emi_t)(ompt_scope_endpoint_t endpoint, ompt_data_t *target_data, ompt_id_t *host_op_id, unsigned int requested_num_teams);
typedef void (*ompt_callback_target_map_t)(ompt_id_t target_id, unsigned int nitems, void **host_addr, void **device_addr, size_t *bytes, unsigned int *mapping_flags, const void *codeptr_ra);
typedef void (*ompt_callback_target_map_emi_t)(ompt_data_t *target_data, unsigned int nitems, void **host_addr, void **device_addr, size_t *bytes, unsigned int *mapping_flags, const void *codeptr_ra);
typedef void (*ompt_callback_dependences_t)(ompt_data_t *task_data, const ompt_dependence_t *deps, int ndeps);

// Trace records (for the tracing entry points; laid out as omp-tools.h).
typedef struct ompt_record_target_t {
	ompt_target_t kind;
	ompt_scope_endpoint_t endpoint;
	int device_num;
	ompt_id_t task_id;
	ompt_id_t target_id;
	const void *codeptr_ra;
} ompt_record_target_t;

typedef struct ompt_record_target_data_op_t {
	ompt_id_t host_op_id;
	ompt_target_data_op_t optype;
	void *src_addr;
	int src_device_num;
	void *dest_addr;
	int dest_device_num;
	size_t bytes;
	ompt_device_time_t end_time;
	const void *codeptr_ra;
} ompt_record_target_data_op_t;

typedef struct ompt_record_target_map_t {
	ompt_id_t target_id;
	unsigned int nitems;
	void **host_addr;
	void **device_addr;
	size_t *bytes;
	unsigned int *mapping_flags;
	const void *codeptr_ra;
} ompt_record_target_map_t;

typedef struct ompt_record_target_kernel_t {
	ompt_id_t host_op_id;
	unsigned int requested_num_teams;
	unsigned int granted_num_teams;
	ompt_device_time_t end_time;
} ompt_record_target_kernel_t;

// ompt_record_ompt_t: the union of omp-tools.h has more members; its size
// is that of its largest, ompt_record_target_data_op_t (72 bytes), which
// the pad member stands for.
typedef struct ompt_record_ompt_t {
	ompt_callbacks_t type;
	ompt_device_time_t time;
	ompt_id_t thread_id;
	ompt_id_t target_id;
	union {
		ompt_record_target_t target;
		ompt_record_target_data_op_t target_data_op;
		ompt_record_target_map_t target_map;
		ompt_record_target_kernel_t target_kernel;
		char pad[72];
	} record;
} ompt_record_ompt_t;

typedef struct ompt_record_abstract_t {
	ompt_record_native_t rclass;
	const char *type;
	ompt_device_time_t start_time;
	ompt_device_time_t end_time;
	ompt_hwid_t hwid;
} ompt_record_abstract_t;

typedef void (*ompt_callback_buffer_request_t)(int device_num, ompt_buffer_t **buffer, size_t *bytes);
typedef void (*ompt_callback_buffer_complete_t)(int device_num, ompt_buffer_t *buffer, size_t bytes, ompt_buffer_cursor_t begin, int buffer_owned);

// gompt's own C-side storage.

// gompt_tool_slots: the C tool's slots of one OpenMP thread (an OS thread
// that entered gompt), which live as long as the process: its
// thread_data, its initial task's task_data, its implicit parallel
// region's parallel_data, the zero task frame.
typedef struct gompt_tool_slots {
	ompt_data_t thread_data;
	ompt_data_t task_data;
	ompt_data_t parallel_data;
	ompt_frame_t frame;
} gompt_tool_slots;

// gompt_scope: the slots of one target construct, for its whole life.
typedef struct gompt_scope {
	ompt_data_t target_data;
	ompt_data_t target_task_data;
	ompt_id_t host_op_id;
} gompt_scope;

// gompt_device: what a C tool gets as ompt_device_t *.
typedef struct gompt_device {
	int num;
	uint64_t magic;
} gompt_device;

// Loading tools (cabi.c).
void *gompt_cabi_linked_start(void);

ompt_start_tool_result_t *gompt_cabi_call_start(void *fn, unsigned int omp_version, const char *runtime_version);
int gompt_cabi_call_initialize(ompt_start_tool_result_t *r, int initial_device_num);
void gompt_cabi_call_finalize(ompt_start_tool_result_t *r);

// The C lookup functions handed to the tool.
ompt_interface_fn_t gompt_cabi_lookup(const char *name);
ompt_interface_fn_t gompt_cabi_device_lookup(const char *name);

// Trampolines: Go calls the tool's callbacks through these.
void gompt_cabi_call_device_initialize(uintptr_t fn, int device_num, const char *type, ompt_device_t *device, const char *doc);
void gompt_cabi_call_device_finalize(uintptr_t fn, int device_num);
void gompt_cabi_call_device_load(uintptr_t fn, int device_num, const char *filename, int64_t offset_in_file, uintptr_t vma_in_file, size_t bytes, uintptr_t host_addr, uintptr_t device_addr, uint64_t module_id);
void gompt_cabi_call_device_unload(uintptr_t fn, int device_num, uint64_t module_id);
void gompt_cabi_call_thread_begin(uintptr_t fn, int type, uintptr_t thread_data);
void gompt_cabi_call_thread_end(uintptr_t fn, uintptr_t thread_data);
void gompt_cabi_call_implicit_task(uintptr_t fn, int endpoint, uintptr_t parallel_data, uintptr_t task_data, unsigned int actual_parallelism, unsigned int index, int flags);
void gompt_cabi_call_task_create(uintptr_t fn, uintptr_t encountering_task_data, uintptr_t encountering_frame, uintptr_t new_task_data, int flags, int has_dependences, uintptr_t code);
void gompt_cabi_call_task_schedule(uintptr_t fn, uintptr_t prior_task_data, int prior_task_status, uintptr_t next_task_data);
void gompt_cabi_call_target(uintptr_t fn, int kind, int endpoint, int device_num, uintptr_t task_data, ompt_id_t target_id, uintptr_t code);
void gompt_cabi_call_target_emi(uintptr_t fn, int kind, int endpoint, int device_num, uintptr_t task_data, uintptr_t target_task_data, uintptr_t target_data, uintptr_t code);
void gompt_cabi_call_target_data_op(uintptr_t fn, ompt_id_t target_id, ompt_id_t host_op_id, int optype, uintptr_t src, int src_dev, uintptr_t dest, int dest_dev, size_t bytes, uintptr_t code);
void gompt_cabi_call_target_data_op_emi(uintptr_t fn, int endpoint, uintptr_t target_task_data, uintptr_t target_data, uintptr_t host_op_id, int optype, uintptr_t src, int src_dev, uintptr_t dest, int dest_dev, size_t bytes, uintptr_t code);
void gompt_cabi_call_target_submit(uintptr_t fn, ompt_id_t target_id, ompt_id_t host_op_id, unsigned int teams);
void gompt_cabi_call_target_submit_emi(uintptr_t fn, int endpoint, uintptr_t target_data, uintptr_t host_op_id, unsigned int teams);
void gompt_cabi_call_target_map(uintptr_t fn, ompt_id_t target_id, unsigned int nitems, uintptr_t *host_addr, uintptr_t *device_addr, uint64_t *bytes, uint32_t *flags, uintptr_t code);
void gompt_cabi_call_target_map_emi(uintptr_t fn, ompt_data_t *target_data, unsigned int nitems, uintptr_t *host_addr, uintptr_t *device_addr, uint64_t *bytes, uint32_t *flags, uintptr_t code);
void gompt_cabi_call_dependences(uintptr_t fn, uintptr_t task_data, ompt_dependence_t *deps, int ndeps);
void *gompt_cabi_call_buffer_request(uintptr_t fn, int device_num, size_t *bytes);
void gompt_cabi_call_buffer_complete(uintptr_t fn, int device_num, void *buffer, size_t bytes, ompt_buffer_cursor_t begin, int owned);

// gompt_cabi_entries lists the C entry points in the order of entryNames
// (entry.go); gompt_cabi_nentries is its length.
extern const ompt_interface_fn_t gompt_cabi_entries[];
extern const int gompt_cabi_nentries;

#endif
