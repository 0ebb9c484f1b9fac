// Package cuda is the gompt device plugin for NVIDIA GPUs, through the CUDA
// driver API loaded at run time (libcuda.so.1, or $GOMPT_CUDA_LIBRARY), so
// one binary runs on machines with and without a GPU. It registers itself as
// "cuda"; programs import it for its side effect, and the runtime asks it
// for devices.
//
// Each GPU is one device, used through its primary context. Device memory is
// a caching allocator over cuMemAlloc; queues are non-blocking streams;
// kernels are PTX images JIT-compiled by the driver once per device; device
// time comes from CUDA events anchored to the host clock.
//
// Copies of Go memory, which the driver sees as pageable, do not wait for
// the work before them in their queue: below 256 KiB they go through a
// page-locked bounce ring of the queue's, and a small CopyOut writes its
// slice only at the queue's next Sync, the Wait of an event recorded after
// it, or when the ring comes round (see bounce.go); larger ones are
// pipelined through the device's page-locked staging buffers in chunks
// sized to the copy (see plan.go). Queues implement device.PeerCopier with
// cuMemcpyPeerAsync, so omp_target_memcpy between two GPUs does not pass
// through the program's memory.
//
// The queues implement device.Waiter with cuStreamWaitEvent (an optional
// entry point: without it they decline, and the runtime waits on the
// host): a queue waits on the device for an event of another queue of
// the same device, except one recorded after small CopyOuts whose slices
// are not yet written, whose Wait must write them before dependent work
// reads them (see queue.WaitEvent).
//
// Tracing. The queues implement device.Profiler: while profiling is on,
// each CopyIn, CopyOut, Copy and Launch is bracketed by two pooled CUDA
// events recorded on its stream, and its timing reports their device times
// (the clock of Device.Now) as begin and end, with the native record
// Record {start, end, CUstream, CUcontext} (Type "cuda memcpy
// HtoD", "cuda memcpy DtoH", "cuda memcpy DtoD" or "cuda kernel", HWID the
// queue's number on its device, Teams the blocks of a launch's grid). The
// events go back to the pool when the timing is read, or at the queue's
// next Sync or Release.
//
// With no driver, no GPU, a driver older than CUDA 10.0, or a build without
// cgo, Devices returns no devices and an error saying why.
package cuda

import (
	"errors"
	"fmt"

	"github.com/gompt/gompt/device"
)

// Name is the plugin's registered name.
const Name = "cuda"

// EnvLibrary names the environment variable that overrides the driver
// library's path.
const EnvLibrary = "GOMPT_CUDA_LIBRARY"

// EnvSched names the environment variable that chooses how a thread
// waiting for a GPU waits: auto, spin, yield or blocking
// (CU_CTX_SCHED_AUTO, _SPIN, _YIELD, _BLOCKING_SYNC). Unset, the plugin
// does as LLVM's: blocking sync, so a waiting goroutine's thread sleeps
// instead of spinning a core. Either way the flags are set only when the
// device's primary context is not active yet (nothing else in the process
// uses it); an active one is left as it is. Info.Extra says which.
const EnvSched = "GOMPT_CUDA_SCHED"

// schedNames are the values of EnvSched.
var schedNames = []string{"auto", "spin", "yield", "blocking"}

// ImagePTX is the kind of kernel image a GPU runs: PTX text
// (Image.Source), JIT-compiled by the driver once per device.
// gompt-kernels writes one for every kernel (clang-19 and libclc make it
// from the kernel's OpenCL C).
const ImagePTX device.ImageKind = "ptx"

// images are the kinds of kernel image a GPU runs.
var images = []device.ImageKind{ImagePTX}

func init() {
	device.RegisterPlugin(device.Registration{
		Name: Name, Plugin: newPlugin(""),
		Order:  10, // first: cuda, opencl, host
		Images: images,
		Native: RecordKind,
		Env: []device.EnvVar{
			{Name: EnvLibrary, Accepts: "the path of the CUDA driver library (libcuda.so.1)", Default: "libcuda.so.1", Library: true},
			{Name: EnvSched, Accepts: "auto, spin, yield or blocking", Default: "blocking", Check: func(v string) bool {
				for _, n := range schedNames {
					if v == n {
						return true
					}
				}
				return false
			}},
		},
	})
}

// Record is the CUDA plugin's native trace record (RecordKind): the
// operation's interval from the CUDA events around it (device ns on the
// plugin's clock), and the stream and context it ran on (CUstream,
// CUcontext values, as identifiers only).
type Record struct {
	Start, End      uint64
	Stream, Context uint64
}

// RecordKind is the kind of Record, the CUDA plugin's native records.
var RecordKind = device.RegisterNative[Record](Name, func(r Record, _ device.Native) error {
	if r.Stream == 0 || r.Context == 0 {
		return fmt.Errorf("stream %#x, context %#x: want both", r.Stream, r.Context)
	}
	return nil
})

// Native returns the device.Native that carries r, with the operation's
// type name, where it ran and, for a launch, the teams it ran.
func (r Record) Native(typ string, hwid uint64, teams int) device.Native {
	return device.NewNative(RecordKind, r, typ, hwid, teams)
}

// ErrContextLost is wrapped by the errors of every operation on a device
// after a sticky driver error (an illegal address or instruction in a
// kernel, an unspecified launch failure, a launch timeout, a device-side
// assert: the results NVIDIA documents as leaving the context unusable).
// The driver fails every later call in the context with that error, so the
// device stays unusable until the process ends; the first error is named
// beside it. Closing such a device is quiet.
var ErrContextLost = errors.New("the device must be restarted: an earlier error left its CUDA context unusable (end the process and start it again)")
