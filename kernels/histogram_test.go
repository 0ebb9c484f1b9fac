package kernels_test

import (
	"testing"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/kernels/kerneltest"
	"github.com/gompt/gompt/kernels/launch"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

// Histogram, an array reduction, counts exactly on every device present,
// adding to what the bins hold.
func TestHistogram(t *testing.T) {
	kerneltest.CheckKernel(t, kernels.Histogram)
	devs := kerneltest.Devices()
	for _, n := range []int{1, 1000, 1 << 20} {
		v := make([]uint8, n)
		want := make([]uint32, 256)
		for i := range v {
			v[i] = uint8((i * 2654435761) >> 11)
			want[v[i]] += 2
		}
		for _, dev := range devs {
			h := make([]uint32, 256)
			require.NoError(t, launch.RunHistogram(target.Dev(dev), n, v, h), target.Describe(dev))
			require.NoError(t, launch.RunHistogram(target.Dev(dev), n, v, h), target.Describe(dev))
			require.Equal(t, want, h, "%s: n = %d", target.Describe(dev), n)
		}
	}
}
