//go:build cgo

package opencl

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// Loop limits. Mesa's llvmpipe (rusticl on the CPU, RUSTICL_ENABLE=swrast)
// compiles a kernel's loops with a counter that every turn of any loop of
// a work-item decrements, from 65535 (gallivm's
// LP_MAX_TGSI_LOOP_ITERATIONS), and leaves every loop at its next turn
// once it runs out: without a word, the results incomplete. A kernel of
// one loop that stores out[i] = i for i < 100000 stores 65535 elements
// there. Work-items whose loops run long are ordinary in gompt: a launch
// with few teams and threads loops grid-stride over its iteration space,
// and a kernel's own loops run as long as its data asks (matmul's over k).
//
// So on a Mesa platform the plugin probes for such a limit once, at the
// first kernel it builds: a loop of probeLoops turns that counts them. If
// it counts fewer, the device has a limit, and the plugin builds kernels
// with LoopGuardDefine: gompt-kernels' kernels then take their fault
// record (a checked kernel has it anyway) and check at each exit of their
// entry point, with a loop that must turn twice, whether the count ran
// out; the first work-item whose count did fails the launch with a
// device.FaultLoopLimit (at Sync), never a wrong result. Hand-written
// kernels have no such check.

// LoopGuardDefine is the macro the OpenCL plugin defines when it builds
// a kernel for a device whose driver ends a work-item's loops after a
// fixed number of iterations in all (see device.FaultLoopLimit).
const LoopGuardDefine = "GOMPT_LOOP_GUARD"

// probeLoops is how many turns the probe's loop takes: far past
// llvmpipe's 65535, and a millisecond's work elsewhere.
const probeLoops = 1 << 20

// loopProbeSource counts the turns of one loop of n turns.
const loopProbeSource = `__kernel void gompt_probe_loops(__global uint *out, uint n) {
  uint turns = 0;
  for (uint i = 0; i < n; i++) {
    turns++;
    out[1] = i;
  }
  out[0] = turns;
}
`

// loopGuard reports whether kernels built for the device need the loop
// guard (LoopGuardDefine), probing once. The device is open.
func (d *clDevice) loopGuard() bool {
	return d.loops.check(d, d.hooks.loopGuard, "a test pretends that the driver ends loops early", d.probeLoops)
}

// loopsWhy says what the loop limit probe found, probing if need be.
func (d *clDevice) loopsWhy() string {
	d.loopGuard()
	return d.loops.describe(LoopGuardDefine)
}

// mesaFault is a fault of Mesa's llvmpipe compiler that a probe kernel
// looks for once per device, on Mesa platforms only (mesaPlatform: a
// probe costs a program build, which no other driver pays): where it is
// found, kernels are built with a define that works around it (the loop
// limit here, sign-extended comparisons in sext.go).
type mesaFault struct {
	once  sync.Once
	found bool
	why   string // what the probe saw (or why it did not run)
}

// check reports whether d has the fault, probing once; pretend (a test's
// hook) makes it so without a probe, pretendWhy saying so.
func (f *mesaFault) check(d *clDevice, pretend bool, pretendWhy string, probe func() (bool, string)) bool {
	f.once.Do(func() {
		switch {
		case pretend:
			f.found, f.why = true, pretendWhy
		case !mesaPlatform(d.info.Extra):
			f.why = "not a Mesa platform: not probed"
		default:
			f.found, f.why = probe()
		}
	})
	return f.found
}

// describe says what the probe found, for Describe; check ran.
func (f *mesaFault) describe(define string) string {
	if f.found {
		return "kernels are built with " + define + ": " + f.why
	}
	return f.why
}

// mesaPlatform reports whether the device's platform is one of Mesa's
// (rusticl, Clover), whose CPU driver, llvmpipe, limits loops.
func mesaPlatform(extra []device.Attr) bool {
	for _, a := range extra {
		if a.Key == "platform" {
			p := strings.ToLower(a.Value)
			return strings.Contains(p, "rusticl") || strings.Contains(p, "clover")
		}
	}
	return false
}

// probeLoops runs the probe kernel in one work-item on a queue of its own.
// A probe that fails to run is taken as a limit: the guard costs a little
// and is always right.
func (d *clDevice) probeLoops() (bool, string) {
	prog, kern, err := d.buildInternal(loopProbeSource, "gompt_probe_loops")
	if err != nil {
		return true, fmt.Sprintf("the loop probe did not build (%v): kernels check their loops", err)
	}
	defer cl.ReleaseProgram(prog)
	defer cl.ReleaseKernel(kern)
	q, err := d.createQueue()
	if err != nil {
		return true, fmt.Sprintf("the loop probe found no queue (%v): kernels check their loops", err)
	}
	defer cl.ReleaseCommandQueue(q)
	m, err := cl.CreateBuffer(d.ctx, cl.MEM_READ_WRITE, 8)
	if err != nil {
		return true, fmt.Sprintf("the loop probe found no buffer (%v): kernels check their loops", err)
	}
	defer cl.ReleaseMemObject(m)
	one := [3]uintptr{1, 1, 1}
	args := []cl.Arg{{Size: 8, Value: uint64(m)}, {Size: 4, Value: probeLoops}}
	if _, err := cl.EnqueueKernel(q, kern, args, 1, &one, &one, nil); err != nil {
		return true, fmt.Sprintf("the loop probe did not run (%v): kernels check their loops", err)
	}
	var out [2]uint32
	if err := cl.EnqueueReadBuffer(q, m, true, 0, 8, unsafe.Pointer(&out[0]), nil); err != nil {
		return true, fmt.Sprintf("the loop probe's result could not be read (%v): kernels check their loops", err)
	}
	if out[0] != probeLoops {
		return true, fmt.Sprintf("a loop of %d turns ran %d: the driver ends a work-item's loops early, so kernels check their loops (device.FaultLoopLimit)", probeLoops, out[0])
	}
	return false, fmt.Sprintf("a loop of %d turns ran them all", probeLoops)
}
