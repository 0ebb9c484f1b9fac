//go:build cgo

package cl

import (
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObjects drives the binding directly on the first OpenCL device:
// create, use and release every kind of object, and check the live counts.
func TestObjects(t *testing.T) {
	if err := Init(); err != nil {
		t.Skipf("no OpenCL library: %v", err)
	}
	plats, err := GetPlatformIDs()
	var devs []DeviceID
	if err == nil && len(plats) > 0 {
		devs, err = GetDeviceIDs(plats[0], DEVICE_TYPE_ALL)
	}
	if err != nil || len(devs) == 0 {
		require.Empty(t, os.Getenv("CI"), "CI is set and there is no OpenCL device: %v", err)
		t.Skipf("no OpenCL device: %v", err)
	}
	p, d := plats[0], devs[0]
	name, err := GetDeviceString(d, DEVICE_NAME)
	require.NoError(t, err, "device name %q", name)
	require.NotEmpty(t, name, "device name %q, %v", name, err)
	_, err = GetDeviceUint(d, 0x7fff)
	assert.EqualValues(t, INVALID_VALUE, StatusOf(err), "query of an unknown parameter: %v, want CL_INVALID_VALUE", err)
	base := Live()
	ctx, err := CreateContext(p, d)
	require.NoError(t, err)
	q, err := CreateCommandQueue(ctx, d, QUEUE_PROFILING_ENABLE)
	require.NoError(t, err)
	m, err := CreateBuffer(ctx, MEM_READ_WRITE, 1024)
	require.NoError(t, err)
	in := make([]byte, 1024)
	for i := range in {
		in[i] = byte(i * 7)
	}
	require.NoError(t, EnqueueWriteBuffer(q, m, true, 0, 1024, unsafe.Pointer(&in[0]), nil))
	prog, err := CreateProgramWithSource(ctx, "__kernel void twice(__global uchar *p, int k) { p[get_global_id(0)] *= k; }")
	require.NoError(t, err)
	if err := BuildProgram(prog, d, ""); err != nil {
		log, _ := GetProgramBuildLog(prog, d)
		require.NoError(t, err, "build log:\n%s", log)
	}
	names, err := GetProgramKernelNames(prog)
	assert.NoError(t, err, "kernel names %q", names)
	require.Len(t, names, 1, "kernel names %q, %v", names, err)
	assert.Equal(t, "twice", names[0], "kernel names %q, %v", names, err)
	k, err := CreateKernel(prog, "twice")
	require.NoError(t, err)
	n, err := GetKernelUint(k, KERNEL_NUM_ARGS)
	assert.NoError(t, err, "KERNEL_NUM_ARGS = %d", n)
	assert.EqualValues(t, 2, n, "KERNEL_NUM_ARGS = %d, %v", n, err)
	global, local := [3]uintptr{1024, 1, 1}, [3]uintptr{64, 1, 1}
	args := []Arg{{Size: 8, Value: uint64(m)}, {Size: 4, Value: 2}}
	var ev Event
	bad, err := EnqueueKernel(q, k, args, 1, &global, &local, &ev)
	require.NoError(t, err, "EnqueueKernel: arg %d", bad)
	bad, err = EnqueueKernel(q, k, []Arg{{Size: 3, Value: 0}}, 1, &global, &local, nil)
	assert.Zero(t, bad, "argument of a bad size: bad %d, %v", bad, err)
	assert.NotEqual(t, SUCCESS, StatusOf(err), "argument of a bad size: bad %d, %v", bad, err)
	marker, err := EnqueueMarkerWithWaitList(q)
	require.NoError(t, err)
	require.NoError(t, WaitForEvents(marker))
	st, err := GetEventStatus(ev)
	assert.NoError(t, err, "kernel event status %d, %v after the marker completed", st, err)
	assert.EqualValues(t, COMPLETE, st, "kernel event status %d, %v after the marker completed", st, err)
	kstart, _ := GetEventProfilingInfo(ev, PROFILING_COMMAND_START)
	kend, _ := GetEventProfilingInfo(ev, PROFILING_COMMAND_END)
	mend, err := GetEventProfilingInfo(marker, PROFILING_COMMAND_END)
	assert.NoError(t, err, "profiling: kernel [%d, %d], marker end %d", kstart, kend, mend)
	assert.NotZero(t, kstart, "profiling: kernel [%d, %d], marker end %d, %v", kstart, kend, mend, err)
	assert.GreaterOrEqual(t, kend, kstart, "profiling: kernel [%d, %d], marker end %d, %v", kstart, kend, mend, err)
	assert.GreaterOrEqual(t, mend, kend, "profiling: kernel [%d, %d], marker end %d, %v", kstart, kend, mend, err)
	out := make([]byte, 1024)
	require.NoError(t, EnqueueReadBuffer(q, m, true, 0, 1024, unsafe.Pointer(&out[0]), nil))
	for i := range out {
		require.Equal(t, in[i]*2, out[i], "byte %d", i)
	}
	sub, err := CreateSubBuffer(m, MEM_READ_WRITE, 1, 16)
	if !assert.EqualValues(t, MISALIGNED_SUB_BUFFER, StatusOf(err), "sub-buffer at offset 1: %v, want CL_MISALIGNED_SUB_BUFFER_OFFSET", err) && err == nil {
		ReleaseMemObject(sub)
	}
	got := Live()
	assert.Equal(t, base.Events+2, got.Events, "live %+v with 2 events, 1 buffer, 1 kernel over %+v", got, base)
	assert.Equal(t, base.Mems+1, got.Mems, "live %+v with 2 events, 1 buffer, 1 kernel over %+v", got, base)
	assert.Equal(t, base.Kernels+1, got.Kernels, "live %+v with 2 events, 1 buffer, 1 kernel over %+v", got, base)
	for _, err := range []error{ReleaseEvent(ev), ReleaseEvent(marker), ReleaseKernel(k), ReleaseProgram(prog),
		ReleaseMemObject(m), Finish(q), ReleaseCommandQueue(q), ReleaseContext(ctx)} {
		assert.NoError(t, err)
	}
	got = Live()
	assert.Equal(t, base, got, "live %+v after releasing everything, want %+v", got, base)
}

// TestBuildKernel: source that does not build, and an entry point the
// program does not define, fail and leave no program behind; a good one
// gives a program and a kernel.
func TestBuildKernel(t *testing.T) {
	if err := Init(); err != nil {
		t.Skipf("no OpenCL library: %v", err)
	}
	plats, err := GetPlatformIDs()
	var devs []DeviceID
	if err == nil && len(plats) > 0 {
		devs, err = GetDeviceIDs(plats[0], DEVICE_TYPE_ALL)
	}
	if err != nil || len(devs) == 0 {
		require.Empty(t, os.Getenv("CI"), "CI is set and there is no OpenCL device: %v", err)
		t.Skipf("no OpenCL device: %v", err)
	}
	ctx, err := CreateContext(plats[0], devs[0])
	require.NoError(t, err)
	defer ReleaseContext(ctx)
	base := Live()
	_, _, err = BuildKernel(ctx, devs[0], "__kernel void k(__global int *p) { p[0] = ; }", "k")
	assert.EqualValues(t, BUILD_PROGRAM_FAILURE, StatusOf(err), "source with a syntax error: %v", err)
	_, _, err = BuildKernel(ctx, devs[0], "__kernel void k(__global int *p) { p[0] = 1; }", "other")
	assert.EqualValues(t, INVALID_KERNEL_NAME, StatusOf(err), "an entry point the program lacks: %v", err)
	assert.Equal(t, base, Live(), "live objects after two failed builds")
	p, k, err := BuildKernel(ctx, devs[0], "__kernel void k(__global int *p) { p[0] = 1; }", "k")
	require.NoError(t, err)
	assert.Equal(t, base.Kernels+1, Live().Kernels, "live kernels after a build")
	assert.NoError(t, ReleaseKernel(k))
	assert.NoError(t, ReleaseProgram(p))
	assert.Equal(t, base, Live(), "live objects after releasing the build")
}
