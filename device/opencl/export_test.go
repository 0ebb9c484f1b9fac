//go:build cgo

package opencl

import "github.com/gompt/gompt/device"

// StagedLaunches returns how many launches on OpenCL device d passed
// unaligned buffer arguments through temporary buffers.
func StagedLaunches(d device.Device) uint64 { return d.(*clDevice).staged.Load() }
