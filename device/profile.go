package device

// NativeKind names the layout of a plugin's native trace record.
type NativeKind uint8

// Native record kinds, one per plugin family. The tools interface (package
// ompt) documents each as a Go type: HostNative, OpenCLNative, CUDANative.
const (
	NativeNone   NativeKind = iota
	NativeHost              // Words: start, end (device ns), queue number
	NativeOpenCL            // Words: CL_PROFILING_COMMAND_QUEUED, SUBMIT, START, END
	NativeCUDA              // Words: start, end (device ns), CUstream, CUcontext
)

// Native is a plugin's own record of one operation, for device tracing.
type Native struct {
	Kind  NativeKind
	Words [4]uint64
	Type  string // a short constant name: "host copy in", "opencl kernel"
	HWID  uint64 // where it ran: queue, stream or compute unit; 0 if none
	Teams int    // for a launch, the number of teams the device ran; 0 if unknown
}

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
