// Package opencl is the gompt device plugin for OpenCL: every device of
// every OpenCL platform on the machine (CPUs through POCL, NVIDIA GPUs
// through NVIDIA's OpenCL, others through the ICD loader) becomes an offload
// device. The driver is loaded at run time from libOpenCL.so.1, or from the
// path in GOMPT_OPENCL_LIBRARY; nothing OpenCL-related is needed to build
// it, and a build without cgo reports zero devices.
//
// Importing the package registers the plugin as "opencl":
//
//	import _ "github.com/gompt/gompt/device/opencl"
//
// Memory. A cl_mem is a handle, not an address, so each device has a
// synthetic address space: device.DevicePtr values are base+offset into it,
// translated back to (cl_mem, offset) in O(log n). Copies take interior
// pointers freely. A kernel argument must be a buffer's base, or an interior
// pointer whose offset is a multiple of the device's
// CL_DEVICE_MEM_BASE_ADDR_ALIGN (it is then passed as a sub-buffer, made
// at its first launch and kept until the buffer is freed); OpenCL 1.2
// kernels take only cl_mem objects, so any other interior pointer goes
// through a temporary buffer copied in before and back after the kernel.
//
// Capabilities. Info.Caps reports cl_khr_fp64, cl_khr_int64_base_atomics,
// CL_DEVICE_LOCAL_MEM_SIZE and CL_DEVICE_MAX_WORK_GROUP_SIZE; a kernel
// whose Needs they do not meet is refused at load (generic.Device), and
// one whose built form asks more than the device gives it (a team larger
// than its CL_KERNEL_WORK_GROUP_SIZE, more than CL_KERNEL_LOCAL_MEM_SIZE
// of local memory) is refused by build, still before any copy. A
// kernel's CL_KERNEL_WORK_GROUP_SIZE is trusted unless a probe shows it
// false on the driver (groups.go: rusticl's 32).
//
// Launches. Each queue has its own cl_kernel of each kernel, made at its
// first launch there, so queues launch one kernel concurrently without a
// lock. A team kernel (Kernel.TeamSize) runs groups of exactly its team
// size. Otherwise the NDRange follows the kernel's limits on the device
// (CL_KERNEL_WORK_GROUP_SIZE, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE):
// work-groups are multiples of the preferred multiple, two-dimensional for
// 2-D and 3-D shapes (32 wide on GPUs, as wide as the shape on CPUs), and
// with Teams 0 one work-item per index up to 2^30 work-items; with Teams set
// there are exactly Teams work-groups, spread over the shape's dimensions.
// Every global size stays below 2^31. See geometry in plan.go.
//
// Queues are in-order OpenCL command queues with profiling enabled. CopyIn
// and CopyOut are non-blocking; the host slice is pinned (runtime.Pinner)
// and referenced by the queue until a Sync, or the Wait of an event recorded
// after it, returns. On devices that stage (GPUs; GOMPT_OPENCL_STAGING
// overrides), copies of 256 KiB and more go through a ring of mapped
// CL_MEM_ALLOC_HOST_PTR buffers instead, chunked and pipelined as in the
// CUDA plugin: such a CopyIn returns once the slice is no longer needed, a
// CopyOut once the slice holds the data (staging.go).
//
// Waits. On CPU devices the plugin waits with clWaitForEvents and
// clFinish; on others (GOMPT_OPENCL_WAIT overrides), whose drivers may
// busy-wait a core per wait (NVIDIA's do), it polls an event's status for
// 20 us and then blocks the goroutine until the driver's event callback,
// polling with backoff in case the callback never comes (wait.go).
//
// Time. Device time is the clock of the device's event profiling counters
// (CL_PROFILING_COMMAND_*), so Device.Now, Event.Time and the queue's
// Profiler timings are on one clock and need no conversion. Device.Now
// reads it the cheapest exact way: where the counters run on a host clock
// (POCL's CPU devices stamp with CLOCK_MONOTONIC_RAW; checked at first use
// by bracketing timestamp commands with readings of CLOCK_MONOTONIC_RAW,
// CLOCK_MONOTONIC and CLOCK_REALTIME), that clock, about 200 ns a reading
// (BenchmarkNow); else clGetDeviceAndHostTimer where the platform is
// OpenCL 2.1 or newer and reports a host timer resolution; else (NVIDIA's
// OpenCL: host timer resolution 0) CLOCK_MONOTONIC mapped through a line
// fitted to timestamp commands on an idle internal queue, at first use and
// again in the background every half second while Now is in use: each
// fit keeps the narrowest of five host-clock brackets around a command's
// END, so a reading is off by at most half of it (11-25 us wide on POCL),
// and the slope is measured once the fits span two seconds (clock.go).
// The runtime fits host/device translation from paired Now and host
// readings. Event times are CL_PROFILING_COMMAND_END of a marker; drivers
// whose markers carry no profiling times, or times out of order
// (QUEUED <= SUBMIT <= START <= END, checked at first use), get an empty
// kernel instead. A driver whose kernels carry no usable times either
// (rusticl) still runs everything: its device time is then the host's
// CLOCK_MONOTONIC, and each operation's times are host readings that
// bracket it (hosttimes.go; Info.BracketTimes from Describe). A device
// that fails to open releases what its opening made, so that Close (at
// Shutdown) releases nothing twice.
//
// Tracing. The queues implement device.Profiler: while profiling is on,
// each CopyIn, CopyOut, Copy and Launch keeps its command's own cl_event,
// and its timing reports CL_PROFILING_COMMAND_START and END as begin and
// end, with the four counters as the native record (Record;
// Type "opencl write", "opencl read", "opencl copy" or "opencl kernel",
// HWID the queue's number, Teams the work-groups of a launch). The events
// are released when the timing is read, or at the queue's next Sync or
// Release.
package opencl

import (
	"fmt"
	"strings"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/generic"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// Name is the plugin's registered name.
const Name = "opencl"

// The plugin's environment variables, besides cl.LibraryEnv
// (GOMPT_OPENCL_LIBRARY, the ICD loader to load).
const (
	stagingEnv = "GOMPT_OPENCL_STAGING" // stage large copies: auto, on or off (staging.go)
	waitEnv    = "GOMPT_OPENCL_WAIT"    // how to wait: auto, callback or driver (wait.go)
	codeEnv    = "GOMPT_OPENCL_CODE"    // generated kernels' code paths: auto, cpu or gpu (kernel.go)
)

// ImageC is the kind of kernel image an OpenCL device runs: OpenCL C
// source (Image.Source), built by the driver for each device on first use
// with the image's Options. gompt-kernels writes one for every kernel.
const ImageC device.ImageKind = "opencl-c"

// images are the kinds of kernel image an OpenCL device runs.
var images = []device.ImageKind{ImageC}

// The plugin loads the OpenCL library on the first call of Devices and
// returns every device of every platform, in platform order.
func init() {
	device.RegisterPlugin(device.Registration{
		Name: Name, Plugin: generic.NewPlugin(Name, load),
		Order:  20, // after cuda, before host
		Images: images,
		Native: RecordKind,
		Env: []device.EnvVar{
			{Name: cl.LibraryEnv, Accepts: "the path of an OpenCL ICD loader (libOpenCL.so.1)", Default: "libOpenCL.so.1", Library: true},
			{Name: stagingEnv, Accepts: "auto, on or off", Default: "auto", Check: autoCheck("on", "off")},
			{Name: waitEnv, Accepts: "auto, callback or driver", Default: "auto", Check: autoCheck("callback", "driver")},
			{Name: codeEnv, Accepts: "auto, cpu or gpu", Default: "auto", Check: autoCheck("cpu", "gpu")},
		},
	})
}

// autoCheck is the Check of a setting that takes auto or one of a and b.
func autoCheck(a, b string) func(string) bool {
	return func(v string) bool {
		switch strings.TrimSpace(v) {
		case "", "auto", a, b:
			return true
		}
		return false
	}
}

// Record is the OpenCL plugin's native trace record (RecordKind): the four
// CL_PROFILING_COMMAND_* counters of the operation's event (device ns, as
// clGetEventProfilingInfo reports them).
type Record struct {
	Queued, Submit, Start, End uint64
}

// RecordKind is the kind of Record, the OpenCL plugin's native records.
var RecordKind = device.RegisterNative[Record](Name, func(r Record, _ device.Native) error {
	if r.Queued == 0 || r.Queued > r.Submit || r.Submit > r.Start || r.Start > r.End {
		return fmt.Errorf("counters out of order: queued %d, submit %d, start %d, end %d", r.Queued, r.Submit, r.Start, r.End)
	}
	return nil
})

// Native returns the device.Native that carries r, with the operation's
// type name, where it ran and, for a launch, the teams it ran.
func (r Record) Native(typ string, hwid uint64, teams int) device.Native {
	return device.NewNative(RecordKind, r, typ, hwid, teams)
}

// Profile holds the OpenCL profiling counters of the command behind an
// event (a marker, or the empty kernel), in device nanoseconds: the
// plugin's native trace record (EventProfile).
type Profile struct {
	Queued, Submit, Start, End int64
}
