package main

import (
	"slices"
	"testing"

	"github.com/gompt/gompt/kernels/kerneltest"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

// On every device, the steps give the Go loop's grid bit for bit, and the
// data region copies back only the final grid: after an odd number of
// steps the final grid is the second one, and the first, mapped to the
// device only, still holds the initial grid on the host.
func TestEveryDevice(t *testing.T) {
	devs := kerneltest.Devices()
	const X, Y, alpha = 37, 23, float32(0.23)
	for _, dev := range devs {
		for _, steps := range []int{1, 6, 13} {
			a := initial(X, Y)
			got, err := runOn(dev, a, X, Y, steps, alpha)
			require.NoError(t, err, target.Describe(dev))
			want := reference(X, Y, steps, alpha)
			require.True(t, slices.Equal(want, got), "%s, %d steps: the grid differs from the Go loop's", target.Describe(dev), steps)
			if steps%2 == 1 && dev != target.InitialDevice {
				require.Equal(t, initial(X, Y), a, "%s, %d steps: the first grid was copied back", target.Describe(dev), steps)
			}
		}
	}
}
