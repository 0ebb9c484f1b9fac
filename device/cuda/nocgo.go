//go:build !cgo

package cuda

import (
	"errors"

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
