package device

import "unsafe"

// NativeKind names the layout of a plugin's native trace record.
type NativeKind uint8

// Native record kinds, one per plugin family, each with its Go type
// below: the one definition of the record that the plugin fills, the
// runtime hands on as bytes and a tool reads (ompt_record_native's
// payload).
const (
	NativeNone   NativeKind = iota
	NativeHost              // HostRecord
	NativeOpenCL            // OpenCLRecord
	NativeCUDA              // CUDARecord
)

// HostRecord is the native record of the host offload device
// (device/host): the interval, on the host device's clock (Device.Now,
// ns), during which the operation ran, and the queue that ran it.
type HostRecord struct {
	Start, End int64
	Queue      uint64 // the queue's number on its device (1, 2, ...)
}

// OpenCLRecord is the native record of the OpenCL plugin: the four
// CL_PROFILING_COMMAND_* counters of the operation's event (device ns, as
// clGetEventProfilingInfo reports them).
type OpenCLRecord struct {
	Queued, Submit, Start, End uint64
}

// CUDARecord is the native record of the CUDA plugin: the operation's
// interval from the CUDA events around it (device ns on the plugin's
// clock), and the stream and context it ran on (CUstream, CUcontext
// values, as identifiers only).
type CUDARecord struct {
	Start, End      uint64
	Stream, Context uint64
}

func (HostRecord) nativeKind() NativeKind   { return NativeHost }
func (OpenCLRecord) nativeKind() NativeKind { return NativeOpenCL }
func (CUDARecord) nativeKind() NativeKind   { return NativeCUDA }

// NativeRecord is the set of native record types.
type NativeRecord interface {
	HostRecord | OpenCLRecord | CUDARecord
	nativeKind() NativeKind
}

// Native is a plugin's own record of one operation, for device tracing.
type Native struct {
	Kind NativeKind
	rec  [4]uint64 // the record of type Kind, as its Native method stored it
	Type string    // a short constant name: "host copy in", "opencl kernel"
	HWID uint64    // where it ran: queue, stream or compute unit; 0 if none
	// Teams is, for a launch, the number of teams the device ran; 0 if
	// unknown.
	Teams int
}

// Native returns the Native that carries r, with the operation's type
// name, where it ran and, for a launch, the teams it ran.
func (r HostRecord) Native(typ string, hwid uint64, teams int) Native {
	n := Native{Kind: NativeHost, Type: typ, HWID: hwid, Teams: teams}
	*(*HostRecord)(unsafe.Pointer(&n.rec)) = r
	return n
}

// Native returns the Native that carries r (see HostRecord.Native).
func (r OpenCLRecord) Native(typ string, hwid uint64, teams int) Native {
	n := Native{Kind: NativeOpenCL, Type: typ, HWID: hwid, Teams: teams}
	*(*OpenCLRecord)(unsafe.Pointer(&n.rec)) = r
	return n
}

// Native returns the Native that carries r (see HostRecord.Native).
func (r CUDARecord) Native(typ string, hwid uint64, teams int) Native {
	n := Native{Kind: NativeCUDA, Type: typ, HWID: hwid, Teams: teams}
	*(*CUDARecord)(unsafe.Pointer(&n.rec)) = r
	return n
}

// Bytes returns the bytes of n's record (nil for NativeNone), which alias
// n: what the runtime hands the tools.
func (n *Native) Bytes() []byte {
	var size uintptr
	switch n.Kind {
	case NativeHost:
		size = unsafe.Sizeof(HostRecord{})
	case NativeOpenCL:
		size = unsafe.Sizeof(OpenCLRecord{})
	case NativeCUDA:
		size = unsafe.Sizeof(CUDARecord{})
	default:
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&n.rec)), size)
}

// RecordOf returns n's record if it is of type R.
func RecordOf[R NativeRecord](n Native) (r R, ok bool) {
	if n.Kind != r.nativeKind() {
		return r, false
	}
	return *(*R)(unsafe.Pointer(&n.rec)), true
}

// The records fit Native's words.
var (
	_ [32 - unsafe.Sizeof(HostRecord{})]byte
	_ [32 - unsafe.Sizeof(OpenCLRecord{})]byte
	_ [32 - unsafe.Sizeof(CUDARecord{})]byte
)

// Profiler is an optional interface of a Queue that times its own
// operations with the device's clock, as OpenCL event profiling or CUDA
// events do. The runtime uses it only while a tool traces the device;
// without it, the runtime brackets operations with Record events.
type Profiler interface {
	// Profile starts (on) or stops (off) timing of the operations
	// enqueued from now on. Off costs nothing per operation.
	Profile(on bool)
	// Last returns the timing of the operation enqueued last (CopyIn,
	// CopyOut, Copy or Launch) while profiling was on. Its methods may
	// wait for the operation to complete.
	Last() Timing
}

// Timing is the device's timing of one operation.
type Timing interface {
	// Times waits for the operation and returns its begin and end on
	// the device clock (Device.Now nanoseconds) and the plugin's native
	// record, or the operation's error.
	Times() (begin, end int64, native Native, err error)
}

// ReadyTiming is an optional interface of a Timing: Ready reports, without
// waiting, whether Times would return at once (the operation has
// completed, as one a queue ran inline has). The runtime then writes the
// operation's record at once instead of keeping it until the construct's
// queue syncs.
type ReadyTiming interface {
	Ready() bool
}
