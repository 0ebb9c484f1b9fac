//go:build !cgo

package opencl

import (
	"errors"
	"time"

	"github.com/gompt/gompt/device"
)

var errNoCgo = errors.New("not available: built without cgo")

func load() ([]device.Device, error) { return nil, device.NoDevice(Name, errNoCgo) }

// RawEmptyKernel fails in a build without cgo.
func RawEmptyKernel(d device.Device, iters int) (time.Duration, error) { return 0, errNoCgo }

// RawCopy fails in a build without cgo.
func RawCopy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}

// LaunchGeometry fails in a build without cgo.
func LaunchGeometry(f device.Function, s device.Shape) (global, local [3]int, err error) {
	return global, local, errNoCgo
}

// EventProfile fails in a build without cgo.
func EventProfile(ev device.Event) (Profile, error) { return Profile{}, errNoCgo }

// RawSpinSource is the kernel of the wait baselines (see the cgo build).
const RawSpinSource = ""

// RawWait fails in a build without cgo.
func RawWait(d device.Device, steps uint32) (wait func(iters int) error, release func(), err error) {
	return nil, nil, errNoCgo
}

// RawCopyPinned fails in a build without cgo.
func RawCopyPinned(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}
