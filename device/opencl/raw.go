//go:build cgo

package opencl

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

const rawEmptySource = "__kernel void gompt_raw_empty(void) {}\n"

// emptyKernel builds the device's empty kernel once: the raw baseline
// launches it, and Record enqueues it as a timestamp on drivers whose
// markers carry no profiling times.
func (d *clDevice) emptyKernel() (cl.Kernel, error) {
	d.rawOnce.Do(func() { d.rawProg, d.rawKern, d.rawErr = d.buildInternal(rawEmptySource, "gompt_raw_empty") })
	return d.rawKern, d.rawErr
}

func rawDevice(d device.Device) (*clDevice, error) {
	cd, ok := d.(*clDevice)
	if !ok {
		return nil, fmt.Errorf("opencl: %T is not an OpenCL device", d)
	}
	return cd, cd.init()
}

// RawEmptyKernel is the baseline of the empty_target benchmark: iters times
// enqueue an empty kernel (one work-item) and clFinish, through the binding
// alone on a fresh profiling queue. It returns the total time. Safe for
// concurrent use.
func RawEmptyKernel(d device.Device, iters int) (time.Duration, error) {
	cd, err := rawDevice(d)
	if err != nil {
		return 0, err
	}
	kern, err := cd.emptyKernel()
	if err != nil {
		return 0, cd.wrap("raw empty kernel", err)
	}
	q, err := cd.createQueue()
	if err != nil {
		return 0, err
	}
	defer cl.ReleaseCommandQueue(q)
	global, local := [3]uintptr{1, 1, 1}, [3]uintptr{1, 1, 1}
	start := time.Now()
	for i := 0; i < iters; i++ {
		if err := cl.EnqueueNDRangeKernel(q, kern, 1, &global, &local, nil); err != nil {
			return 0, cd.wrap("raw empty kernel", err)
		}
		if err := cl.Finish(q); err != nil {
			return 0, cd.wrap("raw empty kernel", err)
		}
	}
	return time.Since(start), nil
}

// RawCopy is the baseline of the copy benchmarks: iters blocking writes
// (toDevice) or reads of bytes between a Go slice and a fresh buffer,
// through the binding alone on a fresh profiling queue. It returns the
// total time. Safe for concurrent use.
func RawCopy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	cd, err := rawDevice(d)
	if err != nil {
		return 0, err
	}
	if bytes <= 0 || uint64(bytes) > cd.info.MaxAlloc {
		return 0, cd.errorf("raw copy", device.CodeInvalidArgument, "size %d bytes: must be in [1, %d]", bytes, cd.info.MaxAlloc)
	}
	q, err := cd.createQueue()
	if err != nil {
		return 0, err
	}
	defer cl.ReleaseCommandQueue(q)
	m, err := cl.CreateBuffer(cd.ctx, cl.MEM_READ_WRITE, uintptr(bytes))
	if err != nil {
		return 0, cd.wrap("raw copy", err)
	}
	defer cl.ReleaseMemObject(m)
	host := make([]byte, bytes)
	p := unsafe.Pointer(unsafe.SliceData(host))
	// Touch the buffer once so first-use allocation is not timed.
	if err := cl.EnqueueWriteBuffer(q, m, true, 0, uintptr(bytes), p, nil); err != nil {
		return 0, cd.wrap("raw copy", err)
	}
	start := time.Now()
	for i := 0; i < iters; i++ {
		if toDevice {
			err = cl.EnqueueWriteBuffer(q, m, true, 0, uintptr(bytes), p, nil)
		} else {
			err = cl.EnqueueReadBuffer(q, m, true, 0, uintptr(bytes), p, nil)
		}
		if err != nil {
			return 0, cd.wrap("raw copy", err)
		}
	}
	return time.Since(start), nil
}

// RawSpinSource is the kernel of the wait baselines: one work-item runs n
// dependent steps (about a millisecond per million on POCL).
const RawSpinSource = `__kernel void gompt_raw_spin(__global uint *p, uint n) {
  uint s = p[0] + get_global_id(0);
  for (uint i = 0; i < n; i++) s = s * 1664525u + 1013904223u;
  p[get_global_id(0) + 1] = s;
}
`

// RawWait is the baseline of the wait benchmarks. It prepares, on a
// fresh profiling queue of its own, RawSpinSource's kernel with steps steps
// (one work-item), and returns wait, which iters times enqueues it and
// waits for it with clWaitForEvents, through the binding alone: the
// driver's own wait, which spins on some drivers. The caller measures
// wait (time, CPU time of its thread), then calls release. Each wait may
// be used by one goroutine at a time.
func RawWait(d device.Device, steps uint32) (wait func(iters int) error, release func(), err error) {
	cd, err := rawDevice(d)
	if err != nil {
		return nil, nil, err
	}
	prog, kern, err := cd.buildInternal(RawSpinSource, "gompt_raw_spin")
	if err != nil {
		return nil, nil, cd.wrap("raw wait", err)
	}
	q, err := cd.createQueue()
	if err != nil {
		cl.ReleaseKernel(kern)
		cl.ReleaseProgram(prog)
		return nil, nil, err
	}
	m, err := cl.CreateBuffer(cd.ctx, cl.MEM_READ_WRITE, 64)
	if err != nil {
		cl.ReleaseCommandQueue(q)
		cl.ReleaseKernel(kern)
		cl.ReleaseProgram(prog)
		return nil, nil, cd.wrap("raw wait", err)
	}
	release = func() {
		cl.ReleaseMemObject(m)
		cl.ReleaseCommandQueue(q)
		cl.ReleaseKernel(kern)
		cl.ReleaseProgram(prog)
	}
	args := []cl.Arg{{Size: 8, Value: uint64(m)}, {Size: 4, Value: uint64(steps)}}
	global, local := [3]uintptr{1, 1, 1}, [3]uintptr{1, 1, 1}
	wait = func(iters int) error {
		for i := 0; i < iters; i++ {
			var ev cl.Event
			if _, err := cl.EnqueueKernel(q, kern, args, 1, &global, &local, &ev); err != nil {
				return cd.wrap("raw wait", err)
			}
			err := cl.WaitForEvents(ev)
			cl.ReleaseEvent(ev)
			if err != nil {
				return cd.wrap("raw wait", err)
			}
		}
		return nil
	}
	return wait, release, nil
}

// RawCopyPinned is the upper bound of the staged copies: iters blocking
// writes (toDevice) or reads of bytes between a fresh buffer and pinned
// host memory (a CL_MEM_ALLOC_HOST_PTR buffer, mapped once), through the
// binding alone on a fresh profiling queue. It returns the total time.
// Safe for concurrent use.
func RawCopyPinned(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	cd, err := rawDevice(d)
	if err != nil {
		return 0, err
	}
	if bytes <= 0 || uint64(bytes) > cd.info.MaxAlloc {
		return 0, cd.errorf("raw pinned copy", device.CodeInvalidArgument, "size %d bytes: must be in [1, %d]", bytes, cd.info.MaxAlloc)
	}
	q, err := cd.createQueue()
	if err != nil {
		return 0, err
	}
	defer cl.ReleaseCommandQueue(q)
	m, err := cl.CreateBuffer(cd.ctx, cl.MEM_READ_WRITE, uintptr(bytes))
	if err != nil {
		return 0, cd.wrap("raw pinned copy", err)
	}
	defer cl.ReleaseMemObject(m)
	pm, err := cl.CreateBuffer(cd.ctx, cl.MEM_READ_WRITE|cl.MEM_ALLOC_HOST_PTR, uintptr(bytes))
	if err != nil {
		return 0, cd.wrap("raw pinned copy", err)
	}
	defer cl.ReleaseMemObject(pm)
	p, err := cl.EnqueueMapBuffer(q, pm, cl.MAP_READ|cl.MAP_WRITE, 0, uintptr(bytes))
	if err != nil {
		return 0, cd.wrap("raw pinned copy", err)
	}
	defer func() {
		cl.EnqueueUnmapMemObject(q, pm, p)
		cl.Finish(q)
	}()
	if err := cl.EnqueueWriteBuffer(q, m, true, 0, uintptr(bytes), p, nil); err != nil { // first touch
		return 0, cd.wrap("raw pinned copy", err)
	}
	start := time.Now()
	for i := 0; i < iters; i++ {
		if toDevice {
			err = cl.EnqueueWriteBuffer(q, m, true, 0, uintptr(bytes), p, nil)
		} else {
			err = cl.EnqueueReadBuffer(q, m, true, 0, uintptr(bytes), p, nil)
		}
		if err != nil {
			return 0, cd.wrap("raw pinned copy", err)
		}
	}
	return time.Since(start), nil
}
