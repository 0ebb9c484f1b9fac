package kernels_test

import (
	"testing"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/kernels/kerneltest"
	"github.com/gompt/gompt/kernels/launch"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

// MatmulTiled, a team kernel, gives Matmul's result bit for bit on every
// device present, for sizes that are and are not multiples of its 64x64
// tiles and their 16-deep steps.
func TestMatmulTiled(t *testing.T) {
	kerneltest.CheckKernel(t, kernels.MatmulTiled)
	devs := kerneltest.Devices()
	for _, sz := range [][3]int{{1, 1, 1}, {16, 16, 16}, {33, 17, 40}, {64, 80, 48}, {5, 100, 3}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = float32(i%13)/13 - 0.3
		}
		for i := range b {
			b[i] = float32(i%7)/7 - 0.5
		}
		want := make([]float32, m*n)
		require.NoError(t, launch.RunMatmul(target.Dev(target.InitialDevice), m, n, k, a, b, want))
		for _, dev := range devs {
			c := make([]float32, m*n)
			require.NoError(t, launch.RunMatmulTiled(target.Dev(dev), m, n, k, a, b, c), target.Describe(dev))
			require.Equal(t, want, c, "%s: %dx%dx%d", target.Describe(dev), m, n, k)
		}
	}
}
