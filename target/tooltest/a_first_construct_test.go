package tooltest

import (
	"strings"
	"testing"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first construct of the program, which starts the runtime and with
// it the tools, already tells the tool its caller (codeptr_ra). This test
// comes first in the package (its file name sorts first), so when it runs
// with the others its construct is the program's first; alone too.
func TestFirstConstructNamesItsCaller(t *testing.T) {
	x := make([]float32, 8)
	require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Fill, Shape: target.N(8),
		Maps: []target.Map{target.ToFrom(x)}, Args: []target.Arg{target.Int(8), target.Float32(1), target.Slice(x)}}))
	got, _ := tool.take()
	n := 0
	for _, l := range got {
		if strings.HasPrefix(l, "target ompt_target ") {
			n++
			assert.True(t, strings.HasSuffix(l, " code=TestFirstConstructNamesItsCaller"), "the tool was told %q; want the caller", l)
		}
	}
	assert.Equal(t, 2, n, "target begin and end events:\n%s", strings.Join(got, "\n"))
}
