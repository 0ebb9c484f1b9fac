//go:build !cgo

package rawbench

import (
	"errors"
	"time"

	"github.com/gompt/gompt/device"
)

var errNoCgo = errors.New("rawbench: not available: built without cgo")

// EmptyPTX is the empty kernel CUDAEmptyLaunchSync launches (see the cgo
// build).
const EmptyPTX = ""

// CLSpinSource is the kernel of the wait baselines (see the cgo build).
const CLSpinSource = ""

// CUDAEmptyLaunchSync fails in a build without cgo.
func CUDAEmptyLaunchSync(d device.Device, iters int) (time.Duration, error) { return 0, errNoCgo }

// CUDACopy fails in a build without cgo.
func CUDACopy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}

// CUDALoad fails in a build without cgo.
func CUDALoad(d device.Device, ptx string, unique bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}

// CLEmptyKernel fails in a build without cgo.
func CLEmptyKernel(d device.Device, iters int) (time.Duration, error) { return 0, errNoCgo }

// CLCopy fails in a build without cgo.
func CLCopy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}

// CLCopyPinned fails in a build without cgo.
func CLCopyPinned(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	return 0, errNoCgo
}

// CLWait fails in a build without cgo.
func CLWait(d device.Device, steps uint32) (wait func(iters int) error, release func(), err error) {
	return nil, nil, errNoCgo
}
