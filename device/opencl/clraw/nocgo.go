//go:build !cgo

package clraw

import (
	"errors"
	"time"

	"github.com/gompt/gompt/device"
)

var errNoCgo = errors.New("clraw: not available: built without cgo")

// SpinSource is the kernel of the wait baselines (see the cgo build).
const SpinSource = ""

// EmptyKernel fails in a build without cgo.
func EmptyKernel(d device.Device, iters int) (time.Duration, error) { return 0, errNoCgo }

// Copy fails in a build without cgo.
func Copy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}

// CopyPinned fails in a build without cgo.
func CopyPinned(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}

// Wait fails in a build without cgo.
func Wait(d device.Device, steps uint32) (wait func(iters int) error, release func(), err error) {
	return nil, nil, errNoCgo
}
