package corpus

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

// TestSignExtendShortLengths runs SignExtend where its int32 and int16
// parameters make len(w)=p and len(v)=p*k 0 (a value 0 or negative) or 1
// (p and k both -1 too: their product, as Go computes it, is 1):
// its len(w) and len(v) are then those, as the Go image's gomptrt.Len
// has them, on every device. The launcher refuses an empty slice, so the
// region is made here, each of w and v holding one element, of which the
// kernel sees the first Len. (Where the driver gets (long)p > 0 wrong,
// Mesa's without opencl.SextCompareDefine, len(w) was p, a negative
// length that let every index pass the checks.)
func TestSignExtendShortLengths(t *testing.T) {
	a := []int32{math.MinInt32, -5, -1, 0, 1, 5, math.MaxInt32}
	b := []int16{math.MinInt16, -5, -1, 0, 1, 5, math.MaxInt16}
	c := []int8{math.MinInt8, -5, -1, 0, 1, 5, math.MaxInt8}
	n := len(a)
	const m = -7
	for _, pk := range []struct {
		p int32
		k int16
	}{{math.MinInt32, 3}, {-5, 2}, {-1, -1}, {-1, 3}, {0, 3}, {1, -2}, {1, 0}, {1, 1}, {1, math.MinInt16}} {
		lw := max(int(pk.p), 0)
		lv := max(int(pk.p)*int(pk.k), 0)
		w, v := []int64{7}, []int64{8}
		want := make([]int64, 16*n)
		for i := range n {
			SignExtend(i, n, m, pk.p, pk.k, a, b, c, w[:lw], v[:lv], want)
		}
		require.Equal(t, []int64{int64(lw), int64(lv)}, want[14:16], "p=%d k=%d: Go's len(w) and len(v)", pk.p, pk.k)
		for _, dev := range devices() {
			what := fmt.Sprintf("p=%d k=%d on %s", pk.p, pk.k, target.Describe(dev))
			out := make([]int64, 16*n)
			err := target.Target(target.Region{Device: target.Dev(dev), Kernel: SignExtendKernel, Shape: target.Shape{Size: [3]int{n, 1, 1}},
				Maps: []target.Map{target.To(a), target.To(b), target.To(c), target.To(w), target.To(v), target.ToFrom(out)},
				Args: []target.Arg{target.Int(n), target.Int(m), target.Int(int(pk.p)), target.Int(int(pk.k)), target.Slice(a), target.Slice(b), target.Slice(c), target.Slice(w), target.Slice(v), target.Slice(out)}})
			require.NoError(t, err, what)
			sameSlice(t, what, reflect.ValueOf(out), reflect.ValueOf(want), 0)
		}
	}
}
