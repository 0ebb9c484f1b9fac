// Package ompt is gompt's OMPT tools interface: tool start-up, entry points
// by name, device events and target callbacks, as OpenMP 5.1/5.2 specify
// them for a runtime that offloads target regions but has no host
// parallel regions. It is one implementation with two faces: Go tools use
// it directly; package ompt/cabi gives C tools (omp-tools.h) the same
// events, ids and state through C entry points. It imports nothing of
// gompt; package target drives it (see RUNTIME.md for the exact calls).
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
//     asked in registration order (StartFunc, with OMPVersion = 202011 and
//     RuntimeVersion "gompt X.Y.Z (go1.N)"). nil means "keep looking". Each
//     non-nil result activates its tool. Then each Finder (ompt/cabi's C
//     search) runs. The standard's "the first ompt_start_tool found is
//     used" is about one C symbol that may be found in several places. Go
//     tools register under distinct names, so gompt activates every one
//     that accepts. Several tools can be active at once, each with its own
//     tool data, callbacks and data slots. This is what LLVM needs its
//     multiplex header for.
//   - No tool found: inactive. Otherwise active, and each tool's
//     Initialize runs with its own LookupFunc, the initial device number
//     (N, the number of offload devices) and &StartResult.ToolData. A
//     start function or initializer that panics is recovered and its tool
//     dropped. An initializer that returns 0 drops its tool. With no tool
//     left, the interface is inactive: nothing is dispatched.
//   - OMP_TOOL_VERBOSE_INIT=disabled|stdout|stderr|FILE logs each step of
//     the search and why each tool was skipped or dropped.
//
// Finalize (called by the runtime's shutdown routine) dispatches
// device_finalize for every live device, then calls each tool's finalizer
// once. A second call does nothing. ompt_finalize_tool, called by one
// tool, detaches only that tool: its finalizer runs and it gets no callback
// afterwards. The other tools keep running. (The standard speaks of a
// single tool; with several, detaching only the tool that asked is the
// faithful reading.)
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
//	ompt_get_thread_data        GetThreadDataFunc: one slot per tool. gompt has no OpenMP
//	                            threads: all goroutines run as the initial thread
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
//	ompt_get_parallel_info      GetParallelInfoFunc: level 0 is the implicit parallel
//	                            region around the program (team size 1, result 2);
//	                            other levels: 0
//	ompt_get_task_info          GetTaskInfoFunc: level 0 is the initial task (flags
//	                            ompt_task_initial, the task_data that target callbacks
//	                            get, a zero frame, thread 0, result 2); other levels: 0
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
// device events and dependences (the depend items of a target task, with
// its target_task_data slot as task_data, right after its target begin;
// gompt has no other tasks). It answers ompt_set_never for every host event
// (gompt never dispatches them) and ompt_set_error for a number
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
// tracing"). translate_time maps device nanoseconds onto Wtime seconds,
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
// copy of its own. On a nil device all three answer 0; on a finalized
// one get_device_num_procs and get_device_time answer 0.
//
// # Device tracing
//
// Entry points (Go forms of omp-tools.h, named types in trace.go):
//
//	ompt_set_trace_ompt        SetTraceOMPTFunc: ompt_set_always for target,
//	                           target_data_op, target_submit (and their EMI
//	                           numbers); ompt_set_never for other events;
//	                           ompt_set_sometimes for 0 (all). Nothing is
//	                           recorded until a type is enabled.
//	ompt_set_trace_native      SetTraceNativeFunc: always/sometimes/never as the
//	                           device's plugin honours the flags (NativeDevice)
//	ompt_start_trace           StartTraceFunc(device, BufferRequestFunc, BufferCompleteFunc)
//	ompt_pause_trace, ompt_flush_trace, ompt_stop_trace
//	ompt_advance_buffer_cursor, ompt_get_record_type, ompt_get_record_ompt,
//	ompt_get_record_native, ompt_get_record_abstract
//
// Buffers are []byte (the C face passes C memory as the same bytes);
// cursors are byte offsets. Records are ompt_record_ompt_t byte for byte
// (RecordOMPT, 104 bytes, body at 32); native records follow a 48-byte
// header. Each device has a queue of packed records (128 KiB, growing to
// 4 MiB while delivery falls behind: some 2048 to 65536 operations) and
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
// own buffer callbacks return 0 (they would wait for themselves). A
// buffer callback that panics ends tracing on its device (logged); the
// device keeps running.
//
// # Target events
//
// Both forms of target, target_data_op, target_submit and target_map are
// dispatched. If a tool registers both forms of one event, only the EMI
// form is called: that is OpenMP 5.2's rule, and LLVM follows it. Ids:
// every target construct gets a fresh target_id, and each data operation
// and each submit gets a fresh host_op_id. All of them come from one
// process-wide counter, so no two are equal. EMI tools get one target_data
// slot per construct and one host_op_id slot. The runtime fills the slot
// with the operation's host_op_id before the begin event. Whatever the
// tool writes at begin is still there at end. A non-EMI target_data_op is
// dispatched once, after the operation: every argument is then final,
// including the device address of an alloc. A non-EMI target_submit is
// dispatched once, before the launch. task_data is the initial task's slot
// of each tool. target_task_data is nil except for nowait kinds. Device
// memory routines report their data operations outside any construct:
// non-EMI target_id 0. EMI target_data is never nil: a routine gets a
// slot of its own, zeroed at its begin and the same slot for each of its
// data operations, begin and end (LLVM passes one, and tools written for
// LLVM read target_data->value); target_task_data is nil there. The host
// is device -1 (InitialDevice) in data-op callbacks.
//
// # Which construct: ompt_get_target_info without thread-local storage
//
// Go has no goroutine-local storage. Each construct scope records which
// goroutine dispatched its latest event: getg, one load of the g register
// in assembly on amd64 and arm64, or a parse of the stack header
// elsewhere. In-progress constructs sit in a lock-free table.
// ompt_get_target_info and ompt_get_state answer for the most recently
// begun construct whose latest event was dispatched on the calling
// goroutine. Inside a callback that is always the construct of the event
// being dispatched, including for nowait constructs whose work continues
// on another goroutine. Between events, the goroutine that dispatched the
// latest event is "in" the construct. Outside any construct, or for a
// device memory routine (which is no construct), it reports false. The
// host_op_id it reports is that of the operation in flight, and 0
// between operations.
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
//     callbacks return 0 and do nothing.
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
//     never dispatches them.
//   - Nowait constructs report the *_nowait target kinds and the *_async
//     data-op kinds (the OpenMP names for them); their target_task_data
//     is a real slot. LLVM's offload runtime (its tests, LLVM 19) reports
//     deferred target tasks with the synchronous kinds.
//   - A non-EMI target_data_op is dispatched once, after the operation,
//     with every argument final (an alloc's device address); a non-EMI
//     target_submit once, before the launch.
//   - Operations gompt does not make produce no events (no implicit
//     zero-length maps, no transfers for present items unless always).
//
// With no tool active, TargetBegin and RoutineBegin do one atomic load and
// return nil. Every method of a nil *Target returns at once, and nothing
// is allocated (tested with testing.AllocsPerRun). With tools, dispatch
// allocates nothing: a construct's scope is a Target that lives in the
// table get_target_info searches, taken with one compare-and-swap and
// freed with one store, and its host_op_ids come from a block of ids it
// takes 64 at a time. Callbacks run synchronously on the goroutine that
// causes the event. A Go callback that panics is recovered: its tool is
// detached (no callback reaches it any more), stderr says why, and the
// program goes on. A C tool's target callbacks (ompt/cabi; the events of
// every construct) are called without that recover, which costs about
// 8 ns per callback and which a panic could not cross C frames to reach
// anyway; its device callbacks, rare, keep it.
package ompt
