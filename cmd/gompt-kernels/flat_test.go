package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flatStatements is the number of checked statements of TestManyChecks's
// helper: past the 80 ifs deep that Mesa's llvmpipe follows.
const flatStatements = 90

// A function of many checked statements is written flat (emitc/flat.go):
// with a return after each, Mesa's rusticl nested the rest of the
// function one if deeper per return, llvmpipe ran both branches past 80,
// and this kernel failed on opencl:1 with a fault at an index in range
// (run with RUSTICL_ENABLE=swrast; the flat form was written for it).
// On every device the results are Go's, and a failed check names Go's
// statement, the one that indexes past the end.
func TestManyChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test of the generated package (-short)")
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	var src strings.Builder
	src.WriteString("package k\n\n//gompt:func\nfunc many(i int, d int, b []int32) int32 {\n")
	for k := range flatStatements {
		fmt.Fprintf(&src, "\tb[i+%d*d] += int32(%d)\n", k, k+1)
		if k == 9 {
			// After checks: a declaration that checks, loops (the
			// flat form leaves them at their top), a var.
			src.WriteString("\tx := b[i+3*d] + 1\n\tfor k := 0; k < 3; k++ {\n\t\tb[i+k*d] += x\n\t}\n\tfor k := range 2 {\n\t\tif b[i+k*d] > 0 {\n\t\t\tx++\n\t\t}\n\t}\n\tvar y int32 = b[i] - x\n")
		}
	}
	src.WriteString("\treturn b[i]*3 + x - y\n}\n\n//gompt:kernel dims=n len(b)=m len(out)=n\nfunc Many(i int, n, m, d int, b, out []int32) {\n\tout[i] = many(i, d, b)\n}\n")
	// The line of the statement that indexes b at 40.
	line := 1 + strings.Count(src.String()[:strings.Index(src.String(), "b[i+40*d]")], "\n")
	test := strings.ReplaceAll(manyChecksTest, "FAULTLINE", fmt.Sprint(line))
	dir := writePkg(t, map[string]string{"k.go": src.String(), "k_test.go": test})
	out, err := generate(ir.Options{Dir: dir})
	require.NoError(t, err, "the package:\n%s", src.String())
	cl := string(out["gompt_Many.cl"])
	assert.True(t, strings.Contains(cl, "if (!*gompt_stop) {"), "the helper is written flat")
	assert.Less(t, strings.Count(cl, "if (*gompt_stop) return"), 16, "returns after checks in a flat function")
	goTestGenerated(t, dir, out)
}

// manyChecksTest is TestManyChecks's package's test.
const manyChecksTest = `package k

import (
	"errors"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels/kerneltest"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMany(t *testing.T) {
	for _, dev := range kerneltest.Devices() {
		what := target.Describe(dev)
		// d = 0: every statement adds to the point's own element.
		n := 500
		want, wantOut := make([]int32, n), make([]int32, n)
		for i := range want {
			want[i] = int32(i * 7)
		}
		got := append([]int32(nil), want...)
		for i := range n {
			Many(i, n, n, 0, want, wantOut)
		}
		gotOut := make([]int32, n)
		require.NoError(t, RunMany(target.Dev(dev), n, n, 0, got, gotOut), what)
		assert.Equal(t, want, got, what)
		assert.Equal(t, wantOut, gotOut, what)

		// d = 1 over 40 elements: one point, whose statement 40 indexes
		// past the end.
		err := RunMany(target.Dev(dev), 1, 40, 1, make([]int32, 40), make([]int32, 1))
		var f *device.KernelFault
		require.True(t, errors.As(err, &f), "%s: %v", what, err)
		assert.Equal(t, "k.go:FAULTLINE", f.Site.Pos, "%s: %v", what, err)
		assert.Contains(t, err.Error(), "index out of range [40] with length 40", what)
	}
}
`
