package corpus

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels/kerneltest"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

// entry is one corpus kernel: its generated variable and launcher, the Go
// function, the positions of its extents among the launcher's arguments,
// and inputs at the edges of Go's rules (the Sample's random ones are run
// too).
type entry struct {
	k      *device.Kernel
	fn     any
	run    any
	ext    []int
	reduce string
	inputs func() [][]any
	noHost bool // the Go function panics (OutOfRange): no CheckKernel
}

var entries = []entry{
	{k: Int64OpsKernel, fn: Int64Ops, run: RunInt64Ops, ext: []int{0}, inputs: func() [][]any {
		e := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 31, -7, -1, 0, 1, 2, 3, 7, 1 << 32, math.MaxInt64}
		a, b := cross(e)
		return [][]any{{len(a), a, b, make([]int64, 9*len(a))}}
	}},
	{k: IntOpsKernel, fn: IntOps, run: RunIntOps, ext: []int{0}, inputs: func() [][]any {
		e := []int64{math.MinInt64, -1, 0, 1, 3, -5, math.MaxInt64, 1 << 40}
		a, b := cross(e)
		return [][]any{{len(a), ints(a), ints(b), make([]int, 6*len(a))}}
	}},
	{k: Uint64OpsKernel, fn: Uint64Ops, run: RunUint64Ops, ext: []int{0}, inputs: func() [][]any {
		e := []int64{0, 1, 2, -1, math.MinInt64, 12345, 1 << 32}
		a, b := cross(e)
		return [][]any{{len(a), uints(a), uints(b), make([]uint64, 6*len(a))}}
	}},
	{k: ShiftsKernel, fn: Shifts, run: RunShifts, ext: []int{0}, inputs: func() [][]any {
		var a []int64
		var s []uint64
		for _, x := range []int64{math.MinInt64, -5, -1, 0, 1, 0x0123456789abcdef, math.MaxInt64, 200, -200} {
			for _, c := range []uint64{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 62, 63, 64, 65, 127, 128, 1 << 40, math.MaxUint64} {
				a, s = append(a, x), append(s, c)
			}
		}
		return [][]any{{len(a), a, s, make([]int64, 10*len(a))}}
	}},
	{k: NarrowKernel, fn: Narrow, run: RunNarrow, ext: []int{0}, inputs: func() [][]any {
		var a, b []int8
		var c, d []uint16
		for _, x := range []int8{-128, -127, -1, 0, 1, 2, 127} {
			for _, y := range []int8{-128, -1, 0, 1, 3, 127} {
				for _, u := range []uint16{0, 1, 255, 256, 32768, 65535} {
					a, b, c, d = append(a, x), append(b, y), append(c, u), append(d, u^0xff)
				}
			}
		}
		return [][]any{{len(a), a, b, c, d, make([]int64, 12*len(a))}}
	}},
	{k: ConversionsKernel, fn: Conversions, run: RunConversions, ext: []int{0}, inputs: func() [][]any {
		a := []int64{0, 1, -1, 1<<53 + 1, 1<<24 + 1, math.MinInt64, math.MaxInt64, 123456789, -987654321}
		f := []float64{0, 1.5, 12345.678, 1e15, 2e17, 3.999e9, 0.7, 2.5e16, 1e9}
		return [][]any{{len(a), a, f, make([]float64, 8*len(a))}}
	}},
	{k: FloatOpsKernel, fn: FloatOps, run: RunFloatOps, ext: []int{0}, inputs: func() [][]any {
		e := []float32{0.1, -2.5, 3, 1e-40, 1e38, 0.3333333, -7e-3}
		var a, b, c []float32
		for _, x := range e {
			for _, y := range e {
				for _, z := range e {
					a, b, c = append(a, x), append(b, y), append(c, z)
				}
			}
		}
		return [][]any{{len(a), a, b, c, make([]float32, 12*len(a))}}
	}},
	{k: Float64OpsKernel, fn: Float64Ops, run: RunFloat64Ops, ext: []int{0}},
	{k: ModRemKernel, fn: ModRem, run: RunModRem, ext: []int{0}, inputs: func() [][]any {
		e := []float64{math.NaN(), math.Float64frombits(0x7ff8000000000123), math.Float64frombits(0xfff8000000000000), math.Inf(1), math.Inf(-1),
			0, math.Copysign(0, -1), 1, -1, 2.5, -7.25, 1e308, 5e-324}
		a, b := crossF(e)
		return [][]any{{len(a), a, b, make([]float64, 4*len(a))}}
	}},
	{k: MinMaxKernel, fn: MinMax, run: RunMinMax, ext: []int{0}, inputs: func() [][]any {
		e := []float64{math.NaN(), math.Float64frombits(0x7ff8000000000123), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 2.5}
		a, b := crossF(e)
		c, d := make([]float32, len(a)), make([]float32, len(a))
		for i := range a {
			c[i], d[i] = float32(a[i]), float32(b[i])
		}
		return [][]any{{len(a), a, b, c, d, make([]float64, 8*len(a))}}
	}},
	{k: ClassifyKernel, fn: Classify, run: RunClassify, ext: []int{0}, inputs: func() [][]any {
		a := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1e300, 5e-324, 3.4e38, 1e39}
		return [][]any{{len(a), a, make([]uint64, 8*len(a))}}
	}},
	{k: TranscendentalKernel, fn: Transcendental, run: RunTranscendental, ext: []int{0}},
	{k: ControlKernel, fn: Control, run: RunControl, ext: []int{0}, inputs: func() [][]any {
		var a []int32
		for x := int32(-40); x < 400; x += 3 {
			a = append(a, x)
		}
		return [][]any{{len(a), a, make([]int64, len(a))}}
	}},
	{k: SignExtendKernel, fn: SignExtend, run: RunSignExtend, ext: []int{0}, inputs: func() [][]any {
		var a []int32
		for _, x := range []int64{math.MinInt32, math.MinInt32 + 1, -1 << 16, -129, -128, -6, -5, -4, -1, 0, 1, 4, 5, 6, 127, 128, 1 << 16, math.MaxInt32 - 1, math.MaxInt32} {
			a = append(a, int32(x))
		}
		b, c := make([]int16, len(a)), make([]int8, len(a))
		for i, x := range a {
			b[i], c[i] = int16(max(min(x, math.MaxInt16), math.MinInt16)), int8(max(min(x, math.MaxInt8), math.MinInt8))
		}
		// The int32 parameter m at its edges; p and k, which give
		// lengths, in TestSignExtendShortLengths.
		var problems [][]any
		for _, m := range []int32{math.MinInt32, math.MinInt32 + 1, -5, -1, 0, 1, 5, math.MaxInt32} {
			problems = append(problems, []any{len(a), m, int32(2), int16(3), a, b, c, make([]int64, 2), make([]int64, 6), make([]int64, 16*len(a))})
		}
		return problems
	}},
	{k: LabelsKernel, fn: Labels, run: RunLabels, ext: []int{0}, inputs: func() [][]any {
		var a []int64
		for x := int64(-3); x < 300; x++ {
			a = append(a, x)
		}
		return [][]any{{len(a), a, make([]int64, len(a))}}
	}},
	{k: HelpersKernel, fn: Helpers, run: RunHelpers, ext: []int{0}, inputs: func() [][]any {
		n := 50
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i)/7 - 3
		}
		return [][]any{
			{n, int8(-128), uint8(255), int16(-32768), uint16(65535), int32(math.MinInt32), uint32(math.MaxUint32), uint64(math.MaxUint64), uint(1 << 63), true, -1.5,
				x, []float32{1, -2, 0.5, 0.25}, make([]int32, n), make([]float32, n)},
			{n, int8(127), uint8(0), int16(32767), uint16(0), int32(math.MaxInt32), uint32(0), uint64(0), uint(0), false, 1e300,
				x, []float32{0, 0, 0, 1}, make([]int32, n), make([]float32, n)},
		}
	}},
	{k: CallFirstKernel, fn: CallFirst, run: RunCallFirst, ext: []int{0}, inputs: func() [][]any {
		h := make([]int32, 40)
		for i := range h {
			h[i] = int32(i*3 - 50)
		}
		return [][]any{{len(h), h, make([]int32, len(h))}}
	}},
	{k: Stencil2DKernel, fn: Stencil2D, run: RunStencil2D, ext: []int{0, 1}},
	{k: Box3DKernel, fn: Box3D, run: RunBox3D, ext: []int{0, 1, 2}},
	{k: SplitFormsKernel, fn: SplitForms, run: RunSplitForms, ext: []int{0, 1}, inputs: func() [][]any {
		var ps [][]any
		for _, nx := range []int{1, 3, 6, 40} {
			for _, ny := range []int{1, 3, 4} {
				for _, a := range []int{math.MinInt64, -3, 0, 1, 3, 41, math.MaxInt64 - 1, math.MaxInt64} {
					// x > nx-b holds nowhere where nx-b is the largest int.
					for _, b := range []int{math.MinInt64 + 1, -3, 0, 1, 3, 41, math.MaxInt64, nx - math.MaxInt64} {
						in := make([]float32, nx*ny)
						for i := range in {
							in[i] = float32(i%7) + 0.25
						}
						ps = append(ps, []any{nx, ny, a, b, in, make([]float32, nx*ny)})
					}
				}
			}
		}
		return ps
	}},
	{k: MatMulKernel, fn: MatMul, run: RunMatMul, ext: []int{1, 0}},
	{k: ConvKernel, fn: Conv, run: RunConv, ext: []int{1, 0}},
	{k: ColumnStatsKernel, fn: ColumnStats, run: RunColumnStats, ext: []int{0}, inputs: func() [][]any {
		// Columns whose count wraps, a stop inside and outside the
		// rows, widths around a multiple of four.
		var ps [][]any
		for _, n := range []int{3, 4, 1027, 4100} {
			for _, stop := range []int{-1, 0, 5, 1 << 40} {
				m := 9
				a := make([]float32, m*n)
				for i := range a {
					a[i] = float32(i%13)/4 - 1
				}
				ps = append(ps, []any{n, m, stop, float32(0.5), a, make([]float32, n), make([]int32, n)})
			}
		}
		return ps
	}},
	{k: JammedKernel, fn: Jammed, run: RunJammed, ext: []int{0}, inputs: func() [][]any {
		// Turns a multiple of four, one, two, three and none; a counter up
		// to the largest int, where ctr+4 would wrap; widths around a
		// multiple of four.
		var ps [][]any
		for _, n := range []int{1, 5, 1030} {
			for _, t := range []struct{ k, lo, hi int }{{8, 0, 8}, {1, -3, 9}, {3, math.MaxInt - 6, math.MaxInt}, {2, math.MaxInt - 3, math.MaxInt}, {13, 5, 5}, {7, math.MinInt, math.MinInt + 2}} {
				a, w := make([]float32, t.k*n), make([]float32, t.k)
				for i := range a {
					a[i] = float32(i%11)/3 - 1
				}
				for i := range w {
					w[i] = 1 + float32(i)/7
				}
				ps = append(ps, []any{n, t.k, t.lo, t.hi, a, w, make([]float32, n), make([]int32, n), make([]float64, n)})
			}
		}
		return ps
	}},
	{k: RowProductsKernel, fn: RowProducts, run: RunRowProducts, ext: []int{0}, inputs: func() [][]any {
		// Turns a multiple of four, fewer than four, four and some left;
		// rows of one element and more.
		var ps [][]any
		for _, nk := range []int{1, 3, 4, 7, 8} {
			for _, n := range []int{1, 5, 33} {
				m := 3
				c, a, b := make([]float64, m*n), make([]float64, m*nk), make([]float64, nk*n)
				for i := range c {
					c[i] = float64(i%9)/7 - 0.5
				}
				for i := range a {
					a[i] = float64(i%5)/3 + 0.25
				}
				for i := range b {
					b[i] = float64(i%11)/9 - 0.3
				}
				ps = append(ps, []any{m, n, nk, 1.5, c, a, b})
			}
		}
		return ps
	}},
	{k: RowRunsKernel, fn: RowRuns, run: RunRowRuns, ext: []int{0}, inputs: func() [][]any {
		// More rows than columns: the points past the diagonal have no
		// turns, and their first loop's row would begin past a's end
		// (n 5, m 9: a[8*5+8:] of 45). Elements below zero (continue)
		// and over lim (break).
		var ps [][]any
		for _, n := range []int{1, 3, 5, 8} {
			for _, m := range []int{1, n, n + 4, 2*n + 3} {
				a, b, d := make([]float64, m*n), make([]float64, m*n), make([]float64, 3*m*n)
				for i := range a {
					a[i] = float64(i%7)/5 - 0.25
					b[i] = float64(i%9)/2 - 1
				}
				for i := range d {
					d[i] = float64(i%5) / 3
				}
				ps = append(ps, []any{m, n, 1.5, a, b, make([]float64, m), d})
			}
		}
		return ps
	}},
	{k: SumTurnsKernel, fn: SumTurns, run: RunSumTurns, ext: []int{0}, inputs: func() [][]any {
		// Turns a multiple of four, fewer than four, some left and (the
		// loop over q) none; inner loops of one turn and more; a counter
		// up to the largest int (hi-q would wrap past it) and one from
		// near the least. (A buffer of no element is refused: n and k
		// are at least 1.)
		var ps [][]any
		for _, n := range []int{1, 3, 4, 5, 8, 11} {
			for _, k := range []int{1, 2, 5} {
				for _, b := range []struct{ lo, hi int }{{0, 9}, {5, 5}, {math.MaxInt - 6, math.MaxInt}, {math.MaxInt - 2, math.MaxInt}, {math.MinInt, math.MinInt + 5}} {
					m := 3
					a, w := make([]float64, m*n), make([]float64, k)
					for i := range a {
						a[i] = float64(i%7)/3 - 0.5
					}
					for i := range w {
						w[i] = 1.25 - float64(i)/4
					}
					far := []float64{0.5, -1, 2}
					ps = append(ps, []any{m, n, k, b.lo, b.hi, a, w, make([]float64, m*n), far, make([]float64, m)})
				}
			}
		}
		return ps
	}},
	{k: SumRowsKernel, fn: SumRows, run: RunSumRows, ext: []int{0}, inputs: func() [][]any {
		// Rows of a multiple of four, fewer than four and some left.
		var ps [][]any
		for _, n := range []int{1, 3, 4, 7, 8, 13} {
			for _, k := range []int{1, 4, 6} {
				m := 3
				a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
				for i := range a {
					a[i] = float32(i%5)/3 - 0.25
				}
				for i := range b {
					b[i] = 0.75 - float32(i%7)/4
				}
				for i := range c {
					c[i] = float32(i%3) - 0.5
				}
				ps = append(ps, []any{m, n, k, a, b, c})
			}
		}
		return ps
	}},
	{k: TriangleKernel, fn: Triangle, run: RunTriangle, ext: []int{0}},
	{k: TriangleToKernel, fn: TriangleTo, run: RunTriangleTo, ext: []int{0}, noHost: true},
	{k: NearMaxKernel, fn: NearMax, run: RunNearMax, ext: []int{0}, noHost: true},
	{k: UnsignedIndexKernel, fn: UnsignedIndex, run: RunUnsignedIndex, ext: []int{0}, noHost: true},
	{k: WrapBoundKernel, fn: WrapBound, run: RunWrapBound, ext: []int{0}, noHost: true},
	{k: RowUpdatesKernel, fn: RowUpdates, run: RunRowUpdates, ext: []int{0}, inputs: func() [][]any {
		// Turns of k a multiple of four, fewer, and some left; rows of
		// one element and more.
		var ps [][]any
		for _, m := range []int{1, 3, 4, 6, 9} {
			for _, n := range []int{1, 2, 5} {
				c, a := make([]float64, n*n), make([]float64, n*m)
				for i := range c {
					c[i] = float64(i%7)/3 - 0.5
				}
				for i := range a {
					a[i] = 0.25 + float64(i%5)/4
				}
				ps = append(ps, []any{n, m, 1.5, c, a})
			}
		}
		return ps
	}},
	{k: PartialKernel, fn: Partial, run: RunPartial, ext: []int{0}},
	{k: TransposeKernel, fn: Transpose, run: RunTranspose, ext: []int{0, 1}},
	{k: SumInt64Kernel, fn: SumInt64, run: RunSumInt64, ext: []int{0}, reduce: "+"},
	{k: SumFloat32Kernel, fn: SumFloat32, run: RunSumFloat32, ext: []int{0}, reduce: "+"},
	{k: SumFloat64In2DKernel, fn: SumFloat64In2D, run: RunSumFloat64In2D, ext: []int{0, 1}, reduce: "+"},
	{k: ProdInt32Kernel, fn: ProdInt32, run: RunProdInt32, ext: []int{0}, reduce: "*"},
	{k: ProdFloat64Kernel, fn: ProdFloat64, run: RunProdFloat64, ext: []int{0}, reduce: "*"},
	{k: MinInt16Kernel, fn: MinInt16, run: RunMinInt16, ext: []int{0, 1, 2}, reduce: "min"},
	{k: MinFloat32Kernel, fn: MinFloat32, run: RunMinFloat32, ext: []int{0}, reduce: "min"},
	{k: MaxUint64Kernel, fn: MaxUint64, run: RunMaxUint64, ext: []int{0}, reduce: "max"},
	{k: MaxFloat64Kernel, fn: MaxFloat64, run: RunMaxFloat64, ext: []int{0}, reduce: "max"},
	{k: OutOfRangeKernel, fn: OutOfRange, run: RunOutOfRange, ext: []int{0}, noHost: true},
	{k: HistogramKernel, fn: Histogram, run: RunHistogram, ext: []int{0}, inputs: func() [][]any {
		// Many points on few bins: every device's atomics contend.
		n := 1 << 16
		v := make([]uint32, n)
		for i := range v {
			v[i] = uint32(i*7+i/3) % 1000
		}
		return [][]any{{n, v, make([]uint32, 16), make([]uint64, 8), make([]int32, 4), make([]int64, 3), make([]uint8, n)}}
	}},
	{k: Hist256Kernel, fn: Hist256, run: RunHist256, ext: []int{0}, inputs: func() [][]any {
		n := 1 << 18
		v := make([]uint8, n)
		for i := range v {
			v[i] = uint8((i * 2654435761) >> 13)
		}
		return [][]any{{n, v, make([]uint32, 256), make([]int64, 16)}}
	}},
	{k: ExtremesKernel, fn: Extremes, run: RunExtremes, ext: []int{0}, inputs: func() [][]any {
		// The floats' edges (no NaN: which NaN a min or max of two gives
		// depends on the order), many points on few bins, factors that
		// wrap, and initial values the points must be combined with.
		edges := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), -1, 1, math.MaxFloat64, -math.MaxFloat64, 5e-324, 1e39, -1e39}
		n := 1 << 15
		v, k := make([]float64, n), make([]int32, n)
		for i := range v {
			v[i] = edges[(i*7+i/64)%len(edges)] * float64(1+i%3)
			k[i] = int32(i*2654435761) >> 7
		}
		lo, hi := make([]float64, 64), make([]float32, 64)
		for i := range lo {
			lo[i], hi[i] = edges[i%len(edges)], float32(edges[(i+3)%len(edges)])
		}
		p, m, q := make([]uint32, 16), make([]uint32, 16), make([]int64, 16)
		for i := range p {
			p[i], m[i], q[i] = uint32(i)|1, uint32(i)<<28, math.MaxInt64-int64(i)
		}
		return [][]any{{n, v, k, lo, hi, p, m, q}}
	}},
	{k: FloatBinsKernel, fn: FloatBins, run: RunFloatBins, ext: []int{0}},
	{k: EmptyBinsKernel, fn: EmptyBins, run: RunEmptyBins, ext: []int{0}, inputs: func() [][]any {
		return [][]any{{3, []float32{float32(math.Copysign(0, -1)), 1, float32(math.Inf(-1)), 0, 0, 0, 0, 0}}}
	}},
	{k: AtomicMaxKernel, fn: AtomicMax, run: RunAtomicMax, ext: []int{0}, inputs: func() [][]any {
		n := 1 << 14
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(i*2654435761) & 15
		}
		return [][]any{{n, v, make([]int32, 2), make([]uint64, 2), make([]uint32, 7), make([]int64, 1), make([]uint32, 16)}}
	}},
	{k: ShiftAtKernel, fn: ShiftAt, run: RunShiftAt, ext: []int{0}, inputs: func() [][]any {
		k := []uint64{0, 1, 15, 16, 31, 32, 33, 1 << 32, 1<<32 + 1, 1<<40 + 3, math.MaxUint64}
		x, y := make([]int32, len(k)), make([]uint16, len(k))
		for i := range x {
			x[i], y[i] = -7, 0xbeef
		}
		return [][]any{{len(k), k, x, y}}
	}},
	{k: UniformStoreKernel, fn: UniformStore, run: RunUniformStore, ext: []int{0}, inputs: func() [][]any {
		return [][]any{{3000, 5, make([]int32, 5), make([]int32, 5), make([]int32, 3000)}}
	}},
	{k: ProductLenKernel, fn: ProductLen, run: RunProductLen, ext: []int{0}, inputs: func() [][]any {
		return [][]any{{5, -2, -3, []int64{1, 2, 3, 4, 5, 6}, make([]int64, 6)}}
	}},
	{k: TuplesKernel, fn: Tuples, run: RunTuples, ext: []int{0}, inputs: func() [][]any {
		in := []int32{math.MinInt32, -7, -1, 0, 1, 5, math.MaxInt32}
		out := make([]int32, 4*len(in))
		for j := range out {
			out[j] = int32(j*2654435761) >> 3
		}
		return [][]any{{len(in), in, out}}
	}},
	{k: TrickyKernel, fn: Tricky, run: RunTricky, ext: []int{0}, inputs: func() [][]any {
		k := []int64{math.MinInt64, -7, -1, 0, 1, 2, 3, 4, 99, math.MaxInt64}
		return [][]any{{len(k), -0.5, k, make([]int64, 8*len(k))}}
	}},
	// Views and range over slices (views.go).
	{k: MatVecKernel, fn: MatVec, run: RunMatVec, ext: []int{0}, inputs: func() [][]any {
		const m, n = 33, 17
		a, x := make([]float32, m*n), make([]float32, n)
		for i := range a {
			a[i] = float32(i%29-14) / 8
		}
		for j := range x {
			x[j] = float32(j%7) - 2.75
		}
		return [][]any{{m, n, a, x, make([]float32, m)}}
	}},
	{k: CSRKernel, fn: CSR, run: RunCSR, ext: []int{0}, inputs: func() [][]any {
		var problems [][]any
		for _, rows := range []int{1, 7, 300} {
			rowPtr, cols, vals, x := csr(rows, rows/3+1, rows)
			if len(cols) == 0 {
				rowPtr[rows], cols, vals = 1, []int32{0}, []float32{2}
			}
			problems = append(problems, []any{rows, len(cols), len(x), rowPtr, cols, vals, x, make([]float32, rows)})
		}
		return problems
	}},
	{k: DotRangeKernel, fn: DotRange, run: RunDotRange, ext: []int{0}, reduce: "+", inputs: func() [][]any {
		x, y := []int64{math.MinInt64, -1, 3, math.MaxInt64, 7, -9}, []int64{2, math.MaxInt64, -5, 3, 1, 1}
		return [][]any{{2, 3, x, y}, {3, 2, x, y}}
	}},
	{k: RangeFormsKernel, fn: RangeForms, run: RunRangeForms, ext: []int{0}, inputs: func() [][]any {
		a := make([]int32, 8*9)
		for j := range a {
			a[j] = int32(j*7919%23) - 11
		}
		return [][]any{{9, a, make([]int64, 8*9)}}
	}},
}

func cross(e []int64) (a, b []int64) {
	for _, x := range e {
		for _, y := range e {
			a, b = append(a, x), append(b, y)
		}
	}
	return a, b
}

func crossF(e []float64) (a, b []float64) {
	for _, x := range e {
		for _, y := range e {
			a, b = append(a, x), append(b, y)
		}
	}
	return a, b
}

func ints(s []int64) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = int(v)
	}
	return out
}

func uints(s []int64) []uint64 {
	out := make([]uint64, len(s))
	for i, v := range s {
		out[i] = uint64(v)
	}
	return out
}

// devices are the devices to run on: every offload device and the
// initial device.
func devices() []int {
	return kerneltest.Devices()
}

// TestCheckKernel runs each kernel's Sample on every device against its Go
// image.
func TestCheckKernel(t *testing.T) {
	for _, e := range entries {
		if e.noHost {
			continue
		}
		t.Run(e.k.Name, func(t *testing.T) { kerneltest.CheckKernel(t, e.k) })
	}
}

// TestAgainstGo runs each kernel's launcher on every device, on its
// Samples' problems and on inputs at the edges of Go's rules, and compares
// the slices (and a reduction's result) with those of the Go function
// called directly over every point.
func TestAgainstGo(t *testing.T) {
	for _, e := range entries {
		if e.noHost {
			continue
		}
		t.Run(e.k.Name, func(t *testing.T) {
			tol := e.k.Sample(1, 1).Tol
			var problems [][]any
			for _, n := range []int{1, 5, 300, 4099} {
				for _, seed := range []int64{1, 2} {
					problems = append(problems, fromSample(t, e, n, seed))
				}
			}
			if e.inputs != nil {
				problems = append(problems, e.inputs()...)
			}
			// A device that cannot meet the kernel's Needs refuses it at
			// load: checked on the first problem, and run on no other.
			var devs []int
			for _, dev := range devices() {
				if _, _, refuses := kerneltest.Refuses(e.k, dev); refuses {
					got, _, err := launch(e, dev, problems[0])
					checkRefused(t, e.k, dev, err, got, problems[0])
					continue
				}
				devs = append(devs, dev)
			}
			for pi, args := range problems {
				want, wantV := direct(e, args)
				for _, dev := range devs {
					got, gotV, err := launch(e, dev, args)
					what := fmt.Sprintf("%s problem %d on %s", e.k.Name, pi, target.Describe(dev))
					require.NoError(t, err, what)
					for i := range got {
						if got[i].IsValid() {
							sameSlice(t, what+" slice "+itoa(i), got[i], want[i], tol)
						}
					}
					if e.reduce != "" {
						sameValue(t, what+" result", gotV, wantV, tol)
					}
				}
			}
		})
	}
}

// fromSample turns Sample(n, seed) into the launcher's arguments.
func fromSample(t *testing.T, e entry, n int, seed int64) []any {
	s := e.k.Sample(n, seed)
	ft := reflect.TypeOf(e.fn)
	nidx := max(e.k.Dims, 1)
	var args []any
	for j, p := range e.k.Params {
		if j+nidx >= ft.NumIn() {
			break // a reduction's partial
		}
		typ := ft.In(j + nidx)
		if p.Kind == device.ParamBuffer {
			args = append(args, sliceOf(typ, s.Bufs[j]).Interface())
			continue
		}
		v := reflect.New(typ).Elem()
		bits := s.Args[j].Bits
		switch typ.Kind() {
		case reflect.Float32:
			v.SetFloat(float64(math.Float32frombits(uint32(bits))))
		case reflect.Float64:
			v.SetFloat(math.Float64frombits(bits))
		case reflect.Bool:
			v.SetBool(bits != 0)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(int64(bits))
		default:
			v.SetUint(bits)
		}
		args = append(args, v.Interface())
	}
	require.Len(t, args, ft.NumIn()-nidx, "%s: arguments from the Sample", e.k.Name)
	return args
}

// sliceOf is a new slice of type typ holding b's bytes.
func sliceOf(typ reflect.Type, b []byte) reflect.Value {
	size := int(typ.Elem().Size())
	v := reflect.MakeSlice(typ, len(b)/size, len(b)/size)
	if len(b) > 0 {
		copy(unsafe.Slice((*byte)(v.UnsafePointer()), len(b)), b)
	}
	return v
}

// clone copies the slices of args.
func clone(args []any) []reflect.Value {
	out := make([]reflect.Value, len(args))
	for i, a := range args {
		v := reflect.ValueOf(a)
		if v.Kind() == reflect.Slice {
			c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(c, v)
			v = c
		}
		out[i] = v
	}
	return out
}

// direct calls the Go function at every point, dimension 0 fastest, and
// returns the slices after, and a reduction's result folded from its
// identity in point order.
func direct(e entry, args []any) ([]reflect.Value, reflect.Value) {
	vals := clone(args)
	var ext [3]int
	for d := range ext {
		ext[d] = 1
	}
	for d, j := range e.ext {
		ext[d] = int(vals[j].Int())
	}
	fn := reflect.ValueOf(e.fn)
	var acc reflect.Value
	in := make([]reflect.Value, len(e.ext), len(e.ext)+len(vals))
	in = append(in, vals...)
	for z := 0; z < ext[2]; z++ {
		for y := 0; y < ext[1]; y++ {
			for x := 0; x < ext[0]; x++ {
				idx := []int{x, y, z}
				for d := range e.ext {
					in[d] = reflect.ValueOf(idx[d])
				}
				out := fn.Call(in)
				if e.reduce != "" {
					if !acc.IsValid() {
						acc = out[0]
					} else {
						acc = combine(e.reduce, acc, out[0])
					}
				}
			}
		}
	}
	slices := make([]reflect.Value, len(vals))
	for i, v := range vals {
		if v.Kind() == reflect.Slice {
			slices[i] = v
		}
	}
	return slices, acc
}

func combine(op string, a, b reflect.Value) reflect.Value {
	r := reflect.New(a.Type()).Elem()
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		switch op {
		case "+":
			r.SetFloat(x + y)
		case "*":
			r.SetFloat(x * y)
		case "min":
			r.SetFloat(min(x, y))
		case "max":
			r.SetFloat(max(x, y))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, y := a.Int(), b.Int()
		switch op {
		case "+":
			r.SetInt(x + y)
		case "*":
			r.SetInt(x * y)
		case "min":
			r.SetInt(min(x, y))
		case "max":
			r.SetInt(max(x, y))
		}
	default:
		x, y := a.Uint(), b.Uint()
		switch op {
		case "+":
			r.SetUint(x + y)
		case "*":
			r.SetUint(x * y)
		case "min":
			r.SetUint(min(x, y))
		case "max":
			r.SetUint(max(x, y))
		}
	}
	return r
}

// checkRefused checks a launch of kernel k on device dev, which cannot
// meet k's Needs: err must be its refusal at load
// (kerneltest.CheckRefused), and the slices the launcher got (got, its
// arguments after the launch) must hold what they held before (args) and
// have no device copy left.
func checkRefused(t *testing.T, k *device.Kernel, dev int, err error, got []reflect.Value, args []any) {
	t.Helper()
	if !kerneltest.CheckRefused(t, k, dev, err) {
		return
	}
	for i, g := range got {
		if !g.IsValid() || g.Kind() != reflect.Slice {
			continue
		}
		what := fmt.Sprintf("%s refused on %s: slice %d", k.Name, target.Describe(dev), i)
		sameSlice(t, what, g, reflect.ValueOf(args[i]), 0)
		require.False(t, kerneltest.IsPresent(g.Interface(), dev), "%s stayed mapped", what)
	}
}

// launch calls the launcher on device dev.
func launch(e entry, dev int, args []any) ([]reflect.Value, reflect.Value, error) {
	vals := clone(args)
	in := append([]reflect.Value{reflect.ValueOf(target.Dev(dev))}, vals...)
	out := reflect.ValueOf(e.run).Call(in)
	errv := out[len(out)-1]
	var err error
	if !errv.IsNil() {
		err = errv.Interface().(error)
	}
	var res reflect.Value
	if len(out) == 2 {
		res = out[0]
	}
	slices := make([]reflect.Value, len(vals))
	for i, v := range vals {
		if v.Kind() == reflect.Slice {
			slices[i] = v
		}
	}
	return slices, res, err
}

// sameSlice compares got and want element by element: their bits, or
// within tol for floats when tol is not 0.
func sameSlice(t *testing.T, what string, got, want reflect.Value, tol float64) {
	t.Helper()
	require.Equal(t, want.Len(), got.Len(), what)
	bad := 0
	for i := 0; i < got.Len(); i++ {
		if !same(got.Index(i), want.Index(i), tol) {
			if bad < 5 {
				t.Errorf("%s: element %d = %v, want %v%s", what, i, got.Index(i), want.Index(i), bitsOf(got.Index(i), want.Index(i)))
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d elements differ", what, bad, got.Len())
	}
}

func sameValue(t *testing.T, what string, got, want reflect.Value, tol float64) {
	t.Helper()
	if !same(got, want, tol) {
		t.Errorf("%s = %v, want %v (tolerance %g)%s", what, got, want, tol, bitsOf(got, want))
	}
}

func same(g, w reflect.Value, tol float64) bool {
	switch g.Kind() {
	case reflect.Float32:
		a, b := float32(g.Float()), float32(w.Float())
		if math.Float32bits(a) == math.Float32bits(b) {
			return true
		}
		return tol > 0 && math.Abs(float64(a-b)) <= tol*max(1, math.Abs(float64(a)), math.Abs(float64(b)))
	case reflect.Float64:
		a, b := g.Float(), w.Float()
		if math.Float64bits(a) == math.Float64bits(b) {
			return true
		}
		return tol > 0 && math.Abs(a-b) <= tol*max(1, math.Abs(a), math.Abs(b))
	}
	return g.Interface() == w.Interface()
}

func bitsOf(g, w reflect.Value) string {
	switch g.Kind() {
	case reflect.Float32:
		return fmt.Sprintf(" (bits %#x, want %#x)", math.Float32bits(float32(g.Float())), math.Float32bits(float32(w.Float())))
	case reflect.Float64:
		return fmt.Sprintf(" (bits %#x, want %#x)", math.Float64bits(g.Float()), math.Float64bits(w.Float()))
	}
	return ""
}

func itoa(i int) string { return fmt.Sprint(i) }

// An index outside a slice panics in Go; on every device the launch
// fails with Go's message and the kernel's source line, and nothing is
// copied back (on the initial device, which runs the Go image on the
// slices themselves, the points before the panic are written, as in Go).
// Memory outside the slices is untouched everywhere.
func TestOutOfRange(t *testing.T) {
	const n = 9
	in := make([]int32, n)
	for i := range in {
		in[i] = int32(10 * (i + 1))
	}
	for _, dev := range devices() {
		buf := make([]int32, 2*n) // out is buf[:n]; buf[n:] must stay -1
		for i := range buf {
			buf[i] = -1
		}
		err := RunOutOfRange(target.Dev(dev), n, in, buf[:n])
		require.Error(t, err, target.Describe(dev))
		// Which point fails first is the device's choice: in[i+1] at
		// i = n-1, in[i-1] at i = 0, or out[i+n] anywhere.
		require.Regexp(t, `^kernel OutOfRange \(dims.go:(72|73)\): index out of range \[(-1|9|1[0-7])\]( with length 9)?$`, err.Error(), target.Describe(dev))
		for i := range 2 * n {
			if i < n && dev == target.InitialDevice {
				continue
			}
			require.Equal(t, int32(-1), buf[i], "%s: buf[%d]", target.Describe(dev), i)
		}
	}
}

func isHost(dev int) bool {
	for _, d := range target.Devices() {
		if d.Num == dev {
			return d.Plugin == "host"
		}
	}
	return false
}

// A float sum into an element holding -0 gives +0 once a point adds +0 (or
// points add up to it), as Go's -0 + +0 does, and keeps -0 where points
// add only -0 or nothing: a team's copy starts at -0 (x + -0 is x), and
// its merge skips only a copy with -0's bits. Tolerances would hide the
// sign, so the bits are compared here.
func TestArraySumSignOfZero(t *testing.T) {
	negz := float32(math.Copysign(0, -1))
	// FloatBins's p is float64: a device without it refuses the kernel.
	var devs []int
	for _, dev := range devices() {
		if _, _, refuses := kerneltest.Refuses(FloatBinsKernel, dev); refuses {
			v, s, p := []float32{0}, make([]float32, 32), make([]float64, 8)
			for i := range s {
				s[i] = negz
			}
			before := []any{slices.Clone(v), slices.Clone(s), slices.Clone(p)}
			err := RunFloatBins(target.Dev(dev), len(v), v, s, p)
			checkRefused(t, FloatBinsKernel, dev, err, []reflect.Value{reflect.ValueOf(v), reflect.ValueOf(s), reflect.ValueOf(p)}, before)
			continue
		}
		devs = append(devs, dev)
	}
	for _, c := range []struct {
		name string
		v    []float32 // v[i] goes to s[i&31] and, times -0.25, to s[(i+7)&31]
	}{
		{"one +0", []float32{0}},
		{"-0 then +0 into one bin", append(append([]float32{negz}, make([]float32, 31)...), 0)},
		{"1 then -1 into one bin", append(append([]float32{1}, make([]float32, 31)...), -1)},
		{"-0 only", []float32{negz}},
	} {
		for _, dev := range devs {
			what := c.name + " on " + target.Describe(dev)
			s := make([]float32, 32)
			for i := range s {
				s[i] = negz
			}
			p := make([]float64, 8)
			want := append([]float32(nil), s...)
			wantP := append([]float64(nil), p...)
			for i := range c.v {
				FloatBins(i, len(c.v), c.v, want, wantP)
			}
			require.NoError(t, RunFloatBins(target.Dev(dev), len(c.v), c.v, s, p), what)
			for i := range s {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(s[i]), "%s: s[%d] = %v, want %v", what, i, s[i], want[i])
			}
		}
	}
}
