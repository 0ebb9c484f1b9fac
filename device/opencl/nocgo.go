//go:build !cgo

package opencl

import (
	"errors"

	"github.com/gompt/gompt/device"
)

var errNoCgo = errors.New("not available: built without cgo")

func load() ([]device.Device, error) { return nil, device.NoDevice(Name, errNoCgo) }

// LaunchGeometry fails in a build without cgo.
func LaunchGeometry(f device.Function, s device.Shape) (global, local [3]int, err error) {
	return global, local, errNoCgo
}

// EventProfile fails in a build without cgo.
func EventProfile(ev device.Event) (Profile, error) { return Profile{}, errNoCgo }
