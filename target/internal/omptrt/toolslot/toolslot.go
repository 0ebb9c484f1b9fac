// Package toolslot gives a tool face of the engine (target/internal/cabi, which
// must hand a C tool C memory for its target_data, target_task_data and
// host_op_id) one word of its own beside each per-tool slot of a
// construct. ompt lays every tool's target_data slot out next to a word
// that the core never clears when the construct ends, so memory a face
// hangs there is reused by the next construct that gets the same slots;
// and it calls Free for a word whose slots it drops.
package toolslot

import "unsafe"

// Offset is the distance in bytes from a target_data slot (the *ompt.Data
// an EMI callback gets as targetData inside a construct) to its word. Set
// by the engine (target/internal/omptrt) when it is initialized.
var Offset uintptr

// TargetTaskOffset is the distance from a construct's target_task_data
// slot (task_create's new_task_data, task_schedule's target task) to the
// same word.
var TargetTaskOffset uintptr

// Free, if set (by the face that uses the words), releases a non-nil
// word's memory when ompt drops the slots it belongs to.
var Free func(unsafe.Pointer)

// Word returns the word beside targetData, which must be a target_data
// slot that ompt passed to an EMI callback of a construct (never nil,
// never a Data of the tool's own).
func Word(targetData unsafe.Pointer) *unsafe.Pointer {
	return (*unsafe.Pointer)(unsafe.Add(targetData, Offset))
}

// The hooks below let the core read and reset the ids a face keeps in a
// word's memory (target/internal/cabi keeps a C tool's target_data and host_op_id
// there, where the C tool writes them). All may be nil.
var (
	// IDs returns the target_data value and host_op_id a word holds, 0
	// where the tool left none. The core asks it only for the tool whose
	// face hung the word (ompt's native tools: the C tool), for
	// ompt_get_target_info and the trace records delivered to that tool.
	IDs func(word unsafe.Pointer) (targetData, hostOpID uint64)
	// SetOp stores the runtime's host_op_id of a new operation in a
	// word's host_op_id, before the operation's begin event.
	SetOp func(word unsafe.Pointer, hostOpID uint64)
	// Reset zeroes a word's slots when their construct (or device memory
	// routine) ends, so the next one that reuses them starts as
	// ompt_data_none.
	Reset func(word unsafe.Pointer)
)

// Thread slots. ompt keeps, for each OpenMP thread (an OS thread that
// entered gompt) and each tool, its thread_data, the initial task's
// task_data and the implicit parallel region's parallel_data, with a word
// beside them that a face fills for its tools (target/internal/cabi: C memory that a
// C tool may keep pointers to).
var (
	// ThreadOffset, TaskOffset and ParallelOffset are the distances in
	// bytes from a thread's thread_data, task_data and parallel_data slot
	// (as ompt passes them to callbacks and entry points) to its word.
	ThreadOffset, TaskOffset, ParallelOffset uintptr
	// NewThread, if set, makes the word of a native tool's slots of a new
	// thread; it is never freed (threads are never forgotten).
	NewThread func() unsafe.Pointer
	// ResetThread, if set, zeroes a word's thread slots when the life of
	// their OpenMP thread ends (after its thread_end), so the next life
	// starts as ompt_data_none.
	ResetThread func(word unsafe.Pointer)
)

// ThreadWord returns the word of the thread slots that p (a slot of the
// kind whose offset is off: ThreadOffset, TaskOffset, ParallelOffset)
// belongs to.
func ThreadWord(p unsafe.Pointer, off uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(p, off))
}
