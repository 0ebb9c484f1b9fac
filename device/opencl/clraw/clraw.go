//go:build cgo

package clraw

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// clDevice is what a device of the opencl plugin offers this package.
type clDevice interface {
	// BindingQueue returns the device's OpenCL context and device and a
	// fresh in-order profiling queue of the caller's on them, or the
	// device's error when it cannot be opened.
	BindingQueue() (cl.Context, cl.DeviceID, cl.CommandQueue, error)
}

// clSetup returns d's context, device and a fresh queue (to be released
// by the caller), the errors naming op.
func clSetup(d device.Device, op string) (cl.Context, cl.DeviceID, cl.CommandQueue, error) {
	cd, ok := d.(clDevice)
	if !ok {
		return 0, 0, 0, fmt.Errorf("clraw: %s: %T is not a device of the opencl plugin", op, d)
	}
	return cd.BindingQueue()
}

func clErr(op string, err error) error { return fmt.Errorf("clraw: %s: %w", op, err) }

// EmptyKernel is the baseline of the empty_target benchmark: iters times
// enqueue an empty kernel (one work-item) and clFinish, through the binding
// alone on a fresh profiling queue. It returns the total time (the kernel's
// build is not timed). d must be a device of the opencl plugin. Safe for
// concurrent use.
func EmptyKernel(d device.Device, iters int) (time.Duration, error) {
	const op = "raw empty kernel"
	ctx, dev, q, err := clSetup(d, op)
	if err != nil {
		return 0, err
	}
	defer cl.ReleaseCommandQueue(q)
	prog, kern, err := cl.BuildKernel(ctx, dev, "__kernel void gompt_raw_empty(void) {}\n", "gompt_raw_empty")
	if err != nil {
		return 0, clErr(op, err)
	}
	defer cl.ReleaseProgram(prog)
	defer cl.ReleaseKernel(kern)
	global, local := [3]uintptr{1, 1, 1}, [3]uintptr{1, 1, 1}
	start := time.Now()
	for i := 0; i < iters; i++ {
		if err := cl.EnqueueNDRangeKernel(q, kern, 1, &global, &local, nil); err != nil {
			return 0, clErr(op, err)
		}
		if err := cl.Finish(q); err != nil {
			return 0, clErr(op, err)
		}
	}
	return time.Since(start), nil
}

// Copy is the baseline of the copy benchmarks: iters blocking writes
// (toDevice) or reads of bytes between a Go slice and a fresh buffer,
// through the binding alone on a fresh profiling queue. It returns the
// total time. d must be a device of the opencl plugin. Safe for concurrent
// use.
func Copy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return clCopy(d, bytes, toDevice, iters, false)
}

// CopyPinned is the upper bound of the plugin's staged copies: as Copy,
// but between the buffer and pinned host memory (a CL_MEM_ALLOC_HOST_PTR
// buffer, mapped once).
func CopyPinned(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return clCopy(d, bytes, toDevice, iters, true)
}

func clCopy(d device.Device, bytes int, toDevice bool, iters int, pinned bool) (time.Duration, error) {
	op := "raw copy"
	if pinned {
		op = "raw pinned copy"
	}
	if bytes < 1 || iters < 0 {
		return 0, fmt.Errorf("clraw: %s: bytes %d, iters %d: bytes must be at least 1, iters at least 0", op, bytes, iters)
	}
	ctx, _, q, err := clSetup(d, op)
	if err != nil {
		return 0, err
	}
	defer cl.ReleaseCommandQueue(q)
	m, err := cl.CreateBuffer(ctx, cl.MEM_READ_WRITE, uintptr(bytes))
	if err != nil {
		return 0, clErr(op, err)
	}
	defer cl.ReleaseMemObject(m)
	var p unsafe.Pointer
	if pinned {
		pm, err := cl.CreateBuffer(ctx, cl.MEM_READ_WRITE|cl.MEM_ALLOC_HOST_PTR, uintptr(bytes))
		if err != nil {
			return 0, clErr(op, err)
		}
		defer cl.ReleaseMemObject(pm)
		if p, err = cl.EnqueueMapBuffer(q, pm, cl.MAP_READ|cl.MAP_WRITE, 0, uintptr(bytes)); err != nil {
			return 0, clErr(op, err)
		}
		defer func() {
			cl.EnqueueUnmapMemObject(q, pm, p)
			cl.Finish(q)
		}()
	} else {
		p = unsafe.Pointer(unsafe.SliceData(make([]byte, bytes)))
	}
	// Touch the buffer once so first-use allocation is not timed.
	if err := cl.EnqueueWriteBuffer(q, m, true, 0, uintptr(bytes), p, nil); err != nil {
		return 0, clErr(op, err)
	}
	start := time.Now()
	for i := 0; i < iters; i++ {
		if toDevice {
			err = cl.EnqueueWriteBuffer(q, m, true, 0, uintptr(bytes), p, nil)
		} else {
			err = cl.EnqueueReadBuffer(q, m, true, 0, uintptr(bytes), p, nil)
		}
		if err != nil {
			return 0, clErr(op, err)
		}
	}
	return time.Since(start), nil
}

// SpinSource is the kernel of the wait baselines: one work-item runs n
// dependent steps (about a millisecond per million on POCL).
const SpinSource = `__kernel void gompt_raw_spin(__global uint *p, uint n) {
  uint s = p[0] + get_global_id(0);
  for (uint i = 0; i < n; i++) s = s * 1664525u + 1013904223u;
  p[get_global_id(0) + 1] = s;
}
`

// Wait is the baseline of the wait benchmarks. It prepares, on a fresh
// profiling queue of its own, SpinSource's kernel with steps steps (one
// work-item), and returns wait, which iters times enqueues it and waits for
// it with clWaitForEvents, through the binding alone: the driver's own
// wait, which spins on some drivers. The caller measures wait (time, CPU
// time of its thread), then calls release. Each wait may be used by one
// goroutine at a time.
func Wait(d device.Device, steps uint32) (wait func(iters int) error, release func(), err error) {
	const op = "raw wait"
	ctx, dev, q, err := clSetup(d, op)
	if err != nil {
		return nil, nil, err
	}
	prog, kern, err := cl.BuildKernel(ctx, dev, SpinSource, "gompt_raw_spin")
	if err != nil {
		cl.ReleaseCommandQueue(q)
		return nil, nil, clErr(op, err)
	}
	m, err := cl.CreateBuffer(ctx, cl.MEM_READ_WRITE, 64)
	if err != nil {
		cl.ReleaseCommandQueue(q)
		cl.ReleaseKernel(kern)
		cl.ReleaseProgram(prog)
		return nil, nil, clErr(op, err)
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
				return clErr(op, err)
			}
			err := cl.WaitForEvents(ev)
			cl.ReleaseEvent(ev)
			if err != nil {
				return clErr(op, err)
			}
		}
		return nil
	}
	return wait, release, nil
}
