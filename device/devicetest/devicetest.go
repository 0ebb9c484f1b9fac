// Package devicetest is the conformance suite of device plugins, in the
// manner of testing/fstest: every plugin's tests call TestDevice with a live
// device, and the host device (device/host) is the reference.
//
// Files, by concern: devicetest.go (TestDevice, the suite's order of
// subtests and what they share), info.go (the description and the clock),
// memory.go (allocation and copies, TestOverlap), order.go (chains of work
// on one queue, event times, and waits between queues: TestWaitEvent),
// kernels.go (loading kernels, their Samples and needs, bad launches),
// sample.go (a Sample run on the device and as its Go image, and the
// buffers compared), profile.go (profiled times and native records),
// concurrent.go (goroutines at once, each with its queue), helpers.go
// (queues and allocations released when a test ends, byte patterns, and
// the checks that report).
package devicetest

import (
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
)

// TestDevice checks that dev keeps the device.Device contract, as subtests:
//
//   - Info: the description is sane and stable, with capabilities (Caps)
//     and, from Describe where the device implements device.Describer,
//     where its times come from; the clock is monotonic; a device that
//     says which image kinds it runs (Images, as generic.Device does)
//     runs those its plugin registered (device.Registration.Images).
//   - Alloc: allocations of several sizes are distinct, usable and
//     accounted; bad sizes, double frees and frees of pointers never
//     allocated give CodeInvalidArgument.
//   - Copy: host to device, device to host and device to device, at offsets
//     inside buffers, of sizes 0 to 1 MiB+7, verified byte for byte,
//     including the bytes around the range; copies within one allocation
//     onto themselves and over overlapping ranges, as memmove (TestOverlap).
//   - Order: long chains of dependent copies and launches on one queue with
//     no sync in between give the result of running them in order.
//   - Events: event times are non-decreasing in queue order and lie between
//     clock readings taken before the work and after waiting for it.
//   - Kernels: each kernel loads or gives CodeInvalidBinary; each one with a
//     Sample (of no more teams than Info.MaxTeams) and a host image
//     (device.ImageHost, its Go image) runs on dev and, as that image, on
//     host copies of the same buffers (device/hostexec, the Sample's shape), and every buffer is
//     compared: float elements (per Param.Elem) within the Sample's relative
//     tolerance, magnitudes below 1 counted as 1, other bytes exactly; a
//     kernel with no image gives CodeInvalidBinary, and one that needs
//     what Info.Caps lacks (Kernel.Needs) a *device.NeedError naming it,
//     the need's position and what the device lacks, before its images are
//     looked at; launches with the wrong number of arguments or bad shapes
//     give CodeInvalidArgument and leave the queue usable.
//   - Profile: if dev's queues implement device.Profiler, a small and a
//     large copy in, a copy on the device, a launch and a copy out timed
//     with profiling on each report 0 < begin <= end within clock
//     readings taken before the work and after the Sync, in queue order
//     (each begin not before the previous end; on a device whose times
//     bracket operations, Info.BracketTimes, begins and ends each in
//     order),
//     with a native record of a kind the plugin registered
//     (device.RegisterNative) whose Start and End are the times and which
//     passes its plugin's check (device.NativeType.Check), a type name,
//     and teams > 0 for the launch only; Times gives the same answer twice (and, for a device.ReadyTiming
//     that says Ready right after the operation was enqueued, already
//     then, before the Sync); with profiling off, Last does not change.
//   - Concurrent: 16 goroutines, each with its own queue, allocate, copy,
//     launch, verify and free at once.
//   - NoLeak: if dev implements device.MemInfo, memory in use is back to its
//     value before the suite.
//
// A kernel whose results depend on the number of teams (one partial result
// per team) must fix Shape.Teams in its Sample. The suite must have the
// device to itself: other users of dev while it runs would upset the memory
// accounting checks.
func TestDevice(t *testing.T, dev device.Device, kernels ...*device.Kernel) {
	t.Helper()
	mi, hasMI := dev.(device.MemInfo)
	var startBytes int64
	var startN int
	if hasMI {
		startBytes, startN = mi.MemInUse()
	}
	s := &suite{dev: dev, kernels: kernels}
	t.Run("Info", s.testInfo)
	t.Run("Alloc", s.testAlloc)
	t.Run("Copy", s.testCopy)
	t.Run("Kernels", s.testKernels) // finds the runnable kernels the later tests use
	t.Run("Order", s.testOrder)
	t.Run("Events", s.testEvents)
	t.Run("Profile", s.testProfile)
	t.Run("Concurrent", s.testConcurrent)
	t.Run("WaitEvent", s.testWaitEvent)
	if hasMI {
		t.Run("NoLeak", func(t *testing.T) {
			b, n := mi.MemInUse()
			if b != startBytes || n != startN {
				t.Errorf("MemInUse after the suite = %d bytes in %d allocations, want %d bytes in %d as before",
					b, n, startBytes, startN)
			}
		})
	}
}

type suite struct {
	dev     device.Device
	kernels []*device.Kernel

	mu       sync.Mutex
	runnable []runnable // kernels with a Sample that load and pass on dev

	brackets bool // the device's times bracket operations (Info.BracketTimes, from Describe)
}

// runnable is a kernel that loads on the device, with a sample problem and
// the result of its Go image.
type runnable struct {
	k   *device.Kernel
	f   device.Function
	smp device.Sample // the largest sample, for Order and Events

	small device.Sample // a small sample and its Go image's result, for Concurrent
	want  [][]byte
}
