package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
)

// A map kernel's Kernel.Work counts its point's loop turns over the integer
// parameters, so that the runtime can weigh the points (hostexec.Teams):
// nothing for a point without loops, a team kernel or a reduction.
func TestWork(t *testing.T) {
	for _, c := range []struct {
		name, body, want string
	}{
		{"no loop", "b[i] = 1", ""},
		{"counted", "for j := 0; j < m; j++ { b[i] += 1 }", "m"},
		{"from one, to and with", "for j := 1; j <= m; j++ { b[i] += 1 }", "m"},
		{"offset bounds", "for j := k; j < m+k; j++ { b[i] += 1 }", "m"},
		{"nested", "for j := 0; j < m; j++ { for l := 0; l < k; l++ { b[i] += 1 } }", "k*m+m"},
		{"two loops", "for j := 0; j < m; j++ { b[i] += 1 }\nfor j := 0; j < k; j++ { b[i] += 1 }", "k+m"},
		{"a triangle: the extent", "for j := 0; j <= i; j++ { b[i] += 1 }", "1+n"},
		{"an outer loop's variable: its end", "for j := 0; j < m; j++ { for l := 0; l < j; l++ { b[i] += 1 } }", "m+m*m"},
		{"range over an int", "for range m { b[i] += 1 }", "m"},
		{"range over a buffer: its Len", "for _, v := range c { b[i] += v }", "k*m"},
		{"both branches", "if i > 2 { for range m { b[i]++ } } else { for range k { b[i]-- } }", "k+m"},
		{"a count from memory", "for j := int(c[i]); j < m; j++ { b[i] += 1 }", "16"},
		{"a loop until", "for b[i] < 10 { b[i] += 1 }", "16"},
		{"a constant count", "for j := 0; j < 8; j++ { b[i] += 1 }", "8"},
		{"a count below one", "for j := 5; j < 2; j++ { b[i] += 1 }", ""},
		{"an unsigned bound", "for j := 0; j < int(u); j++ { b[i] += 1 }", "16"},
	} {
		src := "package k\n\n//gompt:kernel dims=n len(b)=n len(c)=m*k\nfunc K(i int, n int, m, k int, u uint32, b, c []float32) {\n" + c.body + "\n}\n"
		dir := writePkg(t, map[string]string{"k.go": src})
		out, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"})
		if !assert.NoError(t, err, c.name) {
			continue
		}
		gofile := string(out[ir.GoFileName])
		if c.want == "" {
			assert.NotContains(t, gofile, "Work:", c.name)
		} else {
			assert.Regexp(t, "\tWork: +"+regexp.QuoteMeta(`"`+c.want+`"`)+",\n", gofile, c.name) // aligned with Bounds where there are some
		}
	}
	// Reductions and team kernels choose their teams: no Work.
	src := `package k

//gompt:kernel dims=n reduce=+
func R(i int, n int, m int, b []float32) float32 {
	var s float32
	for j := 0; j < m; j++ {
		s += b[j]
	}
	return s
}

//gompt:kernel team=64 dims=teams len(b)=teams*64
func T(t, th int, teams int, m int, b []float32) {
	for j := 0; j < m; j++ {
		b[t*64+th] += 1
	}
}
`
	dir := writePkg(t, map[string]string{"k.go": src})
	out, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"})
	if assert.NoError(t, err) {
		assert.NotContains(t, string(out[ir.GoFileName]), "Work:", "a reduction and a team kernel")
	}
}

// The Go image runs points in lanes only where a loop's elements sit side
// by side from one point to the next (matmul's B[p*n+j], j the point): a
// loop that reaches elements a row apart (gesummv's A[i*n+j], i the
// point) runs one point at a time.
func TestLanesNotStrided(t *testing.T) {
	for _, c := range []struct {
		name, body string
		lanes      bool
	}{
		{"side by side", "for p := 0; p < m; p++ { b[i] += c[p*n+i] }", true},
		{"a constant stride", "for p := 0; p < m; p++ { b[i] += c[2*i+p] }", true},
		{"a row apart", "for p := 0; p < m; p++ { b[i] += c[i*m+p] }", false},
		{"a row apart, through a local", "r := i * m\nfor p := 0; p < m; p++ { b[i] += c[r+p] }", false},
		{"a row apart, the other way round", "for p := 0; p < m; p++ { b[i] += c[p+m*i] }", false},
	} {
		src := "package k\n\n//gompt:kernel dims=n len(b)=n len(c)=n*m+2*n\nfunc K(i int, n int, m int, b, c []float32) {\n" + c.body + "\n}\n"
		dir := writePkg(t, map[string]string{"k.go": src})
		out, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"})
		if !assert.NoError(t, err, c.name) {
			continue
		}
		assert.Equal(t, c.lanes, strings.Contains(string(out[ir.GoFileName]), "func gomptLanesK("), "%s: lanes", c.name)
	}
}
