//go:build !cgo

package cuda

import (
	"errors"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/generic"
)

var errNoCgo = errors.New("not available: built without cgo")

// newPlugin returns the plugin of a build without cgo: no devices, and
// the reason (the driver cannot be loaded without cgo).
func newPlugin(string) *generic.Plugin {
	return generic.NewPlugin(Name, func() ([]device.Device, error) { return nil, errNoCgo })
}
