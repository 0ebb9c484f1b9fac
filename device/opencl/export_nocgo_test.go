//go:build !cgo

package opencl

import (
	"testing"

	"github.com/gompt/gompt/device"
)

// PretendNVIDIA is not available without cgo: there are no devices.
func PretendNVIDIA(t testing.TB, d device.Device) device.Device {
	t.Skip("built without cgo")
	return d
}

// PretendAlign is not available without cgo: there are no devices.
func PretendAlign(t testing.TB, d device.Device, align int) device.Device {
	t.Skip("built without cgo")
	return d
}

// WorkGroupLimits has nothing to report in a build without cgo (there are
// no OpenCL devices).
func WorkGroupLimits(f device.Function) (limit, multiple int) { return 0, 0 }

// PretendNoTimes is not available without cgo: there are no devices.
func PretendNoTimes(t testing.TB, d device.Device) device.Device {
	t.Skip("built without cgo")
	return d
}

// PretendSmallGroups is not available without cgo: there are no devices.
func PretendSmallGroups(t testing.TB, d device.Device, n int) device.Device {
	t.Skip("built without cgo")
	return d
}

// PretendTrueSmallGroups is not available without cgo: there are no
// devices.
func PretendTrueSmallGroups(t testing.TB, d device.Device, n int) device.Device {
	t.Skip("built without cgo")
	return d
}

// PretendLocalScale is not available without cgo: there are no devices.
func PretendLocalScale(t testing.TB, d device.Device, n int) device.Device {
	t.Skip("built without cgo")
	return d
}
