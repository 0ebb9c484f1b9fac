package main

import (
	"strings"
	"testing"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
)

// A map kernel whose points share a loop around work that depends on the
// point gets a wide body for CPU devices (plan.Wide), which its entry runs
// behind GOMPT_CPU_DEVICE; a kernel with a check in its device code, a
// loop striding a row from one point to the next, a second dimension, no
// loop, a reduction or a helper call does not.
func TestWideBodies(t *testing.T) {
	for _, c := range []struct {
		name, dims, body string
		wide             bool
	}{
		{"a column's sum", "dims=n", "var s float32\nfor r := 0; r < m; r++ { s += a[r*n+i] }\nb[i] = s", true},
		{"a condition per point", "dims=n", "s := b[i]\nfor r := 0; r < m; r++ { if a[r*n+i] > 0 { s += 1 } }\nb[i] = s", true},
		{"an index not proven", "dims=n", "var s float32\nfor r := 0; r < m; r++ { s += a[r*n+i+1] }\nb[i] = s", false},
		{"a division", "dims=n", "var s int\nfor r := 0; r < m; r++ { s += r / k }\nb[i] = float32(s)", false},
		{"a row per point", "dims=n", "var s float32\nfor r := 0; r < m; r++ { s += a[i*m+r] }\nb[i] = s", false},
		{"no loop", "dims=n", "b[i] = a[i] * 2", false},
		{"two dimensions", "dims=n,m", "var s float32\nfor r := 0; r < m; r++ { s += a[r*n+i] }\nb[i] = s + float32(j)", false},
	} {
		params := "i int, n, m, k int, a, b []float32"
		if strings.Contains(c.dims, ",") {
			params = "i, j int, n, m, k int, a, b []float32"
		}
		src := "package k\n\n//gompt:kernel " + c.dims + " len(a)=m*n len(b)=n\nfunc K(" + params + ") {\n" + c.body + "\n}\n"
		dir := writePkg(t, map[string]string{"k.go": src})
		out, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"})
		if !assert.NoError(t, err, c.name) {
			continue
		}
		cl := string(out["gompt_K.cl"])
		assert.Equal(t, c.wide, strings.Contains(cl, "gompt_wide_K("), "%s: a wide body:\n%s", c.name, cl)
		assert.Equal(t, c.wide, strings.Contains(cl, "#ifdef GOMPT_CPU_DEVICE"), "%s: the entry's CPU path:\n%s", c.name, cl)
	}
}
