package kernelrt

import (
	"math"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLenViewHead(t *testing.T) {
	assert.Equal(t, 12, Len(3, 4))
	assert.Equal(t, 1, Len())
	assert.Zero(t, Len(3, 0, 5), "a term 0")
	assert.Zero(t, Len(-2, 3), "a negative product: 0, as device.NeedLen")
	assert.Equal(t, 6, Len(-2, -3), "two negative terms: 6, as device.NeedLen and Go's -2*-3")
	b := make([]byte, 16)
	v := View[float32](b, 3)
	require.Len(t, v, 3)
	v[2] = 1.5
	assert.Equal(t, float32(1.5), View[float32](b, 4)[2], "a view aliases the bytes")
	assert.Nil(t, View[float32](b, 0))
	assert.PanicsWithValue(t, "kernelrt: buffer of 4 elements, the kernel needs 5", func() { View[float32](b, 5) })
	s := []int{1, 2, 3}
	assert.Equal(t, []int{1, 2}, Head(s, 2))
	assert.Equal(t, s, Head(s, 7), "too short: left to the runtime's check")
	assert.Equal(t, s, Head(s, -1))
}

func TestAbove(t *testing.T) {
	assert.Equal(t, 1, Above(0))
	assert.Equal(t, -4, Above(-5))
	assert.Equal(t, math.MinInt+1, Above(math.MinInt))
	assert.Equal(t, math.MaxInt, Above(math.MaxInt-1))
	assert.Equal(t, math.MaxInt, Above(math.MaxInt), "no int is above the largest: it does not wrap")
}

func TestTeamsAndCombine(t *testing.T) {
	assert.Equal(t, 1, Teams(0))
	assert.Equal(t, 256, Teams(1<<20))
	assert.Equal(t, 1024, Teams(1<<40))
	assert.Equal(t, int8(-128), SumInts([]int8{127, 1}), "wraps as Go's")
	assert.Equal(t, uint16(0), ProdInts([]uint16{256, 256}))
	assert.Equal(t, float32(3), SumFloats([]float32{1, 2.5, -0.5}))
	assert.Equal(t, 6.0, ProdFloats([]float64{1, 2, 3}))
	assert.Equal(t, float32(math.Inf(1)), Min(float32(math.Inf(1)), nil), "no partials: the identity")
	assert.True(t, math.IsNaN(Max(math.Inf(-1), []float64{1, math.NaN(), 2})), "a NaN wins")
	assert.Equal(t, -3, Min(math.MaxInt, []int{4, -3, 9}))
	assert.Equal(t, 1, Bool(true)+Bool(false))
}

func TestSamples(t *testing.T) {
	for _, dims := range []int{1, 2, 3} {
		for _, n := range []int{-1, 1, 100, 1 << 16} {
			e := Extents(n, dims)
			total := e[0] * e[1] * e[2]
			assert.Positive(t, total, "Extents(%d, %d)", n, dims)
			if n >= 1000 {
				assert.True(t, total >= n/2 && total <= 2*n, "Extents(%d, %d) = %v: about n points", n, dims, e)
			}
			for d := 1; d < dims; d++ {
				assert.GreaterOrEqual(t, e[d], 3, "Extents(%d, %d) = %v: sides of at least 3", n, dims, e)
			}
			s := ReduceShape(e, dims)
			assert.Zero(t, s.Size[dims-1]%s.Teams, "ReduceShape(%v): teams divide the outermost extent", e)
			assert.Equal(t, MaxThreads, s.Threads)
		}
	}
	a, b := Rand("k", 5, 1), Rand("k", 5, 1)
	assert.Equal(t, Floats[float32](a, 8, 0.5, 1.5), Floats[float32](b, 8, 0.5, 1.5), "deterministic")
	assert.NotEqual(t, Ints[int32](Rand("k", 5, 1), 8, 0, 16), Ints[int32](Rand("j", 5, 1), 8, 0, 16), "kernels apart")
	for _, v := range View[int16](Ints[int16](a, 100, 0, 16), 100) {
		assert.True(t, v >= 0 && v < 16, "Ints in [0, 16): %d", v)
	}
	assert.Equal(t, []byte{}, Zeros[float64](0), "an empty buffer is not nil")
}

// Teams merging their private copies at the same time lose nothing: each
// merge is a compare-and-swap loop on the element's bits, for every width
// and kind an array reduction has; elements at the identity are skipped.
func TestMergeConcurrently(t *testing.T) {
	const teams, n = 8, 5
	run := func(merge func(team int)) {
		var wg sync.WaitGroup
		for team := range teams {
			wg.Add(1)
			go func() { defer wg.Done(); merge(team) }()
		}
		wg.Wait()
	}
	sum := make([]int32, n)
	prod := make([]float64, n)
	lo := []float32{1, 1, 1, 1, float32(math.Copysign(0, 1))}
	hi := make([]uint64, n)
	many := make([]int, n)
	run(func(team int) {
		for r := 0; r < 200; r++ {
			priv := make([]int32, n)
			for i := range priv {
				priv[i] = int32(team + i)
			}
			MergeSum(sum, priv, 0)
			MergeProd(prod[:1], []float64{1}, 1) // the identity: skipped
			MergeSum(many, []int{1, 0, 2, 0, 3}, 0)
		}
		f := make([]float64, n)
		for i := range f {
			f[i] = 2
		}
		MergeProd(prod, f, 1)
		MergeMin(lo, []float32{float32(-team), float32(math.Inf(1)), float32(team), 1, float32(math.Copysign(0, -1))}, float32(math.Inf(1)))
		MergeMax(hi, []uint64{uint64(team) << 40, 0, 7, math.MaxUint64 - uint64(team), 0}, 0)
	})
	for i := range sum {
		want := int32(0)
		for team := range teams {
			want += int32(200 * (team + i))
		}
		assert.Equal(t, want, sum[i], "sum[%d]", i)
	}
	assert.Equal(t, []float64{0, 0, 0, 0, 0}, prod, "0 times anything")
	prod = []float64{1, 3, 1, 1, 1}
	run(func(int) { MergeProd(prod, []float64{2, 0.5, 1, 1, 1}, 1) })
	assert.Equal(t, []float64{256, 3.0 / 256, 1, 1, 1}, prod)
	assert.Equal(t, float32(-(teams - 1)), lo[0])
	assert.Equal(t, float32(1), lo[1], "+Inf is min's identity: skipped")
	assert.Equal(t, float32(0), lo[2])
	assert.True(t, math.Signbit(float64(lo[4])), "-0 is less than +0")
	assert.Equal(t, []uint64{uint64(teams-1) << 40, 0, 7, math.MaxUint64, 0}, hi)
	assert.Equal(t, []int{200 * teams, 0, 400 * teams, 0, 600 * teams}, many)
	negz := math.Copysign(0, -1)
	z := []float64{negz, negz}
	MergeSum(z, []float64{0, negz}, negz)
	assert.False(t, math.Signbit(z[0]), "-0 + a copy of +0 is +0: merged, though +0 == -0")
	assert.True(t, math.Signbit(z[1]), "a copy at the identity's bits is skipped")
	assert.PanicsWithValue(t, "kernelrt: an array reduction's elements are 32 or 64 bits wide, not 16", func() {
		MergeSum([]int16{1}, []int16{2}, 0)
	})
}

// FitSample halves n until the buffers fit SampleBytes; Bytes and Total
// saturate instead of wrapping.
func TestFitSample(t *testing.T) {
	cube := func(n int) int64 { return Bytes(Len(n, n, n), 8) }
	n := FitSample(5000, cube)
	assert.LessOrEqual(t, cube(n), int64(SampleBytes))
	assert.Greater(t, cube(2*n), int64(SampleBytes), "the largest halving that fits")
	assert.Equal(t, 100, FitSample(100, cube), "a size that fits is kept")
	assert.Equal(t, 1, FitSample(1<<40, func(int) int64 { return math.MaxInt64 }), "at least 1")
	assert.Equal(t, int64(math.MaxInt64), Bytes(math.MaxInt64/2, 8))
	assert.Equal(t, int64(0), Bytes(-5, 8))
	assert.Equal(t, int64(math.MaxInt64), Total(math.MaxInt64-1, 2))
	assert.Equal(t, int64(7), Total(3, 4))
}

// A reduction's launcher takes its teams from num_teams where that is in
// [1, MaxClauseTeams], and its own count otherwise (the runtime then
// refuses the clause, naming it).
func TestTeamsFor(t *testing.T) {
	assert.Equal(t, 5, TeamsFor(5, 1<<20))
	assert.Equal(t, MaxClauseTeams, TeamsFor(MaxClauseTeams, 10))
	assert.Equal(t, Teams(1<<20), TeamsFor(0, 1<<20), "no clause")
	assert.Equal(t, Teams(1<<20), TeamsFor(-3, 1<<20), "a bad clause")
	assert.Equal(t, Teams(100), TeamsFor(MaxClauseTeams+1, 100), "more than a launcher allocates")
}

// Apart is false exactly when the two slices share a byte: adjacent
// slices, empty ones and ones of other element types included.
func TestApart(t *testing.T) {
	buf := make([]float64, 8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 64)
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"the same slice", Apart(buf, buf), false},
		{"adjacent halves", Apart(buf[:4], buf[4:]), true},
		{"the second half and the first", Apart(buf[4:], buf[:4]), true},
		{"one element overlapping", Apart(buf[:5], buf[4:]), false},
		{"an empty slice inside", Apart(buf, buf[2:2]), true},
		{"nil", Apart(buf, []int32(nil)), true},
		{"bytes of the last element", Apart(buf[:7], b[56:]), true},
		{"bytes straddling it", Apart(buf[:7], b[55:57]), false},
		{"one byte before the end", Apart(b[:1], buf), false},
	} {
		assert.Equal(t, c.want, c.got, "Apart: %s", c.name)
	}
}
