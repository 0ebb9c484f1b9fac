package main

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
)

// What a kernel may not do with a view, or with a slice expression, is an
// error naming it.
func TestViewErrors(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod") // kernelrt's own requirements, into the test module's go.mod
	checkErrors(t, `package k

import "github.com/gompt/gompt/kernelrt"

//gompt:func
func sum(v []float32) float32 {
	var s float32
	for _, x := range v {
		s += x
	}
	return s
}

//gompt:kernel dims=n len(x)=n*4
func Bad(i int, n int, x, y []float32) {
	v := x[i*4 : i*4+4]
	v = x[0:4] // want "assigning to view v is not supported in a gompt kernel (a view (v := buf[lo:hi]) is indexed, ranged over, sliced"
	w := v // want "view v used as a value"
	_ = w
	y[i] = sum(x[1:]) // want "passing x[1:] as a slice is not supported in a gompt kernel (pass a slice parameter or a view (v := buf[lo:hi]) as it is)"
	var u []float32 // want "a local slice variable (u) is not supported in a gompt kernel (declare a view of a slice parameter, u := buf[lo:hi]"
	_ = u
	a, b := 1, x[2:] // want "a slice expression (x[2:]) outside a view's declaration"
	_, _ = a, b
	for range "abc" { // want "range over a value of type untyped string is not supported in a gompt kernel (range over an int, a slice parameter, a view of one"
	}
	y[i] = float32(len(v[1:])) // want "len of v[1:] is not supported in a gompt kernel (len takes a slice parameter or a view)"
	y[i] = sum(v) + v[0] + float32(len(v))
}

//gompt:kernel team=4 dims=teams len(x)=teams*4
func BadTeam(t, th int, teams int, x []float32) {
	var tile [4]float32
	tile[th] = x[t*4+th]
	kernelrt.Barrier()
	s := tile[1:] // want "a slice expression of tile is not supported in a gompt kernel (a team array is indexed or ranged over, not sliced)"
	_ = s
	for j, v := range tile { // want "a range over team array tile with a value while the loop writes tile"
		tile[j] = v + 1
	}
}
`)
}

// range over a slice and views (row := A[lo:hi]) are part of the subset:
// the launcher maps a buffer read only through a range's value to, one
// written through a view tofrom, one ranged over by its index only to;
// the prover drops the checks of a range's elements and of a view's
// indexes it proves in range, and keeps the others (the view's own
// length, and its bounds); the Go image is Go's own slice and range.
// Before views, each of these kernels was refused.
func TestViewsAndRanges(t *testing.T) {
	out := generateSrc(t, `package k

//gompt:kernel dims=m len(A)=m*n len(x)=n
func MatVec(i int, m, n int, A, x, y []float32) {
	row := A[i*n : (i+1)*n]
	var s float32
	for j, a := range row {
		s += a * x[j]
	}
	y[i] = s
}

//gompt:kernel dims=m len(out)=m*4 len(at)=m
func Scatter(i int, m int, at []int, in []float32, out []float32) {
	o := out[i*4 : i*4+4]
	o[at[i]] = in[i]
	for k := range o[1:] {
		o[k] += 1
	}
}

//gompt:kernel dims=m len(idx)=m*2
func Count(i int, m int, idx []int, w []float32, out []int32) {
	var c int32
	for range idx[i*2 : i*2+2] {
		c++
	}
	for k := range w {
		c += int32(k)
	}
	out[i] = c
}
`, ir.Options{Clang: "no-such-clang"})
	src := string(out[ir.GoFileName])
	for _, c := range []struct{ run, maps string }{
		{"RunMatVec", "gompttarget.To(A), gompttarget.To(x), gompttarget.From(y)"},
		{"RunScatter", "gompttarget.To(at), gompttarget.To(in), gompttarget.ToFrom(out)"},
		{"RunCount", "gompttarget.To(idx), gompttarget.To(w), gompttarget.From(out)"},
	} {
		i := strings.Index(src, "func "+c.run+"(")
		require.GreaterOrEqual(t, i, 0, "no %s", c.run)
		body := src[i:]
		body = body[:strings.Index(body, "\n}\n")]
		assert.Contains(t, body, "Maps: []gompttarget.Map{"+c.maps, "%s's maps", c.run)
	}
	mv := string(out["gompt_MatVec.cl"])
	assert.Contains(t, mv, "float a = row[", "the range's element: no check")
	assert.Contains(t, mv, "(a * x[j])", "x[j], j < len(row) = n = len(x): proven")
	assert.Contains(t, mv, "y[i] = s;")
	assert.Equal(t, 2, strings.Count(mv, "gompt_check_fail(gompt_fault"), "the view's two bound checks (high, low), and no other")
	sc := string(out["gompt_Scatter.cl"])
	assert.Contains(t, sc, "gompt_stc_float(o, gompt_len_o_, ", "o[at[i]]: checked against the view's length")
	assert.Contains(t, sc, "o[gompt_t", "o[k], k < len(o[1:]) = 3: proven")
	assert.Contains(t, src, "for j, a := range row {", "the Go image ranges as Go")
	assert.Contains(t, src, "row := A[(i * n):((i + int(1)) * n)]", "the Go image's view is Go's slice")
}
