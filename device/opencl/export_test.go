//go:build cgo

package opencl

import "github.com/gompt/gompt/device"

// StagedLaunches returns how many launches on OpenCL device d passed
// unaligned buffer arguments through temporary buffers.
func StagedLaunches(d device.Device) uint64 { return d.(*clDevice).staged.Load() }

// WorkGroupLimits returns the largest work-group of f on its device and
// the kernel's preferred work-group size multiple.
func WorkGroupLimits(f device.Function) (limit, multiple int) {
	fn := f.(*function)
	return fn.lim.max, fn.lim.multiple
}

// CachedSubBuffers returns how many sub-buffers OpenCL device d keeps for
// launch arguments inside buffers.
func CachedSubBuffers(d device.Device) int {
	c := &d.(*clDevice).subs
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.subs)
}
