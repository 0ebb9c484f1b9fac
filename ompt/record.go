package ompt

import (
	"iter"
	"strconv"
	"unsafe"

	"github.com/gompt/gompt/internal/omptlink"
)

// Trace buffers. A buffer is memory the tool hands the runtime in its
// buffer_request callback: a []byte for a Go tool, C memory seen as a
// []byte (unsafe.Slice) for a C tool through target/internal/cabi, so both faces see
// the same bytes. The runtime writes entries into it, each starting at an
// 8-byte aligned address (the first entry at the first aligned offset of
// the buffer), one after the other:
//
//   - an OMPT entry is exactly one ompt_record_ompt_t of omp-tools.h
//     (RecordOMPT, 104 bytes on 64-bit Linux, body union at offset 32);
//   - a native entry is a 48-byte header (NativeHeaderSize) followed by
//     the plugin's native record, padded to a multiple of 8 bytes.
//
// A cursor (ompt_buffer_cursor_t) is the byte offset of an entry from the
// start of the buffer. get_record_type tells the two kinds apart by the
// first 4 bytes: an OMPT entry starts with its event number (8, 9 or 10),
// a native entry with NativeMarker.

// RecordKind is ompt_record_t: what get_record_type says about an entry.
type RecordKind int

// Record kinds, as in omp-tools.h.
const (
	RecordKindOMPT    RecordKind = 1 // ompt_record_ompt
	RecordKindNative  RecordKind = 2 // ompt_record_native
	RecordKindInvalid RecordKind = 3 // ompt_record_invalid
)

func (k RecordKind) String() string {
	switch k {
	case RecordKindOMPT:
		return "ompt_record_ompt"
	case RecordKindNative:
		return "ompt_record_native"
	case RecordKindInvalid:
		return "ompt_record_invalid"
	}
	return "ompt_record(" + strconv.Itoa(int(k)) + ")"
}

// RecordOMPT is ompt_record_ompt_t of omp-tools.h, byte for byte on 64-bit
// targets: Type at 0 (ompt_callbacks_t, int32), Time at 8, ThreadID at 16,
// TargetID at 24, and the body union (72 bytes) at 32; 104 bytes in all.
// The body is read through Target, DataOp and Kernel, according to Type.
// get_record_ompt returns a pointer into the trace buffer: valid while the
// tool owns the buffer, not to be kept after the buffer is reused.
type RecordOMPT struct {
	Type     int32  // the event: CallbackTarget, CallbackTargetDataOp or CallbackTargetSubmit
	_        uint32 // padding
	Time     uint64 // device time (ns) of the begin of the event; non-zero
	ThreadID uint64 // the OS thread id of the host thread that caused the event
	TargetID uint64 // target_id of the construct; 0 for a device memory routine
	body     [9]uint64
}

// Event returns the record's event number as a Callback.
func (r *RecordOMPT) Event() Callback { return Callback(r.Type) }

// Target returns the body of a CallbackTarget record (nil for any other).
func (r *RecordOMPT) Target() *RecordTarget {
	if r.Type != int32(CallbackTarget) {
		return nil
	}
	return (*RecordTarget)(unsafe.Pointer(&r.body))
}

// DataOp returns the body of a CallbackTargetDataOp record (nil for any
// other).
func (r *RecordOMPT) DataOp() *RecordTargetDataOp {
	if r.Type != int32(CallbackTargetDataOp) {
		return nil
	}
	return (*RecordTargetDataOp)(unsafe.Pointer(&r.body))
}

// Kernel returns the body of a CallbackTargetSubmit record (nil for any
// other).
func (r *RecordOMPT) Kernel() *RecordTargetKernel {
	if r.Type != int32(CallbackTargetSubmit) {
		return nil
	}
	return (*RecordTargetKernel)(unsafe.Pointer(&r.body))
}

// RecordTarget is ompt_record_target_t (40 bytes): one end of a target
// construct. gompt writes two records per traced construct, Endpoint
// ScopeBegin with the device time at its begin and ScopeEnd with the
// device time at its end (ompt_record_target_t has no end_time).
type RecordTarget struct {
	Kind      int32 // TargetKind
	Endpoint  int32 // Endpoint
	DeviceNum int32
	_         uint32
	TaskID    uint64 // the encountering task's id: the runtime's id of its thread's initial task
	TargetID  uint64
	CodePtr   uintptr
}

// RecordTargetDataOp is ompt_record_target_data_op_t (72 bytes).
type RecordTargetDataOp struct {
	HostOpID      uint64
	OpType        int32 // DataOpKind
	_             uint32
	SrcAddr       uintptr
	SrcDeviceNum  int32
	_             uint32
	DestAddr      uintptr
	DestDeviceNum int32
	_             uint32
	Bytes         uint64
	EndTime       uint64 // device time (ns) at the end; >= the record's Time
	CodePtr       uintptr
}

// RecordTargetKernel is ompt_record_target_kernel_t (24 bytes).
type RecordTargetKernel struct {
	HostOpID          uint64
	RequestedNumTeams uint32 // what the program asked; 0 if unspecified
	GrantedNumTeams   uint32 // what was launched
	EndTime           uint64 // device time (ns) at the end; >= the record's Time
}

// Layout constants the C face checks against omp-tools.h.
const (
	RecordOMPTSize   = int(unsafe.Sizeof(RecordOMPT{})) // sizeof(ompt_record_ompt_t): 104
	RecordBodyOffset = int(unsafe.Offsetof(RecordOMPT{}.body))
	// NativeHeaderSize is the size of the header before each native record
	// in a buffer; get_record_native returns the address just after it.
	NativeHeaderSize = omptlink.HeaderSize
	// NativeMax is the largest native record a plugin may attach (bytes).
	NativeMax = omptlink.NativeMax
	// MaxEntrySize is the largest entry gompt writes: a buffer shorter
	// than this may lose records that would fit a larger one.
	MaxEntrySize = NativeHeaderSize + NativeMax
	// NativeMarker starts every native entry (no event number is this).
	NativeMarker = omptlink.Marker // "NATV"
)

// NativeClass is ompt_record_native_t.
type NativeClass int32

// Native record classes, as in omp-tools.h.
const (
	NativeRecordInfo  NativeClass = 1 // ompt_record_native_info
	NativeRecordEvent NativeClass = 2 // ompt_record_native_event
)

// Native monitoring flags, ompt_native_mon_flag_t, for ompt_set_trace_native
// and NativeInfo.Flag.
const (
	NativeDataMotionExplicit uint32 = 0x01
	NativeDataMotionImplicit uint32 = 0x02
	NativeKernelInvocation   uint32 = 0x04
	NativeKernelExecution    uint32 = 0x08
	NativeDriver             uint32 = 0x10
	NativeRuntime            uint32 = 0x20
	NativeOverhead           uint32 = 0x40
	NativeIdleness           uint32 = 0x80
)

// RecordAbstract is the Go form of ompt_record_abstract_t: what any tool
// can learn about a native record without knowing its plugin's format.
// Times are device nanoseconds, 0 (ompt_time_none) where unknown; HWID is
// 0 (ompt_hwid_none) where there is none. Type is a short name of what
// happened ("host copy", "cuda kernel"); the C face hands C tools a
// static C string with the same text.
type RecordAbstract struct {
	Class     NativeClass
	Type      string
	StartTime uint64
	EndTime   uint64
	HWID      uint64
}

// RecordAt returns the OMPT record at cursor in buffer, or nil if there is
// none (out of range, misaligned, or another kind of entry). It is what
// ompt_get_record_ompt returns, for Go tools that hold the buffer.
func RecordAt(buffer []byte, cursor uint64) *RecordOMPT {
	if k, _ := omptlink.EntryAt(buffer, uint64(len(buffer)), cursor); RecordKind(k) != RecordKindOMPT {
		return nil
	}
	return (*RecordOMPT)(unsafe.Pointer(&buffer[cursor]))
}

// Records iterates over the entries of one completed part of a buffer, as
// buffer_complete describes it: from cursor begin up to bytes. It yields
// each entry's cursor and kind, and stops at the first invalid entry.
// For Go tools:
//
//	for cur, kind := range ompt.Records(buffer, bytes, begin) {
//		if r := ompt.RecordAt(buffer, cur); r != nil { ... }
//	}
func Records(buffer []byte, bytes, begin uint64) iter.Seq2[uint64, RecordKind] {
	return func(yield func(uint64, RecordKind) bool) {
		for cur := begin; ; {
			k, n := omptlink.EntryAt(buffer, bytes, cur)
			if RecordKind(k) == RecordKindInvalid || !yield(cur, RecordKind(k)) {
				return
			}
			cur += n
		}
	}
}
