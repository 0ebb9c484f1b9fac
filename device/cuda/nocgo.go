//go:build !cgo

package cuda

import (
	"errors"
	"time"

	"github.com/gompt/gompt/device"
)

var errNoCgo = errors.New("not available: built without cgo")

// plugin of a build without cgo: no devices.
type plugin struct{ lib string }

func newPlugin(lib string) *plugin { return &plugin{lib: lib} }

// Devices returns no devices and the reason: the driver cannot be loaded
// without cgo.
func (p *plugin) Devices() ([]device.Device, error) {
	return nil, device.NoDevice("cuda", errNoCgo)
}

// RawEmptyLaunchSync fails in a build without cgo.
func RawEmptyLaunchSync(d device.Device, iters int) (time.Duration, error) { return 0, errNoCgo }

// RawCopy fails in a build without cgo.
func RawCopy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}

// RawLoad fails in a build without cgo.
func RawLoad(d device.Device, ptx string, unique bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}
