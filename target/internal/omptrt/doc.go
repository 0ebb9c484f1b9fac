// Package omptrt is the engine behind package ompt: it starts the tools
// RegisterTool and the Finders (target/internal/cabi's C search) name, dispatches
// the target and device events to them, keeps each construct's scope
// (Target) for ompt_get_target_info, records and delivers device traces,
// and maps device clocks onto ompt.Wtime. Package target drives it
// (RUNTIME.md gives the exact calls, construct by construct); target/internal/cabi
// uses it to serve C tools. Tool authors read package ompt.
//
// Files, by concern: start.go (tool start-up and shutdown), entry.go (the
// host entry points), device.go (device events and device entry points),
// clock.go (the clock fit), target.go (construct scopes and dispatch),
// threads.go, holds_*.go, goroutine_*.go, tid_*.go, procid_*.go (OpenMP threads over
// goroutines), and device tracing: trace.go (a device's tracer and the
// table of tracing devices), trace_ring.go (the ring's entries: each
// record's encoder beside its decoder, with named word offsets),
// trace_stage.go (a construct's staged records), trace_op.go (TracedOp:
// an operation's record), trace_deliver.go (the delivery goroutine),
// trace_live.go (the buffers being filled), trace_entry.go (the tracing
// entry points), native.go (native record type names).
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
// With no tool active, TargetBegin and RoutineBegin do one atomic load and
// return nil. Every method of a nil *Target returns at once, and nothing
// is allocated (tested with testing.AllocsPerRun). With tools, dispatch
// allocates nothing: a construct's scope is a Target that lives in the
// table get_target_info searches, taken with one compare-and-swap and
// freed with one store, and its host_op_ids come from a block of ids it
// takes 64 at a time; the construct's goroutine holds its OS thread
// (runtime.LockOSThread, a few ns), finds the thread's record in a
// lock-free table and counts its hold there: the outermost hold is the
// OpenMP thread's life (threads.go), whose thread_begin and thread_end
// come on that thread. Callbacks run synchronously on the goroutine that
// causes the event. A Go callback that panics is recovered: its tool is
// detached (no callback reaches it any more), stderr says why, and the
// program goes on. A C tool's target callbacks (target/internal/cabi; the events of
// every construct) are called without that recover, which costs about
// 8 ns per callback and which a panic could not cross C frames to reach
// anyway; its device callbacks, rare, keep it.
package omptrt
