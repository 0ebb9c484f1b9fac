// Package rawbench holds the raw baselines of cmd/ompt-bench: the work of a
// benchmark case done through a plugin's driver binding alone (internal/cu,
// internal/cl), with none of the runtime around it, so that the runtime's
// figure and the driver's can be compared in one run.
//
// It is test and benchmark scaffolding: no production package imports it,
// so it stays out of offload programs. It reaches a plugin device's driver
// context through an exported method of the plugin's unexported device type
// (cudaDevice, clDevice below), which only this package asserts.
package rawbench

import (
	"slices"
	"time"
)

func median(ts []time.Duration) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	slices.Sort(ts)
	return ts[len(ts)/2]
}
