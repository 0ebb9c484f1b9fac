package corpus

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/gompt/gompt/kernels/kerneltest"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// RowProducts' Go image with c inside b (one element into b's first
// row), called directly: a construct cannot pass it so (the runtime
// refuses list items that share storage, as OpenMP does), but a Go
// image must still give Go's bits for any arguments. The image sees the
// overlap and runs the loop as written, so each turn reads the elements
// the turn before updated, as in Go; its jammed loop, which takes each
// element through four turns before the next, gives other bits here.
func TestRowProductsImageOverlappingBuffers(t *testing.T) {
	const n, nk = 6, 8
	buf := make([]float64, nk*n+1)
	for i := range buf {
		buf[i] = float64(i%7)/5 - 0.4
	}
	a := []float64{0.5, -1.25, 2, 0.75, -0.5, 1.5, 0.25, -2}
	want := slices.Clone(buf)
	RowProducts(0, 1, n, nk, 1.5, want[1:n+1], a, want[:nk*n])
	got := slices.Clone(buf)
	bytes := device.Bytes(got)
	args := &device.HostArgs{Kernel: RowProductsKernel,
		Bufs: [][]byte{nil, nil, nil, nil, bytes[8 : (n+1)*8], device.Bytes(a), bytes[:nk*n*8]},
		Args: []device.Arg{{Bits: 1}, {Bits: n}, {Bits: nk}, {Bits: math.Float64bits(1.5)}, {}, {}, {}}}
	RowProductsKernel.Host()(args, device.Range{Hi: [3]int{1, 1, 1}}, 0, 1)
	for i := range want {
		require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "element %d: %v, Go gives %v", i, got[i], want[i])
	}
	// A construct refuses the two slices.
	err := RunRowProducts(target.Dev(target.InitialDevice), 1, n, nk, 1.5, got[1:n+1], a, got[:nk*n])
	require.Error(t, err, "RunRowProducts with c inside b")
	assert.Contains(t, err.Error(), "must not share storage", "RunRowProducts with c inside b")
}

// SumTurns's Go image called with out inside a (no construct passes
// them: it refuses list items that share storage) runs its first loop as
// written, each turn's tail before the next turn's head: jammed, the
// later turns would read a before the earlier turns' tails wrote it.
func TestSumTurnsImageOverlappingBuffers(t *testing.T) {
	const n, k = 9, 3
	buf := make([]float64, n+2)
	for i := range buf {
		buf[i] = float64(i%5)/3 - 0.4
	}
	w := []float64{0.75, -1.5, 2}
	far, last := []float64{0.25}, []float64{0}
	want := slices.Clone(buf)
	SumTurns(0, 1, n, k, 0, 0, want[:n], w, want[2:n+2], slices.Clone(far), slices.Clone(last))
	got := slices.Clone(buf)
	bytes := device.Bytes(got)
	args := &device.HostArgs{Kernel: SumTurnsKernel,
		Bufs: [][]byte{nil, nil, nil, nil, nil, bytes[:n*8], device.Bytes(w), bytes[2*8 : (n+2)*8], device.Bytes(far), device.Bytes(last)},
		Args: []device.Arg{{Bits: 1}, {Bits: n}, {Bits: k}, {Bits: 0}, {Bits: 0}, {}, {}, {}, {}, {}}}
	SumTurnsKernel.Host()(args, device.Range{Hi: [3]int{1, 1, 1}}, 0, 1)
	for i := range want {
		require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "element %d: %v, Go gives %v", i, got[i], want[i])
	}
}

// SumRows with c inside b, through one map of one slice (a launcher
// refuses the two slices; a region's arguments may point into one list
// item): every device runs the loop as written, each row's turns in
// order, so a later turn reads b after an earlier turn's tail wrote it
// (turn j reads b[14*9+j], the c[j-2] of two turns before). c begins 512
// bytes in, a multiple of POCL's base address alignment (128 bytes) and
// rusticl's (512), so that an OpenCL device passes it as a sub-buffer of
// the same memory (an argument at another offset is passed through a
// copy: the plugin's Launch says which kernels that suits).
func TestSumRowsOverlappingArguments(t *testing.T) {
	const m, n, k, at = 1, 9, 16, 128
	buf := make([]float32, max(at+n, k*n))
	for i := range buf {
		buf[i] = float32(i%5)/3 - 0.4
	}
	a := []float32{0.75, -1.5, 0.25, 1, -0.5, 2, -1.25, 0.5, 1.5, -0.75, 0.125, -2, 0.625, 1.25, -0.25, 0.875}
	want := slices.Clone(buf)
	SumRows(0, m, n, k, a, want[:k*n], want[at:at+n])
	for _, dev := range devices() {
		if _, _, refuses := kerneltest.Refuses(SumRowsKernel, dev); refuses {
			continue // TestAgainstGo checks a refusal
		}
		got := slices.Clone(buf)
		err := target.Target(target.Region{
			Device: target.Dev(dev),
			Kernel: SumRowsKernel,
			Shape:  target.N(m),
			Maps:   []target.Map{target.To(a), target.ToFrom(got)},
			Args: []target.Arg{target.Int(m), target.Int(n), target.Int(k),
				target.Slice(a), target.Slice(got[:k*n]), target.Slice(got[at : at+n])},
		})
		if !assert.NoError(t, err, "on %s", target.Describe(dev)) {
			continue
		}
		for i := range want {
			if !assert.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "element %d on %s: %v, Go gives %v", i, target.Describe(dev), got[i], want[i]) {
				break
			}
		}
	}
}

// RowUpdates's Go image called with c inside a (no construct passes
// them) runs its loops as written: jammed, a later k's products would
// read elements of a before the earlier k's updates of c wrote them.
func TestRowUpdatesImageOverlappingBuffers(t *testing.T) {
	const n, m = 3, 8
	buf := make([]float64, n*m)
	for i := range buf {
		buf[i] = float64(i%7)/5 - 0.4
	}
	want := slices.Clone(buf)
	for i := range n {
		RowUpdates(i, n, m, 1.5, want[1:n*n+1], want)
	}
	got := slices.Clone(buf)
	bytes := device.Bytes(got)
	args := &device.HostArgs{Kernel: RowUpdatesKernel,
		Bufs: [][]byte{nil, nil, nil, bytes[8 : (n*n+1)*8], bytes},
		Args: []device.Arg{{Bits: n}, {Bits: m}, {Bits: math.Float64bits(1.5)}, {}, {}}}
	RowUpdatesKernel.Host()(args, device.Range{Hi: [3]int{n, 1, 1}}, 0, 1)
	for i := range want {
		require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "element %d: %v, Go gives %v", i, got[i], want[i])
	}
}
