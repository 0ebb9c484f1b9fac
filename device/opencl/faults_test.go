package opencl_test

import (
	"errors"
	"strconv"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkedSrc is a hand-written checked kernel: the work-item whose element
// of x is negative fails check 1 as generated code does (the first one
// only, by compare-and-swap), with its index and the buffer's length.
const checkedSrc = `__kernel void checked(long n, __global const int *x, __global long *f) {
	long i = get_global_id(0);
	if (i < n && x[i] < 0 && atomic_cmpxchg((volatile __global int *)f, 0, 1) == 0) {
		f[1] = i; f[2] = n; f[3] = FAULT_TAG;
	}
}
`

func checkedKernel(src string, faults bool) *device.Kernel {
	k := kernel("checked", src, device.ScalarParam("n", device.ParamInt64), device.BufferParam("x", device.ParamInt32, "n"))
	if faults {
		k.Faults = []device.FaultSite{{Kind: device.FaultIndex, Pos: "x.go:3"}}
	}
	k.Images[0].Options = "-DFAULT_TAG=" + strconv.FormatInt(device.FaultTag("checked"), 10) + "L"
	return k
}

// A checked kernel gets the queue's fault record after its arguments; a
// failed check is Sync's error in Go's words, once; the queue goes on.
func TestCheckedKernelFaultRecord(t *testing.T) {
	for _, d := range devices(t) {
		fn, err := d.Load(checkedKernel(checkedSrc, true))
		require.NoError(t, err)
		const n = 1000
		x := make([]int32, n)
		a, err := d.Alloc(4 * n)
		require.NoError(t, err)
		q, err := d.NewQueue()
		require.NoError(t, err)
		bytes := unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*n)
		args := []device.Arg{{Bits: n}, {Ptr: a.Ptr}}
		shape := device.Shape{Size: [3]int{n, 1, 1}}
		require.NoError(t, q.CopyIn(a.Ptr, bytes))
		require.NoError(t, q.Launch(fn, shape, args))
		require.NoError(t, q.Sync(), "no element negative: no fault")

		x[617] = -1
		require.NoError(t, q.CopyIn(a.Ptr, bytes))
		require.NoError(t, q.Launch(fn, shape, args))
		err = q.Sync()
		var f *device.KernelFault
		require.True(t, errors.As(err, &f), "Sync after the failed check: %v", err)
		assert.EqualError(t, err, "kernel checked (x.go:3): index out of range [617] with length 1000")

		x[617] = 0
		require.NoError(t, q.CopyIn(a.Ptr, bytes))
		require.NoError(t, q.Launch(fn, shape, args))
		assert.NoError(t, q.Sync(), "the record is clean again after it was reported")
		require.NoError(t, q.Release())
		require.NoError(t, d.Free(a.Ptr))
	}
}

// A kernel that declares checks must take the record last, as a __global
// pointer to 64-bit words; one that does not declare them must not.
func TestCheckedKernelParamsCheckedAgainstTheSource(t *testing.T) {
	for _, d := range devices(t) {
		noRecord := "__kernel void checked(long n, __global const int *x) { }\n"
		_, err := d.Load(checkedKernel(noRecord, true))
		wantCode(t, "Faults declared, no record in the source", err, device.CodeInvalidBinary)
		assert.ErrorContains(t, err, "and its fault record")
		floatRecord := "__kernel void checked(long n, __global const int *x, __global float *f) { }\n"
		_, err = d.Load(checkedKernel(floatRecord, true))
		wantCode(t, "a float* record", err, device.CodeInvalidBinary)
		assert.ErrorContains(t, err, "(gompt_fault)")
		_, err = d.Load(checkedKernel(checkedSrc, false))
		wantCode(t, "a record the declaration does not have", err, device.CodeInvalidBinary)
	}
}
