// Package cabi is the C face of package ompt: it lets an OMPT tool written
// in C (or C++, or anything that builds a shared library against
// omp-tools.h of OpenMP 5.1/5.2) attach to a Go program that runs gompt,
// unchanged and without recompiling, as it would attach to LLVM's libomp.
//
// It is the runtime's: package target imports it (for its side effect),
// so every program that offloads can load C tools, and no program imports
// it itself. It adds the C tool search to ompt's start-up, after the Go
// tools:
//
//   - first an ompt_start_tool already in the address space: linked into
//     the program through cgo (a C file of any package of the program; a
//     weak reference in this package, resolved when the program is
//     linked, finds it with no special flags, no -rdynamic), or in a
//     shared library the loader knows, preloaded with LD_PRELOAD say
//     (dlsym(RTLD_DEFAULT)). gompt defines no such symbol itself;
//   - then each library in OMP_TOOL_LIBRARIES, a colon-separated list, in
//     order. Each entry is opened as dlopen(3) opens it: a name with a
//     slash as an absolute or relative path, a bare name through the
//     loader's search path (LD_LIBRARY_PATH, ld.so.cache, ...), with
//     RTLD_LAZY as libomp opens it (a tool may call functions no library
//     defines on paths it never takes). Empty entries are skipped.
//
// Each ompt_start_tool found is called with ompt.OMPVersion (202011;
// ompt.OMPVersion60, 202411, with GOMPT_OMPT_VERSION=6.0) and
// ompt.RuntimeVersion; every event a C tool gets follows the version of
// the process, as a Go tool's does (package ompt, "OpenMP versions"). NULL means "keep looking". The first non-NULL
// result is the tool, and the search stops: there is at most one C tool.
// Libraries that gave no tool are closed again. OMP_TOOL_VERBOSE_INIT logs
// the search with LLVM's libomp's lines, line for line ("Search for OMP
// tool in current address space... Failed.", "Opening X... Failed:
// <dlerror>", "Searching for ompt_start_tool in X... Found but not using
// the OMPT interface.", "Continuing search...", ...; see package ompt).
// The core logs an initializer that drops its tool. With OMP_TOOL=disabled
// the core never calls the search. C and Go tools can be active together.
//
// # Entry points
//
// The lookup function given to the tool's initialize returns a C function
// with the omp-tools.h signature for each Table 4.1 name that ompt's Go
// lookup resolves, and NULL for any other name. The lookup given to
// device_initialize does the same for the device names: get_device_num_procs,
// get_device_time, translate_time and the eleven tracing entry points
// (set_trace_ompt ... get_record_abstract). Entry points are safe to call
// from any thread, including threads the tool creates, and from inside
// callbacks. ompt_get_thread_data, ompt_get_task_info and
// ompt_get_parallel_info answer for the calling thread (package ompt,
// "Threads"): NULL / 0 on a thread the runtime never saw, such as one
// the tool created. A device pointer gompt did not hand out is answered with 0
// (ompt_set_error for the set_trace calls), never dereferenced.
//
// # Tracing
//
// ompt_start_trace takes the tool's C buffer_request and buffer_complete
// callbacks. The buffer a request returns is the tool's C memory; ompt's
// tracing core writes ompt_record_ompt_t records (and native entries) into
// it in place, and buffer_complete gets the same pointer back; the tool
// frees it when buffer_owned is 1. Both callbacks run on the device's
// delivery goroutine, never on the thread of the operation. Each buffer is
// remembered, with its length, from the request that returned it until
// the owned buffer_complete has returned: get_record_type,
// get_record_ompt, get_record_native and get_record_abstract, which get
// no size, check bounds against it, and answer ompt_record_invalid or NULL
// for a pointer that is not the start of such a buffer (or, for
// get_record_abstract, a native record inside one). advance_buffer_cursor
// answers 0 for such a pointer too, and otherwise reads at most the
// smaller of its size argument and the buffer's length; its device may be
// NULL. get_record_ompt returns a pointer into the
// buffer. get_record_abstract returns a C ompt_record_abstract_t made on
// the first call for that record (later calls return the same pointer),
// valid until the buffer goes back to the tool; its type string is static.
// flush_trace and stop_trace from inside the device's own buffer
// callbacks return 0 (they would wait for themselves); from inside
// another device's they complete, or return 0 at once where the wait
// would deadlock (that device's buffer callback is flushing this one).
//
// # Callbacks
//
// ompt_set_callback registers, for the C function, a Go callback of the
// event's type that calls it with the omp-tools.h argument list, and
// answers what ompt answers (ompt_set_always for the target and device
// events and OpenMP 5.2's mandatory ones: thread_begin, thread_end,
// implicit_task, task_create, task_schedule, parallel_begin and
// parallel_end; ompt_set_never for host events gompt never dispatches,
// control_tool among them; ompt_set_error for numbers omp-tools.h does
// not define). Every ompt_data_t * and ompt_id_t * a callback gets points
// to C memory: each OS thread's thread_data, its initial task's
// task_data and its parallel_data live as long as the process (the same
// memory for each life of the thread, see package ompt, "Threads"; back
// to ompt_data_none after each thread_end);
// task_create's new_task_data and task_schedule's target task are the
// construct's target_task_data;
// target_data, target_task_data and the host_op_id slot live from the
// construct's begin event to its end event, start as ompt_data_none (the
// memory is reused by later constructs), and whatever the tool wrote
// at begin is there at end. A device memory routine gets the same: its
// own target_data slot (never NULL) and host_op_id slot, from its begin
// to its end. The map arrays of
// target_map are valid during the call only. device_load gets NULL for an
// image without a file and ompt_addr_none for addresses that do not exist.
// tool_data of ompt_start_tool_result_t is passed to initialize and
// finalize by reference, in the tool's own structure.
//
// Callbacks run on the goroutine that causes the event, which holds its
// OS thread from a construct's begin to its end, so a construct's
// callbacks come on one thread, inside a life of it: thread_begin and
// implicit_task begin before them, implicit_task end and thread_end
// after them, on the same thread (package ompt, "Threads"). A tool's
// thread-local state made at thread_begin is there in every callback
// until thread_end. A C callback must not longjmp out or keep the map
// arrays.
package cabi

// FinderName is the name under which the C tool search is registered with
// ompt.RegisterFinder (it prefixes the core's verbose-log lines about it).
const FinderName = "C tools"
