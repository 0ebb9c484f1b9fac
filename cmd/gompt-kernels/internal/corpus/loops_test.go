package corpus

import (
	"errors"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
)

// A checked kernel launched grid-stride (one work-item for every row)
// whose work-item loops past llvmpipe's 65535 turns in all gives Go's
// answer or fails with a device.FaultLoopLimit, never a wrong answer
// without a word: CSR over 4 rows of 20000 nonzeros each. On llvmpipe the
// driver ends the last row's loop early, and then the grid-stride loop,
// which has two exits (its end and the stop of a failed check): such a
// loop leaves by neither, so a check after it on one of the exits' paths
// never ran (the launch succeeded with y[3] short).
func TestLongLoopsFailWithLoopLimit(t *testing.T) {
	const rows, per, ncols = 4, 20000, 7
	nnz := rows * per
	rowPtr := make([]int32, rows+1)
	for r := range rowPtr {
		rowPtr[r] = int32(r * per)
	}
	cols, vals := make([]int32, nnz), make([]float32, nnz)
	for k := range cols {
		cols[k], vals[k] = int32(k%ncols), float32(k%3)
	}
	x := []float32{1, 2, 3, 4, 5, 6, 7}
	want := make([]float32, rows)
	for r := range want {
		CSR(r, rows, nnz, ncols, rowPtr, cols, vals, x, want)
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		y := filled(rows, -1)
		err := target.Target(target.Region{Device: target.Dev(dev), Kernel: CSRKernel,
			Shape: target.Shape{Size: [3]int{rows, 1, 1}, Teams: 1, Threads: 1},
			Maps:  []target.Map{target.To(rowPtr), target.To(cols), target.To(vals), target.To(x), target.From(y)},
			Args: []target.Arg{target.Int(rows), target.Int(nnz), target.Int(ncols), target.Slice(rowPtr), target.Slice(cols),
				target.Slice(vals), target.Slice(x), target.Slice(y)}})
		var kf *device.KernelFault
		if errors.As(err, &kf) && kf.Site.Kind == device.FaultLoopLimit {
			t.Logf("%s: %v", what, err)
			continue
		}
		if assert.NoError(t, err, what) {
			assert.Equal(t, want, y, "%s: y without an error", what)
		}
	}
}

// The same for a reduction, whose entry leaves its loop over the team's
// points at the end or at a failed check's stop: DotRange over 4 points
// of 20000 products each, one team of one work-item.
func TestLongReductionLoopsFailWithLoopLimit(t *testing.T) {
	const n, k = 4, 20000
	x, y := make([]int64, n*k), make([]int64, n*k)
	for i := range x {
		x[i], y[i] = int64(i%5), int64(i%7)
	}
	var want int64
	for i := range n {
		want += DotRange(i, n, k, x, y)
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		partial := []int64{-1}
		err := target.Target(target.Region{Device: target.Dev(dev), Kernel: DotRangeKernel,
			Shape: target.Shape{Size: [3]int{n, 1, 1}, Teams: 1, Threads: 1},
			Maps:  []target.Map{target.To(x), target.To(y), target.From(partial)},
			Args:  []target.Arg{target.Int(n), target.Int(k), target.Slice(x), target.Slice(y), target.Slice(partial)}})
		var kf *device.KernelFault
		if errors.As(err, &kf) && kf.Site.Kind == device.FaultLoopLimit {
			t.Logf("%s: %v", what, err)
			continue
		}
		if assert.NoError(t, err, what) {
			assert.Equal(t, want, partial[0], "%s: the sum without an error", what)
		}
	}
}
