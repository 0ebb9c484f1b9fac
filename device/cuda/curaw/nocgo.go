//go:build !cgo

package curaw

import (
	"errors"
	"time"

	"github.com/gompt/gompt/device"
)

var errNoCgo = errors.New("curaw: not available: built without cgo")

// EmptyPTX is the empty kernel EmptyLaunchSync launches (see the cgo
// build).
const EmptyPTX = ""

// EmptyLaunchSync fails in a build without cgo.
func EmptyLaunchSync(d device.Device, iters int) (time.Duration, error) { return 0, errNoCgo }

// Copy fails in a build without cgo.
func Copy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}

// Load fails in a build without cgo.
func Load(d device.Device, ptx string, unique bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}
