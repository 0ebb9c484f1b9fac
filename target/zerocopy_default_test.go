package target

import (
	"testing"

	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// By default (GOMPT_ZERO_COPY unset) every map copies, as OpenMP 5.2's
// data environment says, also on a device that shares the host's memory:
// a program may tell that the host's write after a to map is not what a
// kernel reads, and that a kernel's write to an item mapped to only is
// not in the host's slice. Zero-copy maps, which change both, are opt-in
// (target/zerocopytest runs them).
func TestDefaultMapsCopy(t *testing.T) {
	if state().cfg.zeroCopy {
		t.Skip("GOMPT_ZERO_COPY=on: this test is of the default")
	}
	for _, d := range Devices() {
		assert.False(t, d.ZeroCopy, "%s: zero-copy maps without GOMPT_ZERO_COPY=on", d.ID)
		const n = 1024
		x, y := make([]float32, n), make([]float32, n)
		err := Data(d.Num, []Map{To(x), To(y)}, func() error {
			x[0], y[0] = 1, 1 // after the map: the device copies hold 0
			return Target(Region{Device: Dev(d.Num), Kernel: kernels.Saxpy, Shape: N(n),
				Args: []Arg{Int(n), Float32(2), Slice(x), Slice(y)}})
		})
		require.NoError(t, err, d.ID)
		assert.Equal(t, float32(1), y[0], "%s: y was mapped to only: the host's slice keeps the host's write", d.ID)
	}
}
