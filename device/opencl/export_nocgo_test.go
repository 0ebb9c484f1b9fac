//go:build !cgo

package opencl

import "github.com/gompt/gompt/device"

// WorkGroupLimits has nothing to report in a build without cgo (there are
// no OpenCL devices).
func WorkGroupLimits(f device.Function) (limit, multiple int) { return 0, 0 }
