package target

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A construct whose kernel fails on the device, found by a wait for its
// queue, and whose queue then also fails a later wait, reports the
// kernel's failure (both are kept for the construct's end, the first
// wins): the first thing that
// went wrong, which the user can act on, not a later symptom. The kernel
// runs on the queue's goroutine behind a large copy, so its failure is
// found by the wait before the first free at the construct's end (of z,
// the last item: exits go in reverse list order); the second wait, before
// x's free, is made to fail.
func TestFirstDeviceFailureIsReported(t *testing.T) {
	r := faultRuntime(t)
	noLeak(t, r)
	x := make([]float32, 16)
	z := make([]float32, sharedLen) // copied on the queue's goroutine
	before := faultPlan.Injected(faulty.Sync)
	faultPlan.FailNth(faulty.Sync, 2, device.CodeUnknown)
	err := Target(Region{Device: Dev(0), Kernel: panics, Shape: N(1), Maps: []Map{To(x), To(z)}, Args: []Arg{Int(1)}})
	require.Equal(t, 1, faultPlan.Injected(faulty.Sync)-before, "injected failures of the second queue wait: the test no longer sets up what it means to")
	require.ErrorContains(t, err, "panicked in team 0 of 1: boom", "a region whose kernel failed, then a queue wait: want the kernel's failure")
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the failed region")
}
