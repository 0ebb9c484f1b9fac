//go:build cgo

package opencl

import (
	"fmt"
	"unsafe"

	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// Sign-extended comparisons. Mesa's OpenCL compiler (22.3; seen with
// rusticl on llvmpipe) gets a signed 64-bit <, <=, > or >= between a
// value sign-extended from 32 bits and a constant wrong: with x an int
// (an element, an argument or a sum), (long)x < 5 and 5 > (long)x are
// false and (long)x > 5 and 0 <= (long)x true for every x. The answers
// are those of a comparison narrowed to 32 bits behind a test that the
// constant lies in the int32 range whose lower bound reads +2^31 rather
// than -2^31: (long)x < 2147483648 is false too, while constants
// outside [-2^31, 2^31], ==, !=, unsigned comparisons, a long compared
// with a constant and values sign-extended from 8 or 16 bits are right. The constant may be one the compiler folded in itself: a
// helper's argument, or a loop counter once it unrolls the loop (so
// k < (long)x, k counting from 0, goes wrong as well), and -cl-opt-disable
// does not help. gompt-kernels writes its signed 64-bit orderings as
// GOMPT_CMP64, which SextCompareDefine makes unsigned comparisons of
// the operands with their sign bits flipped, which are right there.
//
// So on a Mesa platform the plugin probes once, at the first kernel it
// builds, with a kernel that compares an int argument of -1, extended to
// a long, with constants; where the answers are wrong it builds kernels
// with SextCompareDefine. Hand-written kernels have no such help.

// SextCompareDefine is the macro the OpenCL plugin defines when it builds
// a kernel for a device whose compiler gets signed 64-bit comparisons of
// values sign-extended from 32 bits with constants wrong (Mesa's): the
// generated kernels then compare signed 64-bit values unsigned, with
// their sign bits flipped.
const SextCompareDefine = "GOMPT_SEXT_COMPARE"

// sextProbeSource compares v, extended to a long, with constants: for v
// = -1, out is {1, 0, 1, 0} (Mesa 22.3 writes {0, 1, 0, 1}).
const sextProbeSource = `__kernel void gompt_probe_sext(__global long *out, int v) {
  long x = v;
  out[0] = x < 0;
  out[1] = x > 5;
  out[2] = 5 > x;
  out[3] = 0 <= x;
}
`

// sextWant is what sextProbeSource writes for v = -1.
var sextWant = [4]int64{1, 0, 1, 0}

// sextBroken reports whether kernels built for the device need
// SextCompareDefine, probing once. The device is open.
func (d *clDevice) sextBroken() bool {
	return d.sext.check(d, d.hooks.sextCompare, "a test pretends that the driver gets comparisons of sign-extended values wrong", d.probeSext)
}

// sextWhy says what the sign-extension probe found, probing if need be.
func (d *clDevice) sextWhy() string {
	d.sextBroken()
	return d.sext.describe(SextCompareDefine)
}

// probeSext runs the probe kernel in one work-item on a queue of its own.
// A probe that fails to run is taken as the bug: the define costs a
// little and is always right.
func (d *clDevice) probeSext() (bool, string) {
	prog, kern, err := d.buildInternal(sextProbeSource, "gompt_probe_sext")
	if err != nil {
		return true, fmt.Sprintf("the sign-extension probe did not build (%v): kernels compare as if the driver had the bug", err)
	}
	defer cl.ReleaseProgram(prog)
	defer cl.ReleaseKernel(kern)
	q, err := d.createQueue()
	if err != nil {
		return true, fmt.Sprintf("the sign-extension probe found no queue (%v): kernels compare as if the driver had the bug", err)
	}
	defer cl.ReleaseCommandQueue(q)
	size := uintptr(len(sextWant) * 8)
	m, err := cl.CreateBuffer(d.ctx, cl.MEM_READ_WRITE, size)
	if err != nil {
		return true, fmt.Sprintf("the sign-extension probe found no buffer (%v): kernels compare as if the driver had the bug", err)
	}
	defer cl.ReleaseMemObject(m)
	one := [3]uintptr{1, 1, 1}
	minus1 := int32(-1)
	args := []cl.Arg{{Size: 8, Value: uint64(m)}, {Size: 4, Value: uint64(uint32(minus1))}}
	if _, err := cl.EnqueueKernel(q, kern, args, 1, &one, &one, nil); err != nil {
		return true, fmt.Sprintf("the sign-extension probe did not run (%v): kernels compare as if the driver had the bug", err)
	}
	var out [len(sextWant)]int64
	if err := cl.EnqueueReadBuffer(q, m, true, 0, size, unsafe.Pointer(&out[0]), nil); err != nil {
		return true, fmt.Sprintf("the sign-extension probe's result could not be read (%v): kernels compare as if the driver had the bug", err)
	}
	if out != sextWant {
		return true, fmt.Sprintf("with x = (long)(int)-1, x < 0, x > 5, 5 > x and 0 <= x gave %v, want %v: the driver gets signed 64-bit comparisons of values sign-extended from 32 bits with constants wrong, so kernels compare them unsigned with the sign bits flipped", out, sextWant)
	}
	return false, fmt.Sprintf("with x = (long)(int)-1, x < 0, x > 5, 5 > x and 0 <= x gave %v, as they should", out)
}
