// Package device is the contract between the gompt runtime and its device
// plugins, as database/sql/driver is between database/sql and its drivers.
//
// A plugin registers itself from its init function with RegisterPlugin:
// its name, its place in the default order, the kinds of kernel image it
// runs, its native trace record type (RegisterNative) and its environment
// variables, so that the shared layers name no plugin. The runtime
// (package target) asks each plugin for its devices on first use; a
// plugin that finds no driver or no device returns an error saying why,
// and has zero devices. Plugins build their devices on package
// device/generic, which keeps the bookkeeping of this contract. Users
// never import this package for offloading; they import target.
//
// Division of work: the runtime does the bookkeeping (mapping tables,
// reference counts, OMPT callbacks, ids and trace records); a plugin only
// allocates, copies, launches and timestamps. Extra abilities are optional
// interfaces a Device or Queue may implement, found by type assertion
// (MemInfo, Closer, Profiler, Idler, Waiter, CheckedLauncher, Aliaser).
package device

import (
	"strconv"
	"strings"
)

// DevicePtr is an address in a device's memory. It is never converted to
// unsafe.Pointer on the Go side: only the plugin that made it may interpret
// it. Zero is never a valid allocation.
type DevicePtr uintptr

// String formats p as hexadecimal.
func (p DevicePtr) String() string { return "0x" + strconv.FormatUint(uint64(p), 16) }

// Plugin is one backend: host, cuda, opencl.
type Plugin interface {
	// Devices loads the driver on the first call and returns the devices
	// it found, in a stable order. With no driver, no platform or no
	// usable device it returns no devices and an error (wrapping
	// ErrNoDevice) that says why, in words a user can act on. Later calls
	// return the same result. Safe for concurrent use.
	Devices() ([]Device, error)
}

// Device is one offload device. All methods are safe for concurrent use.
type Device interface {
	// Info describes the device. It does not change after Devices returns.
	Info() Info

	// Alloc allocates size bytes of device memory (size > 0). The memory
	// is not initialised. Errors: CodeInvalidArgument for size <= 0 or
	// above Info().MaxAlloc, CodeOutOfResources when memory is exhausted.
	Alloc(size int) (Buffer, error)

	// Free releases a buffer returned by Alloc. Freeing a pointer that is
	// not a live allocation (twice, or never allocated) is an error
	// (CodeInvalidArgument) and changes nothing.
	Free(p DevicePtr) error

	// NewQueue returns a new in-order asynchronous queue on the device.
	NewQueue() (Queue, error)

	// Load prepares k for launching on this device, choosing the image
	// the device runs (building or JIT-compiling it once; later calls for
	// the same *Kernel return the cached result). A kernel with no image
	// for this device gives CodeInvalidBinary naming the kernel, the
	// device and the image kinds it has; a build failure gives
	// CodeInvalidBinary with the full build log.
	Load(k *Kernel) (Function, error)

	// Now reads the device clock in nanoseconds. It is monotonic per
	// device; its epoch is the device's own.
	Now() (int64, error)
}

// Buffer is one device allocation.
type Buffer struct {
	Ptr  DevicePtr
	Size int
}

// Function is a kernel loaded on one device, ready to launch.
type Function interface {
	// Kernel returns the kernel it was loaded from.
	Kernel() *Kernel
	// Image returns the image the device chose.
	Image() ImageKind
	// Bytes is the size of the loaded image (source, PTX or binary), for
	// the OMPT device_load event; > 0.
	Bytes() int
}

// Queue is an in-order asynchronous queue of device operations. Operations
// start in the order they are enqueued; an enqueue may return before the
// operation completes. Host memory passed to CopyIn and CopyOut must stay
// alive and unmodified (CopyIn) or unread (CopyOut) until a later Sync or
// Event.Wait on the queue returns; the plugin pins it as it needs. An error
// of an operation that failed asynchronously is returned by the next Sync
// or Wait. A queue is used by one goroutine at a time.
type Queue interface {
	// CopyIn copies len(src) bytes from host memory to dst.
	CopyIn(dst DevicePtr, src []byte) error
	// CopyOut copies len(dst) bytes from src to host memory.
	CopyOut(dst []byte, src DevicePtr) error
	// Copy copies n bytes between two locations of this device. The
	// ranges may overlap (within one allocation): the copy is then as
	// memmove would make it, and dst == src copies nothing
	// (generic.Move does it for a plugin whose driver cannot).
	Copy(dst, src DevicePtr, n int) error
	// Launch runs f over shape with args (one per kernel parameter).
	Launch(f Function, shape Shape, args []Arg) error
	// Record returns an event that completes when every operation
	// enqueued so far has completed.
	Record() (Event, error)
	// Sync waits for every operation enqueued so far and returns the
	// first error among them.
	Sync() error
	// Release waits for the queue's work and releases it.
	Release() error
}

// Event marks a point in a queue.
type Event interface {
	// Wait blocks until the event has completed and returns the error of
	// the queue's work up to it, if any.
	Wait() error
	// Time returns the device time (as Device.Now) at which the event
	// completed; it waits for completion.
	Time() (int64, error)
}

// Info describes a device. Fields a backend cannot tell are zero.
type Info struct {
	Name          string // "NVIDIA H100 80GB HBM3", "pthread-AMD EPYC", "gompt host device"
	Vendor        string
	Backend       string // plugin name: "host", "cuda", "opencl"
	Type          string // "gpu", "cpu", "accelerator"
	Version       string // device or API version
	DriverVersion string

	GlobalMem         uint64 // bytes
	LocalMem          uint64 // bytes of team-shared memory
	MaxAlloc          uint64 // largest single allocation, bytes
	ComputeUnits      int    // SMs, compute units, or worker goroutines
	MaxThreadsPerTeam int    // largest team (work-group, block)
	MaxTeams          int    // largest number of teams in one launch; 0 if unbounded
	ClockMHz          int
	TimerResolutionNS float64 // device clock resolution
	UnifiedMemory     bool    // host and device share memory

	// Caps says what kernels may use on the device (float64, 64-bit
	// atomics, team-local memory, team size); Load refuses a kernel whose
	// Needs it cannot meet.
	Caps Caps

	// TimeSource names the clock of the device's times (Now, Event.Time,
	// Timing.Times): "CLOCK_MONOTONIC_RAW (the profiling timer runs on
	// it)". "" where it is known only once the device is open (Describer).
	TimeSource string
	// BracketTimes is set where those times are host clock readings that
	// bracket each operation rather than the device's own (its driver's
	// event times are unusable): an operation began no earlier than its
	// begin and ended no later than its end, and ends and event times
	// follow queue order, but a begin may precede the end of the
	// operation before it on its queue.
	BracketTimes bool

	// Extra holds backend-specific facts in a stable order (UUID, PCI
	// bus id, compute capability, extensions).
	Extra []Attr
}

// Describer is implemented by devices that learn some of their Info only
// when they open: where their times come from (TimeSource, BracketTimes),
// or limits they find by probing. Describe opens the device if it is not
// open yet (an error if it cannot) and returns its Info with what it
// learned. Safe for concurrent use.
type Describer interface {
	Describe() (Info, error)
}

// Attr is one named backend-specific fact.
type Attr struct {
	Key, Value string
}

// MemInfo is implemented by devices that account for their memory, so tests
// and tools can check that nothing leaks.
type MemInfo interface {
	// MemInUse returns the bytes and number of live allocations made
	// through Alloc and not yet freed.
	MemInUse() (bytes int64, allocs int)
}

// Idler is implemented by queues that can tell cheaply, without a driver
// call, that every operation enqueued on them has completed and none
// failed since the last Sync (a failure Sync has not returned yet makes
// the queue not idle). The runtime asks before it records an event for
// another queue to wait on: an idle queue needs none, as its work is done
// and did not fail. Called by the goroutine using the queue.
type Idler interface {
	Idle() bool
}

// Waiter is implemented by queues that can order their later operations
// after an event of another queue of the same device on the device itself
// (cuStreamWaitEvent, clEnqueueBarrierWithWaitList), so the goroutine
// using the queue does not block. WaitEvent enqueues the wait and reports
// true; it reports false, changing nothing, for an event it cannot wait
// for there (another device's, another plugin's, or one whose Wait still
// has host work to do, such as the cuda plugin's deferred copies out),
// which the caller then waits for itself. If the work before ev failed, the queue's work after
// the wait still runs (or fails, as the driver decides) and the next Sync
// returns an error; ev.Wait returns the failure itself. Called by the
// goroutine using the queue.
type Waiter interface {
	WaitEvent(ev Event) (bool, error)
}

// CheckedLauncher is implemented by queues that can launch without checking
// again what the runtime checked before the construct began. The runtime
// calls LaunchChecked in place of Launch when a queue has it; every other
// caller of a queue gets Launch's own checks.
type CheckedLauncher interface {
	// LaunchChecked is Launch for a caller that has checked, for this
	// device and kernel, that shape passes Shape.Check and is within the
	// device's Info (MaxTeams, MaxThreadsPerTeam) and the kernel's
	// MaxThreads, that there is one argument per parameter, and that no
	// buffer argument is a nil pointer. f must come from Load on the
	// queue's device (a Function of another is still refused, as are
	// pointers the device does not know). shape is read during the call
	// only: passing it by pointer spares the launch path copies of a
	// 40-byte value, which cost more than the rest of a host launch.
	LaunchChecked(f Function, shape *Shape, args []Arg) error
}

// PeerCopier is implemented by queues that copy from the memory of another
// device of their plugin straight into their own device's memory, without
// a copy through the program's memory (cuMemcpyPeerAsync over NVLink or
// PCIe; a memmove between two host devices). CopyPeer enqueues a copy of n
// bytes from srcPtr on src to dst on the queue's device, ordered as the
// queue's other copies; the source must not change until the queue's next
// Sync or Wait returns. A src of another plugin is an error
// (CodeInvalidArgument). The runtime uses it for omp_target_memcpy between
// two devices of one plugin, and stages through host memory otherwise.
// Called by the goroutine using the queue.
type PeerCopier interface {
	CopyPeer(dst DevicePtr, src Device, srcPtr DevicePtr, n int) error
}

// Aliaser is implemented by devices that can give kernels the program's
// memory itself (a device that shares the host's memory: a CPU, an
// integrated GPU). Alias returns an allocation of len(b) bytes that is b:
// kernels launched with it read and write b's bytes in place, and what
// the host writes to b is what they read. The runtime uses it only where
// the program asked for unified-memory semantics (GOMPT_ZERO_COPY). The
// plugin keeps b pinned until Free releases the allocation, which
// releases nothing of b; the caller keeps b alive until then, and sees a
// kernel's writes in b once a Sync or Wait after the launch returns.
// Reported false, with a nil error, where the device cannot use b in
// place (no shared memory, a driver that would copy, a size it refuses):
// the caller allocates and copies instead. Safe for concurrent use.
type Aliaser interface {
	Alias(b []byte) (buf Buffer, ok bool, err error)
}

// Closer is implemented by devices that hold driver resources to release
// at runtime shutdown.
type Closer interface {
	Close() error
}

// ID formats a device id as the runtime and ompt-devinfo show it: the plugin
// name and the device's number within that plugin, "host:0".
func ID(plugin string, n int) string { return plugin + ":" + strconv.Itoa(n) }

// NoDevice returns the error of a plugin that has no device: it matches
// ErrNoDevice (errors.Is), wraps the reason, and reads "cuda: no device:
// <reason>", with the plugin's name once even when the reason begins with
// it.
func NoDevice(plugin string, reason error) error {
	return &noDeviceError{plugin, reason}
}

type noDeviceError struct {
	plugin string
	reason error
}

func (e *noDeviceError) Error() string {
	s := e.plugin + ": no device"
	if e.reason != nil {
		s += ": " + strings.TrimPrefix(e.reason.Error(), e.plugin+": ")
	}
	return s
}

func (e *noDeviceError) Is(target error) bool { return target == ErrNoDevice }
func (e *noDeviceError) Unwrap() error        { return e.reason }
