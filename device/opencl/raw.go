//go:build cgo

package opencl

import (
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

const emptySource = "__kernel void gompt_raw_empty(void) {}\n"

// emptyKernel builds the device's empty kernel once: Record enqueues it as
// a timestamp on drivers whose markers carry no profiling times.
func (d *clDevice) emptyKernel() (cl.Kernel, error) {
	d.rawOnce.Do(func() { d.rawProg, d.rawKern, d.rawErr = d.buildInternal(emptySource, "gompt_raw_empty") })
	return d.rawKern, d.rawErr
}

// BindingQueue opens the device if it is not open yet and returns its
// OpenCL context and device and a fresh in-order profiling queue, which
// the caller releases. Only the raw baselines of device/opencl/clraw use it.
func (d *clDevice) BindingQueue() (cl.Context, cl.DeviceID, cl.CommandQueue, error) {
	if err := d.init(); err != nil {
		return 0, 0, 0, err
	}
	q, err := d.createQueue()
	if err != nil {
		return 0, 0, 0, err
	}
	return d.ctx, d.dev, q, nil
}
