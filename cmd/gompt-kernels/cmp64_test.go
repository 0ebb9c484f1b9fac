package main

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/emitc"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"strings"
	"testing"
)

// Every signed 64-bit ordering the generator writes goes through
// GOMPT_CMP64 (cmp64), which a file that uses it defines: binary
// operators, range loops over an int64, min and max of int64, and a
// length from an int32 or int16 parameter, or a product of terms
// (gompt_lenpos). Orderings of other types, equality, and a length from
// a long extent are written plainly, and a file with no signed 64-bit
// ordering has no macro.
func TestSignedOrderingsThroughCmp64(t *testing.T) {
	out := generateSrc(t, `package k

//gompt:kernel dims=n len(w)=m len(v)=m*k
func K(i int, n int, m int32, k int16, a []int32, b []uint64, f []float32, w, v, u []int64) {
	x := int64(a[i])
	if x < 5 {
		u[i] = 1
	}
	if 5 >= x || a[i] > 5 || b[i] <= 5 || f[i] >= 1 || x == 5 {
		u[i] = 2
	}
	for j := range x {
		u[i] += j
	}
	for j := range a[i] {
		u[i] += int64(j)
	}
	u[i] += min(x, 7) + int64(len(w)+len(v))
}

//gompt:kernel dims=n
func Plain(i int, n int, a []int32, b []uint64, out []int32) {
	if a[i] < 5 || b[i] > 5 {
		out[i] = 1
	}
}
`, ir.Options{Clang: "no-such-clang"})
	cl := string(out["gompt_K.cl"])
	for _, want := range []string{
		emitc.Cmp64Macro,
		"if (GOMPT_CMP64(x, <, (5L))) {",
		"GOMPT_CMP64((5L), >=, x)",
		"(a[i] > (5))",
		"(b[i] <= 5UL)",
		"(f[i] >= (0x1p+00f))",
		"(x == (5L))",
		"GOMPT_CMP64(gompt_t2, <, gompt_t1)",
		"gompt_t6 < gompt_t5;",
		"long gompt_min_long(long x, long y) { return GOMPT_CMP64(y, <, x) ? y : x; }",
		"long gompt_lenpos(long v) { return GOMPT_CMP64(v, >, 0L) ? v : 0; }",
		"long gompt_len_w = (GOMPT_CMP64((long)m, >, 0L) ? (long)m : 0);",
		"long gompt_len_v = gompt_lenpos((long)((ulong)(long)m * (ulong)(long)k));",
		"long gompt_len_u = ((long)n > 0 ? (long)n : 0);",
	} {
		assert.Contains(t, cl, want)
	}
	assert.Equal(t, 1, strings.Count(cl, "#define GOMPT_CMP64(x, op, y) ((x) op (y))"), "K defines the plain GOMPT_CMP64 once")
	plain := string(out["gompt_Plain.cl"])
	assert.NotContains(t, plain, "GOMPT_CMP64", "Plain orders no signed 64-bit value")
	assert.Contains(t, plain, "(a[i] < (5))")
}
