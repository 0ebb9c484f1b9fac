//go:build cgo

package cl

import (
	"os"
	"testing"
	"unsafe"
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
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and there is no OpenCL device: %v", err)
		}
		t.Skipf("no OpenCL device: %v", err)
	}
	p, d := plats[0], devs[0]
	name, err := GetDeviceString(d, DEVICE_NAME)
	if err != nil || name == "" {
		t.Fatalf("device name %q, %v", name, err)
	}
	if _, err := GetDeviceUint(d, 0x7fff); StatusOf(err) != INVALID_VALUE {
		t.Errorf("query of an unknown parameter: %v, want CL_INVALID_VALUE", err)
	}
	base := Live()
	ctx, err := CreateContext(p, d)
	if err != nil {
		t.Fatal(err)
	}
	q, err := CreateCommandQueue(ctx, d, QUEUE_PROFILING_ENABLE)
	if err != nil {
		t.Fatal(err)
	}
	m, err := CreateBuffer(ctx, MEM_READ_WRITE, 1024)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]byte, 1024)
	for i := range in {
		in[i] = byte(i * 7)
	}
	if err := EnqueueWriteBuffer(q, m, true, 0, 1024, unsafe.Pointer(&in[0]), nil); err != nil {
		t.Fatal(err)
	}
	prog, err := CreateProgramWithSource(ctx, "__kernel void twice(__global uchar *p, int k) { p[get_global_id(0)] *= k; }")
	if err != nil {
		t.Fatal(err)
	}
	if err := BuildProgram(prog, d, ""); err != nil {
		log, _ := GetProgramBuildLog(prog, d)
		t.Fatalf("%v\n%s", err, log)
	}
	names, err := GetProgramKernelNames(prog)
	if err != nil || len(names) != 1 || names[0] != "twice" {
		t.Errorf("kernel names %q, %v", names, err)
	}
	k, err := CreateKernel(prog, "twice")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := GetKernelUint(k, KERNEL_NUM_ARGS); err != nil || n != 2 {
		t.Errorf("KERNEL_NUM_ARGS = %d, %v", n, err)
	}
	global, local := [3]uintptr{1024, 1, 1}, [3]uintptr{64, 1, 1}
	args := []Arg{{Size: 8, Value: uint64(m)}, {Size: 4, Value: 2}}
	var ev Event
	if bad, err := EnqueueKernel(q, k, args, 1, &global, &local, &ev); err != nil {
		t.Fatalf("EnqueueKernel: arg %d: %v", bad, err)
	}
	if bad, err := EnqueueKernel(q, k, []Arg{{Size: 3, Value: 0}}, 1, &global, &local, nil); bad != 0 || StatusOf(err) == SUCCESS {
		t.Errorf("argument of a bad size: bad %d, %v", bad, err)
	}
	marker, err := EnqueueMarkerWithWaitList(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := WaitForEvents(marker); err != nil {
		t.Fatal(err)
	}
	st, err := GetEventStatus(ev)
	if err != nil || st != COMPLETE {
		t.Errorf("kernel event status %d, %v after the marker completed", st, err)
	}
	kstart, _ := GetEventProfilingInfo(ev, PROFILING_COMMAND_START)
	kend, _ := GetEventProfilingInfo(ev, PROFILING_COMMAND_END)
	mend, err := GetEventProfilingInfo(marker, PROFILING_COMMAND_END)
	if err != nil || kstart == 0 || kend < kstart || mend < kend {
		t.Errorf("profiling: kernel [%d, %d], marker end %d, %v", kstart, kend, mend, err)
	}
	out := make([]byte, 1024)
	if err := EnqueueReadBuffer(q, m, true, 0, 1024, unsafe.Pointer(&out[0]), nil); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if out[i] != in[i]*2 {
			t.Fatalf("byte %d = %d, want %d", i, out[i], in[i]*2)
		}
	}
	sub, err := CreateSubBuffer(m, MEM_READ_WRITE, 1, 16)
	if StatusOf(err) != MISALIGNED_SUB_BUFFER {
		t.Errorf("sub-buffer at offset 1: %v, want CL_MISALIGNED_SUB_BUFFER_OFFSET", err)
		if err == nil {
			ReleaseMemObject(sub)
		}
	}
	if got := Live(); got.Events != base.Events+2 || got.Mems != base.Mems+1 || got.Kernels != base.Kernels+1 {
		t.Errorf("live %+v with 2 events, 1 buffer, 1 kernel over %+v", got, base)
	}
	for _, err := range []error{ReleaseEvent(ev), ReleaseEvent(marker), ReleaseKernel(k), ReleaseProgram(prog),
		ReleaseMemObject(m), Finish(q), ReleaseCommandQueue(q), ReleaseContext(ctx)} {
		if err != nil {
			t.Error(err)
		}
	}
	if got := Live(); got != base {
		t.Errorf("live %+v after releasing everything, want %+v", got, base)
	}
}
