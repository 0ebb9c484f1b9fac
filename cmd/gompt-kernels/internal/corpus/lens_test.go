package corpus

import (
	"fmt"
	"testing"

	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// productLen is ProductLen's b, computed in plain Go.
func productLen(m, k int, mul []int64) []int64 {
	b := make([]int64, max(m*k, 0))
	for j := range b {
		b[j] = int64(j)*100 + int64(len(b)) + mul[j]
	}
	return b
}

// A buffer of len(b)=m*k holds m*k elements as Go multiplies them: with
// m and k negative, the runtime refuses a shorter buffer on every device,
// before the kernel's proven stores at [0, m*k) run (which wrote past it
// on POCL, and through a nil slice on host:0, when such a Len counted 0),
// and runs it on one that holds them; with one of them negative the
// length is 0 and the loop runs 0 times.
func TestProductLenOfNegativeFactors(t *testing.T) {
	run := func(dev int, m, k int, mul, b []int64) error {
		return target.Target(target.Region{Device: target.Dev(dev), Kernel: ProductLenKernel, Shape: target.Shape{Size: [3]int{3, 1, 1}},
			Maps: []target.Map{target.To(mul), target.ToFrom(b)},
			Args: []target.Arg{target.Int(3), target.Int(m), target.Int(k), target.Slice(mul), target.Slice(b)}})
	}
	mul := []int64{7, 8, 9, 10, 11, 12}
	for _, dev := range devices() {
		what := target.Describe(dev)
		short := []int64{-1}
		err := run(dev, -2, -3, mul, short)
		if assert.Error(t, err, "%s: m=-2 k=-3, b of 1 element", what) {
			assert.Contains(t, err.Error(), "slice of 1 int64 elements, but the kernel needs 6", what)
		}
		assert.Equal(t, []int64{-1}, short, "%s: the refused launch left b as it was", what)

		b := make([]int64, 6)
		require.NoError(t, run(dev, -2, -3, mul, b), what)
		assert.Equal(t, productLen(-2, -3, mul), b, "%s: m=-2 k=-3", what)

		for _, mk := range [][2]int{{-2, 3}, {2, -3}, {0, -3}} {
			one := []int64{-1}
			require.NoError(t, run(dev, mk[0], mk[1], mul, one), "%s: m=%d k=%d", what, mk[0], mk[1])
			assert.Equal(t, []int64{-1}, one, fmt.Sprintf("%s: m=%d k=%d: len(b) 0, nothing stored", what, mk[0], mk[1]))
		}
	}
}
