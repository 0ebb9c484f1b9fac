// Package ompt is gompt's OMPT tools interface: tool start-up, entry points
// by name, device events and target callbacks, as OpenMP 5.1/5.2 specify
// them (or OpenMP 6.0, or as LLVM's runtime reports them: see "OpenMP
// versions") for a runtime that offloads target regions but has no host
// parallel regions. It is what a Go tool author reads: the types, the
// callback and entry point signatures, the trace records, RegisterTool
// and the behaviour below. The engine behind it (dispatch, construct
// scopes, trace delivery, the clocks) is target/internal/omptrt, which package
// target drives (target/internal/omptrt/RUNTIME.md gives the exact calls);
// package target/internal/cabi gives C tools (omp-tools.h) the same events, ids and
// state through C entry points.
//
// # Start-up
//
// A Go tool calls RegisterTool from its init function; it is the Go form
// of a statically linked ompt_start_tool. The runtime calls Start once, on
// its first OpenMP-level operation, before any event and before it answers
// any device query:
//
//   - tool-var comes from OMP_TOOL: "enabled" (default) or "disabled",
//     case-insensitive, blanks ignored. Disabled: no search, the interface
//     stays inactive. Any other value: a one-line warning on stderr, and
//     enabled.
//   - Enabled: the state becomes pending and every registered Go tool is
//     asked in registration order (StartFunc, with OMPVersion = 202011,
//     or OMPVersion60 = 202411 with GOMPT_OMPT_VERSION=6.0, and
//     RuntimeVersion "gompt X.Y.Z (go1.N)"). nil means "keep looking". Each
//     non-nil result activates its tool. Then each Finder (target/internal/cabi's C
//     search) runs. The standard's "the first ompt_start_tool found is
//     used" is about one C symbol that may be found in several places. Go
//     tools register under distinct names, so gompt activates every one
//     that accepts. Several tools can be active at once, each with its own
//     tool data, callbacks and data slots. This is what LLVM needs its
//     multiplex header for.
//   - No tool found: inactive. Otherwise active, and each tool's
//     Initialize runs with its own LookupFunc, the initial device number
//     (N, the number of offload devices; -1 with GOMPT_OMPT_VERSION=6.0)
//     and &StartResult.ToolData. A
//     start function or initializer that panics is recovered and its tool
//     dropped. An initializer that returns 0 drops its tool. With no tool
//     left, the interface is inactive: nothing is dispatched.
//   - OMP_TOOL_VERBOSE_INIT=disabled|stdout|stderr|FILE logs each step of
//     the search and why each tool was skipped or dropped. Where the step
//     is LLVM's libomp's (ompt-general.cpp), the line is its line, byte
//     for byte: "----- START LOGGING OF TOOL REGISTRATION -----", "Search
//     for OMP tool in current address space... Failed.", "Searching tool
//     libraries...", "OMP_TOOL_LIBRARIES = X", "Opening X... Success. ",
//     "Searching for ompt_start_tool in X... Found but not using the OMPT
//     interface.", "Continuing search...", "Tool was started and is using
//     the OMPT interface.", "No OMP_TOOL_LIBRARIES defined.", "No OMP tool
//     loaded.", and with OMP_TOOL=disabled only "OMP tool disabled. ". Go
//     tools add lines of their own (before the C search), and so do
//     initializers that drop their tool (after the END line: LLVM ends
//     the log before it initializes the tool). LLVM's non-standard
//     fallback to libarcher.so is not imitated.
//
// Finalize (called by the runtime's shutdown routine) dispatches
// device_finalize for every live device, waits for the constructs in
// progress on other goroutines (their threads' implicit_task end and
// thread_end come on those threads as they end, see "Threads"), ends
// the life of the calling thread if it is inside one, and then calls
// each tool's finalizer, once. A second call does nothing.
//
// ompt_finalize_tool, called by one tool, detaches only that tool (the
// standard speaks of a single tool; with several, detaching only the tool
// that asked is the faithful reading; the other tools keep running). As
// OpenMP 5.2 says, outstanding events are delivered first: no target
// callback reaches the tool from then on (constructs in progress on other
// goroutines, which may be calling it, are waited for to end), every trace session it started is stopped
// (its last records delivered, buffers handed back), it gets
// device_finalize for each device it got device_initialize for (on the
// calling thread, inside a life of it), implicit_task end and
// thread_end for every life it is in (each on its own thread: those of
// the constructs waited for as they end, the calling thread's there),
// then its finalizer runs, and no callback follows. A tool may free its state in
// its finalizer. Called from a target callback, ompt_finalize_tool returns
// after the finalizer when the constructs in progress on other goroutines
// end within 200 ms; otherwise (one may wait for what the caller's
// construct holds: a device's present table around a map's data ops, a
// dependence) it returns then, after the calling thread's implicit_task
// end and thread_end (there), and the rest follows on a goroutine of its
// own once they have ended, as below; Finalize waits for it. Called from inside a buffer callback (whose
// delivery the stop would wait for) it returns at once, and the rest
// follows on a goroutine of its own after the callback returns (the
// device's remaining records, device_finalize, thread ends, finalize);
// Finalize waits for it. A tool that holds a lock of its own across
// ompt_finalize_tool which one of its callbacks on another thread takes
// deadlocks.
//
// # Threads
//
// Every per-thread event comes on the OS thread it describes, as LLVM's
// libomp dispatches it: thread_begin, implicit_task begin and end, and
// thread_end. An OpenMP thread is an OS thread, and its life is the OS
// thread's, as a native thread's is in LLVM: it begins at the first
// event the runtime dispatches on the thread and goes on between
// constructs, while Go runs other goroutines on the thread. The runtime
// holds the calling thread (runtime.LockOSThread) for each construct
// (from its begin event to its end event), each device memory routine,
// and each device event that comes outside a construct (device_initialize
// and device_load at a device's first use, device_unload and
// device_finalize at shutdown); every event comes inside such a hold, so
// inside its thread's life. A tool that registers the thread events
// gets one thread_begin per OS thread the runtime runs constructs on,
// however many constructs run there (a program's 200,000 constructs on 8
// goroutines: about a dozen).
//
// A goroutine that blocks while the runtime holds its thread (on the
// present table's lock, on its device) keeps the thread blocked with it,
// and Go starts another for the other goroutines. So that a tool does
// not turn thousands of goroutines into thousands of threads (and Go's
// "thread exhaustion" crash at 10,000), the runtime bounds how many hold
// a thread at once while a tool listens. Nowait tasks run on at most
// max(8, GOMAXPROCS at start-up) threads at a time, as LLVM runs target
// tasks on a few hidden helper threads: a task waits, holding nothing,
// until one is free, and holds it from its start (its task_create) to
// its end. The program's own goroutines are not bounded until the
// runtime has held more than max(64, 4 GOMAXPROCS) distinct threads;
// from then on, a construct or device memory routine of a goroutine that
// holds no thread yet (not locked by its own runtime.LockOSThread, not
// inside a callback) waits, before its begin, until fewer than that many
// such constructs are in progress. 2,000 goroutines' constructs begun at
// once with a tool made some 1,950 threads; now some 120. A nowait task
// or Go task that a callback begins (and may wait for) waits for
// neither bound. Synchronous constructs with depend items keep their
// threads while they wait for their predecessors, bound or not.
//
// When a life begins, each tool gets thread_begin(ompt_thread_initial)
// with the thread's thread_data and an implicit initial task:
// implicit_task(begin, parallel_data, task_data, 1, 1,
// ompt_task_initial), with the task_data of the thread's initial task
// and the parallel_data of its implicit parallel region, all starting as
// ompt_data_none. When the life ends, each tool gets
// implicit_task(end, same slots, 0, 1, ompt_task_initial) and thread_end,
// on that thread, with the callbacks it had registered when it entered
// the life, and the slots go back to ompt_data_none. So a tool that
// keeps state per thread (thread-local storage, as Archer and sampling
// profilers do) makes it and frees it on the same thread, once per
// thread, and a thread's events, target events included, fall inside
// its life. A life ends:
//   - at the tool's finalize (ompt_finalize_tool, Finalize), before its
//     finalizer: on the finalizing thread itself, and on each other
//     thread by a goroutine of the runtime that runs on it (Go runs no
//     code on a chosen thread, so such goroutines take the idle threads
//     in turn). A thread that stays busy with one goroutine throughout,
//     or that a goroutine keeps locked, cannot be reached: its life is
//     left without its end, and the OMP_TOOL_VERBOSE_INIT log counts
//     such lives;
//   - at the end of a construct (or routine) of a goroutine that is
//     locked to its thread by its own runtime.LockOSThread: such a
//     goroutine may exit locked, and Go ends the thread with it, so its
//     constructs are one life each. Not on the main thread, which Go
//     never ends: the main goroutine of a program that locks it in init
//     (GUI and OpenGL programs do) has one life there, which ends at
//     the finalize the program calls from main (called elsewhere while
//     main stays locked, it cannot reach that thread);
//   - never, when the thread dies with it: a goroutine that exits while
//     the runtime holds its thread (a Go callback that calls
//     runtime.Goexit, a panic that skips the construct's end and is
//     recovered further up, in a goroutine that then exits), or one that
//     locks a thread with an open life and exits locked. Its ends cannot
//     come on it, and are dispatched nowhere else.
//
// A new thread that gets a dead one's id from the kernel is a new
// OpenMP thread. On a Go release where the runtime's fields this needs
// are not found (the goroutine's lock, the thread's identity: Linux,
// amd64 and arm64, Go 1.21 to 1.26 are checked), a life is one hold, and
// a tool gets four callbacks more per construct.
//
// A tool that registers none of thread_begin, implicit_task and
// thread_end is never told a thread began or ended, and its slots keep
// what it stores there from one life of the thread to the next (state it
// makes lazily, on finding thread_data ompt_data_none, is made once per
// OS thread); once it registers one of them (ompt_set_callback from a
// callback), its next life on each thread begins with the slots at
// ompt_data_none, as every life does. The thread that runs Start has
// slots during the initializers (get_task_info answers there) and gets
// its thread_begin at its first life, not right after initialize.
//
// ompt_get_thread_data, ompt_get_task_info(0) and ompt_get_parallel_info(0)
// answer for the calling OS thread: inside a life, between constructs
// too, the life's slots; on a thread whose life ended, the same slots
// (ompt_data_none for a tool with thread callbacks); on a thread the
// runtime never held (one a tool made, a buffer callback's delivery
// goroutine on a fresh thread) NULL and 0, as LLVM's do. Target
// callbacks get the calling thread's task_data.
//
// A nowait construct is a deferred target task, as in LLVM. The goroutine
// that encounters it does not hold its thread past the call (a task
// created in a life that has ended would outlive its creator's implicit
// task: Archer frees a thread's task pools at thread_end), so all of the
// task's events come in the life of the thread that runs it, when it
// starts: task_create (ompt_task_target, new_task_data = its
// target_task_data, has_dependences set when it has depend items,
// encountered by that thread's initial task), dependences, then
// task_schedule(initial task, ompt_task_switch, target task), the target
// begin, the construct's operations, the target end and
// task_schedule(target task, ompt_task_complete, initial task).
//
// ompt_finalize_tool and Finalize wait for the constructs in progress on
// other goroutines and end the tool's lives (above) before its
// finalizer, and nothing reaches it afterwards.
//
// # Entry points (Table 4.1), as gompt answers them
//
// The lookup function given to Initialize returns a value of the named
// type below, or nil for a name it does not know:
//
//	ompt_enumerate_states       EnumerateStatesFunc: the states gompt uses: work_serial,
//	                            wait_target, wait_target_map, wait_target_update
//	ompt_enumerate_mutex_impls  EnumerateMutexImplsFunc: none (gompt has no OpenMP locks)
//	ompt_set_callback           SetCallbackFunc: see below
//	ompt_get_callback           GetCallbackFunc: the calling tool's callback, as its named type
//	ompt_get_thread_data        GetThreadDataFunc: the calling OS thread's slot (see
//	                            "Threads"); nil on a thread the runtime never held
//	ompt_get_num_places         GetNumPlacesFunc: 0 (gompt has no place list)
//	ompt_get_place_proc_ids     GetPlaceProcIDsFunc: 0 (no such place)
//	ompt_get_place_num          GetPlaceNumFunc: -1 (not bound to a place)
//	ompt_get_partition_place_nums GetPartitionPlaceNumsFunc: 0
//	ompt_get_proc_id            GetProcIDFunc: the CPU the calling thread is on now
//	                            (getcpu), -1 where unknown
//	ompt_get_state              GetStateFunc: wait_target inside a target construct
//	                            (wait_target_map during its data operations and for
//	                            enter/exit data, wait_target_update for update),
//	                            work_serial elsewhere; wait id 0
//	ompt_get_parallel_info      GetParallelInfoFunc: level 0 is the calling thread's
//	                            implicit parallel region (team size 1, result 2);
//	                            other levels, or a thread never seen: 0
//	ompt_get_task_info          GetTaskInfoFunc: level 0 is the calling thread's initial
//	                            task (flags ompt_task_initial, the task_data that its
//	                            target callbacks get, a zero frame, thread 0, result 2);
//	                            other levels, or a thread never seen: 0
//	ompt_get_task_memory        GetTaskMemoryFunc: 0 (no task memory)
//	ompt_get_num_devices        GetNumDevicesFunc: N, the number of offload devices
//	ompt_get_num_procs          GetNumProcsFunc: runtime.NumCPU()
//	ompt_get_target_info        GetTargetInfoFunc: see "Which construct" below
//	ompt_get_unique_id          GetUniqueIDFunc: a fresh id from the process-wide id
//	                            space that target and host-op ids come from
//	ompt_finalize_tool          FinalizeToolFunc: detaches the calling tool
//
// ompt_set_callback answers ompt_set_always for the target events (both
// forms of target, target_data_op, target_submit, target_map), the four
// device events, dependences (the depend items of a target task, with
// its target_task_data slot as task_data, after task_create for a nowait
// construct, on the task's thread, and right after target begin for a
// synchronous one),
// and the events OpenMP 5.2 makes mandatory (its table of
// required callbacks allows only ompt_set_always for them): thread_begin,
// thread_end, implicit_task, task_create and task_schedule (see
// "Threads"), and parallel_begin and parallel_end, which gompt, having no
// parallel regions, never dispatches, truthfully under "always". It
// answers ompt_set_never for the other host events: control_tool among
// them, because gompt has no omp_control_tool routine for a program to
// call, so the event never happens (an always-answer would promise a
// callback no program can cause). With GOMPT_TOOL_PROFILE=llvm it
// answers ompt_set_never for target_map and target_map_emi too (see the
// differences from LLVM below). It answers ompt_set_error for a number
// omp-tools.h does not define. A callback of the wrong Go type (not the
// event's callback type, nor a func with the same signature) is also
// ompt_set_error, and nothing is registered, so there is no later panic.
// nil (untyped or a typed nil func) unregisters. Registration works while
// the tool initializes and while it is active: a change applies to
// constructs that begin afterwards, and a construct already running keeps
// the callbacks it began with, so its begin and end stay paired. Before
// initialize and after the tool is finalized, it answers ompt_set_error,
// as the standard allows.
//
// Each device's lookup (given in device_initialize, or from GetDeviceInfo)
// resolves ompt_get_device_num_procs, ompt_get_device_time,
// ompt_translate_time and the eleven tracing entry points (see "Device
// tracing"), and with GOMPT_OMPT_VERSION=6.0 ompt_get_buffer_limits
// (see "OpenMP versions"). translate_time maps device nanoseconds onto Wtime seconds,
// the base of omp_get_wtime, by a history of paired clock readings kept
// per device: taken when device times are used and the last is older than
// 0.25 s, interpolated between the two around a time (so old records are
// translated with the clock rate of their own time), extrapolated after
// the last one. It is monotonic, also across re-fits: a later device time
// never translates to an earlier host time, and a re-fit never changes
// what a time already translated maps to (a reading the fit already
// predicts within 150 ns is not added; otherwise a point is pinned on the
// old line at the latest time translated before the new reading is
// added). translate_time keeps answering after device_finalize, with the
// fit as it was then, so a tool translates its last records (delivered
// during device finalization) and later ones in its finalizer without a
// copy of its own. Host times are never negative: a device time whose
// host time would fall before Wtime's epoch (0 on a device whose clock
// started long before the program, as POCL's did: -3266 s) translates to
// 0, and a device time beyond int64 nanoseconds (UINT64_MAX) is read as
// the largest int64 without moving the fit. On a nil device all three
// answer 0; on a finalized one get_device_num_procs and get_device_time
// answer 0.
//
// A device whose driver gives no usable event times (Mesa's rusticl) is
// not refused: its device time is then the host's CLOCK_MONOTONIC, and a
// trace record's begin and end are host readings that bracket the
// operation (taken before its enqueue, and when its completion was seen)
// rather than the device's own times: the operation lies inside, ends
// follow queue order, and a record may begin before the previous one on
// its queue ended. ompt-devinfo's "Times" line says which a device gives
// (device.Info.TimeSource and BracketTimes).
//
// # Device tracing
//
// Entry points (Go forms of omp-tools.h, named types in device.go):
//
//	ompt_set_trace_ompt        SetTraceOMPTFunc: ompt_set_always for target,
//	                           target_data_op, target_submit (and their EMI
//	                           numbers); ompt_set_never for other events;
//	                           ompt_set_sometimes for 0 (all). Nothing is
//	                           recorded until a type is enabled.
//	ompt_set_trace_native      SetTraceNativeFunc: always/sometimes/never as the
//	                           device's plugin honours the flags
//	ompt_start_trace           StartTraceFunc(device, BufferRequestFunc, BufferCompleteFunc)
//	ompt_pause_trace, ompt_flush_trace, ompt_stop_trace
//	ompt_advance_buffer_cursor, ompt_get_record_type, ompt_get_record_ompt,
//	ompt_get_record_native, ompt_get_record_abstract
//
// Buffers are []byte (the C face passes C memory as the same bytes);
// cursors are byte offsets. Records are ompt_record_ompt_t byte for byte
// (RecordOMPT, 104 bytes, body at 32); native records follow a 48-byte
// header, each a value of its plugin's record type, defined once in
// its plugin's package and registered with package device (host.Record,
// opencl.Record, cuda.Record; device.NativeTypeOf describes any of them
// field by field, for a tool that does not import the plugin). Each
// device has a queue of packed records (128 KiB, growing to 4 MiB while
// delivery falls behind, or while records fill a quarter of it sooner
// than every 2 ms: some 2048 to 65536 operations) and
// one delivery goroutine: the application only queues (a construct
// queues its records together when it ends); buffer_request and
// buffer_complete run on the delivery goroutine, in record order. The
// goroutine takes records in batches, a quarter of the queue at a time
// or every 2 ms, so a record reaches the tool within about 2 ms, or at
// once on flush_trace. A
// request that yields no buffer, or one too small for a record, loses the
// records of that batch (counted, TraceStats, and logged under
// OMP_TOOL_VERBOSE_INIT); the next batch asks again. A full queue loses
// records too, never blocking the caller. Buffers are completed when full
// (buffer_owned 1), on flush (a part with buffer_owned 0; the runtime
// goes on writing after it), on stop and at device finalize (buffer_owned
// 1). flush_trace returns after every record queued before it is
// delivered; after stop_trace returns, and after DeviceFinalize, no
// callback of the session runs. flush and stop from inside the device's
// own buffer callbacks return 0 (they would wait for themselves). From
// inside another device's buffer callback they wait, unless that wait
// would close a cycle of delivery goroutines waiting for each other
// (device A's callback flushing B while B's flushes A): then they return
// 0 at once. So a flush from inside any delivery callback either
// completes or returns 0, whichever device it names. A
// buffer callback that panics ends tracing on its device (logged); the
// device keeps running.
//
// # Which kernel ran: module and entry names
//
// gompt loads one image per kernel per device, so a module has one entry,
// the kernel. device_load reports it with filename set to the kernel's
// name (device.Kernel.Name, e.g. "saxpy"; there is no file:
// offset_in_file, vma_in_file, host_addr and device_addr are 0), bytes the
// size of the image and a module_id for device_unload. A launch's trace
// record (target_submit) says nothing of its kernel, as in OpenMP; with
// ompt_set_trace_native for ompt_native_kernel_execution, the native
// record that follows it has the type "PLUGIN kernel: NAME", the
// plugin's type and the kernel's name ("host kernel: saxpy", "opencl
// kernel: saxpy", "cuda kernel: saxpy"), read with ompt_get_record_native
// and then ompt_get_record_abstract (its type field; a C tool gets the same
// string). The names of the first 192 distinct kernel and plugin pairs
// of a process are given; later launches carry the plugin's type alone
// ("cuda kernel"), as native type names are interned (255 per process).
// tools/timeline labels kernel slices this way.
//
// # Target events
//
// Both forms of target, target_data_op, target_submit and target_map are
// dispatched. If a tool registers both forms of one event, only the EMI
// form is called: that is OpenMP 5.2's rule, and LLVM follows it. Ids:
// every target construct gets a fresh target_id, and each data operation
// and each submit gets a fresh host_op_id. All of them come from one
// process-wide counter, so no two are equal. Each OpenMP thread's initial
// task has an id from the same counter: the task_id of the target records
// of the constructs it encounters. EMI tools get one target_data
// slot per construct and one host_op_id slot. The runtime fills the slot
// with the operation's host_op_id before the begin event. Whatever the
// tool writes at begin is still there at end. A non-EMI target_data_op is
// dispatched once, after the operation: every argument is then final,
// including the device address of an alloc. A non-EMI target_submit is
// dispatched once, before the launch. task_data is the calling thread's
// initial task's slot of each tool. target_task_data is nil except for nowait kinds. Device
// memory routines report their data operations outside any construct:
// non-EMI target_id 0. EMI target_data is never nil: a routine gets a
// slot of its own, zeroed at its begin and the same slot for each of its
// data operations, begin and end (LLVM passes one, and tools written for
// LLVM read target_data->value); target_task_data is nil there.
//
// # OpenMP versions
//
// One process reports one version of the tools interface, chosen once at
// start-up (before any tool is asked) by GOMPT_OMPT_VERSION (5.2, the
// default, or 6.0) and GOMPT_TOOL_PROFILE (openmp, the default, or llvm);
// Go tools and C tools (target/internal/cabi) get the same. A bad value is a
// one-line warning naming the variable, the value and what it accepts,
// and the default; llvm with 6.0 is the llvm profile, with a warning
// (LLVM's runtime reports 5.x kinds). N is the number of offload
// devices; "host" is the number tools get for the initial device.
//
//	                                5.2 (default)          6.0                          llvm profile
//	omp_version (start function)    202011                 202411                       202011
//	initial_device_num              N                      -1                           N
//	target device_num on the host   N                      -1                           N
//	get_target_info device          N                      -1                           N
//	host in data ops, records too   N                      -1                           -1
//	alloc (async)                   1 (17)                 1 (17)                       1 (17)
//	host to device (async)          2 (18)                 7 (23)                       2 (18)
//	device to host (async)          3 (19)                 7 (23)                       3 (19)
//	device to device, memcpy        3, both devices real   7, both devices real         3, both devices real
//	host to host, memcpy            2, host to host        7, host to host              2, host to host
//	delete (async)                  4 (20)                 4 (20)                       4 (20)
//	associate, disassociate         5, 6                   5, 6                         5, 6
//	omp_target_memset               8 (see below)          8                            8 (see below)
//	omp_target_memcpy_rect          a transfer (2 or 3)    one transfer_rect (9):       as 5.2
//	                                per contiguous piece   src, dest: ompt_subvolume_t
//	target_map, target_map_emi      dispatched (always)    dispatched (always)          never
//	ompt_get_buffer_limits          not resolved (nil)     resolved (device lookup)     not resolved
//
// Kinds are ompt_target_data_op_t values (DataOpKind); the async kinds
// are those of nowait constructs. In every version alloc's end carries
// the new device address; delete names the device address and device
// as source, 0 and the host as destination, 0 bytes.
//
// OpenMP 5.2 (the default). The host is N in every event: the value
// initialize got as initial_device_num, the device_num of a target
// construct that runs on the host, and what omp_get_initial_device
// returns. OpenMP 5.2 makes both N and omp_initial_device (-1)
// conforming device numbers of the host, and gives a tool only
// initial_device_num to recognize it by; LLVM 19 gives N everywhere too.
// A copy from one offload device to another (omp_target_memcpy and
// omp_target_memcpy_rect between devices) is one data operation,
// transfer_from_device, from the source device's address to the
// destination device's address, both device numbers real (neither is
// initial_device_num), one record, one host_op_id, whether the plugin
// copies peer to peer or gompt stages it through a host buffer of its
// own. OpenMP 5.2 has no kind for it; its data-op arguments say on which
// device each address lives, and LLVM reports its device-to-device
// exchange the same way. Reporting two transfers staged through the host
// would name a host buffer that, for a peer copy, does not exist. A tool
// that reads the destination of every transfer_from_device as host
// memory (OMPDataPerf does) must check dest_device_num against
// initial_device_num first, or run with GOMPT_OMPT_VERSION=6.0. OpenMP
// 5.2 has no word for omp_target_memset, which it does not define
// either (5.2's omp-tools.h has no memset kind): gompt reports it as one
// data operation of OpenMP 6.0's kind ompt_target_data_memset (8), from
// no address on the host to the device address set, as LLVM's runtime
// names that kind, because a memset is no transfer (nothing is read from
// the host), and a tool that knows no kind 8 can skip it; LLVM's
// omp_target_memset reports a kernel launch or, where that fails, an
// alloc, a transfer and a delete of a host buffer, not a memset.
//
// OpenMP 6.0 (GOMPT_OMPT_VERSION=6.0). Its tools interface, whole: the
// host is omp_initial_device (-1) in every callback and record,
// initial_device_num included, so a tool that compares with
// initial_device_num and one that tests for -1 are both right; every
// copy is ompt_target_data_transfer (7, async 23) with both device
// numbers, device to device included (6.0 deprecates transfer_to_device
// and transfer_from_device, which it does not report); memset is 8
// (async 24, which gompt has no routine for); a rectangular copy
// (omp_target_memcpy_rect) is one data operation,
// ompt_target_data_transfer_rect (9, async 25), whose src_addr and
// dest_addr point to an ompt_subvolume_t each (Subvolume, SubvolumeAt:
// the array's base address, the element size, the number of
// dimensions, and the volume, that side's offsets and that side's
// dimensions), valid during the callback, and bytes the bytes it copies.
// Its trace record, delivered after the routine has returned, names the
// two arrays' base addresses instead (a pointer to a subvolume would
// dangle). Each device's lookup also resolves ompt_get_buffer_limits
// (GetBufferLimitsFunc; C: int (ompt_device_t *, int
// *max_concurrent_allocs, size_t *recommended_bytes)): gompt holds one
// of a tool's buffers per device at a time (a full one is completed
// before the next is requested), so 1, and 1 MiB, some 10,000 records;
// 0 and nothing written for a device that was never initialized or is
// finalized. A tool built against LLVM 19's omp-tools.h, which has none
// of these, declares ompt_subvolume_t and ompt_get_buffer_limits_t
// itself (target/versiontest/testdata/cversion.c does).
//
// The llvm profile (GOMPT_TOOL_PROFILE=llvm) follows LLVM's runtime as
// it is today (LLVM main): target_map and target_map_emi answer
// ompt_set_never and are never dispatched (below), and the host is -1
// in data-op callbacks and records while initial_device_num and target
// events keep N, with the 5.x kinds, device to device included. LLVM's
// offload/test/ompt/target_memcpy.c and target_memcpy_emi.c expect
// exactly that (src_device_num=-1 for an alloc and a transfer to the
// device; transfer_from_device with both device numbers for a copy
// within the device). A tool written for LLVM that compares the host in
// a data op with -1 works there, and not under 5.2.
//
// # Whose ids: an EMI tool's are its own
//
// The ids are those of the tool that asks. An EMI tool may write its own
// ids into target_data (Value) and *host_op_id; it does so to join trace
// records to its callbacks, as LLVM's runtime fills records from the
// tool's slots. So ompt_get_target_info, called by a tool, answers the
// target_data value and host_op_id that tool holds for the construct and
// the operation in flight (a C tool's, as it wrote them into its C
// slots), and the trace records delivered to it carry the same:
// target_id from its target_data slot, host_op_id from its host_op_id
// slot. Where the tool left a slot 0 (a non-EMI tool always does) the
// runtime's id stands in. Each tool has its own slots, so several tools
// at once each see their own values. The records go to the tool that
// called ompt_start_trace through the device lookup it got in its
// device_initialize; a trace started through GetDeviceInfo's lookup
// belongs to no tool and carries the runtime's ids.
//
// # Traps for tool authors
//
//   - Buffer callbacks run on the device's delivery goroutine, not on the
//     thread of the operation. ompt_flush_trace and ompt_stop_trace wait
//     for them. A tool that holds its own lock across flush_trace or
//     stop_trace while its buffer_request or buffer_complete takes the
//     same lock deadlocks (stop gives up after StopTimeout and reports
//     the callback; flush waits). Release the lock before flushing, or
//     keep the buffer callbacks off it.
//   - Records arrive after their construct ends: a construct's records
//     are queued together at its end and delivered within about 2 ms, or
//     at once on flush_trace. Do not expect a record inside the callbacks
//     of its own construct; join records to callbacks by their ids (an
//     EMI tool's own, see above) after a flush.
//   - flush_trace and stop_trace from inside the device's own buffer
//     callbacks return 0 and do nothing; from inside another device's,
//     they return 0 where waiting would deadlock (that device's callback
//     waits for this one). A 0 from flush_trace there means "not now".
//   - An EMI tool that writes a slot at an end event changes what later
//     records and get_target_info answer for that construct only from
//     then on; write ids at the begin event.
//   - Slots are reused: a pointer to target_data or host_op_id is valid
//     from the begin event to the end event of its construct (or device
//     memory routine) only.
//
// # Where the event sequence differs from LLVM's, and why
//
// For the same program, a tool sees gompt's events in LLVM's order and
// with LLVM's arguments, except:
//
//   - Device initialization and kernel load are lazy: device_initialize
//     comes at a device's first use, device_load just before the first
//     construct that launches a kernel from that image, not all at
//     program start. Both still precede every event naming the device.
//   - target_map / target_map_emi are dispatched (once per construct with
//     map items, after mapping and before the submit); LLVM's runtime
//     never dispatches them (its set_callback answers ompt_set_never).
//     A tool written against LLVM may register them all the same and not
//     expect a call: LLVM's omptest asserts in them. OpenMP 5.2 defines
//     the event, and a tool that registers it and gets ompt_set_always
//     is told it will come, so gompt dispatches it by default. With
//     GOMPT_TOOL_PROFILE=llvm it answers as LLVM does: ompt_set_never for
//     both forms, nothing registered (ompt_get_callback finds none), and
//     no construct dispatches or builds them. The trade-off is the
//     profile's whole: with it no tool in the process gets the map
//     items (a tool that wants them has no other way to learn a
//     construct's mapping in one event), so it is an opt-in for running
//     LLVM-written tools unchanged, not the default.
//   - Nowait constructs report the *_nowait target kinds and the *_async
//     data-op kinds (the OpenMP names for them); their target_task_data
//     is a real slot. LLVM's offload runtime (its tests, LLVM 19) reports
//     deferred target tasks with the synchronous kinds.
//   - A non-EMI target_data_op is dispatched once, after the operation,
//     with every argument final (an alloc's device address); a non-EMI
//     target_submit once, before the launch.
//   - Operations gompt does not make produce no events (no implicit
//     zero-length maps, no transfers for present items unless always).
//   - A module is one kernel's image: device_load comes once per kernel
//     and device, its filename is the kernel's name and host_addr is 0
//     (LLVM: one load per device image of the program, with the image's
//     file and address). A tool finds a launch's kernel through its
//     native record (see "Which kernel ran").
//   - A copy within one device allocation (omp_target_memcpy with src ==
//     dst, or overlapping ranges) succeeds on every plugin with one data
//     op (transfer_from_device) and one record, and moves the bytes as
//     memmove would; LLVM leaves overlapping device copies to each
//     plugin's driver, where they may fail or be undefined.
//   - A copy between two offload devices is one transfer_from_device
//     (6.0: transfer) whose destination is the other device's address
//     (see "OpenMP versions"); LLVM reports it so between devices of one
//     plugin, and as two transfers staged through a host buffer between
//     plugins.
//   - The host is N (initial_device_num) in data-op callbacks and
//     records, as in LLVM 19; LLVM today uses omp_initial_device (-1)
//     there: GOMPT_TOOL_PROFILE=llvm does the same (see "OpenMP
//     versions").
//   - An OpenMP thread's life is its OS thread's (see "Threads"), but
//     ends at the tool's finalize, not when the thread exits (Go's
//     threads rarely do), and a goroutine locked to its thread makes
//     each of its constructs a life. In LLVM a native thread begins at
//     its first OpenMP call and ends when it exits. The thread that
//     starts the tools gets thread_begin at its first event, not right
//     after initialize.
//   - A nowait construct's task_create and dependences come on the
//     thread that runs its target task, when the task starts,
//     right before its task_schedule (LLVM: on the encountering thread,
//     when the task is created). A tool that measures how long a target
//     task waited to run sees nothing of it.
//
// What is the same, and tested (target/tooltest, target/ctooltest): the
// order of a construct's events (begin, allocs and copies in list order,
// target_map, submit, then copies back and deletes in reverse list order,
// as LLVM's targetDataEnd, end); EMI slots never NULL; a trace record for
// every operation with a callback (associate and disassociate included),
// carrying the EMI tool's own ids.
package ompt
