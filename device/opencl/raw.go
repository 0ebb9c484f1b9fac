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
