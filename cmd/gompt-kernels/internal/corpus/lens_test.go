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

// csr is a random sparse rows x ncols matrix in CSR form (some rows
// empty), and an x.
func csr(rows, ncols int, seed int) (rowPtr, cols []int32, vals, x []float32) {
	rowPtr = []int32{0}
	h := uint32(seed)
	next := func() uint32 { h = h*1664525 + 1013904223; return h >> 8 }
	for range rows {
		for range next() % 5 {
			cols = append(cols, int32(next()%uint32(ncols)))
			vals = append(vals, float32(int32(next()%2001)-1000)/64)
		}
		rowPtr = append(rowPtr, int32(len(cols)))
	}
	x = make([]float32, ncols)
	for i := range x {
		x[i] = float32(int32(next()%4001)-2000) / 128
	}
	return rowPtr, cols, vals, x
}

// A CSR matrix-vector product, len(rowPtr)=rows+1 and len(y)=2*rows-1 (a
// sum and a difference), runs on every device as the Go function called
// at each row does, bit for bit; a shorter rowPtr is refused with its Len.
func TestSpMVLensWithSums(t *testing.T) {
	for _, rows := range []int{1, 2, 7, 300, 4099} {
		ncols := rows/3 + 1
		rowPtr, cols, vals, x := csr(rows, ncols, rows)
		nnz := len(cols)
		if nnz == 0 {
			rowPtr[rows], cols, vals, nnz = 1, []int32{0}, []float32{2}, 1
		}
		want := make([]float32, 2*rows-1)
		for r := range rows {
			SpMV(r, rows, nnz, ncols, rowPtr, cols, vals, x, want)
		}
		for _, dev := range devices() {
			what := fmt.Sprintf("%d rows on %s", rows, target.Describe(dev))
			y := make([]float32, 2*rows-1)
			require.NoError(t, RunSpMV(target.Dev(dev), rows, nnz, ncols, rowPtr, cols, vals, x, y), what)
			require.Equal(t, want, y, what)
		}
	}
	rowPtr, cols, vals, x := csr(7, 3, 1)
	y := make([]float32, 13)
	err := RunSpMV(target.Dev(target.DefaultDevice), 7, len(cols), 3, rowPtr[:7], cols, vals, x, y)
	if assert.Error(t, err, "rowPtr of 7 elements for 7 rows") {
		assert.Contains(t, err.Error(), `kernel SpMV argument 3 (rowPtr): slice of 7 int32 elements, but the kernel needs 8 (Len "rows+1")`)
	}
}
