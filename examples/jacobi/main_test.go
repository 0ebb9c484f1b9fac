package main

import (
	"strings"
	"testing"

	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The default run's progress lines show the field changing: every line
// differs from the one before, and the probed temperature is not 0 (the
// centre of the default 512x512 grid, which the example printed before,
// stays 0.000000 for all 200 steps).
func TestDefaultRunShowsChange(t *testing.T) {
	var lines []string
	a, err := run(target.DefaultDevice, defaultNX, defaultNY, defaultIters, defaultK, func(step int, a []float32) {
		lines = append(lines, progress(step, defaultNX, defaultNY, a))
	})
	require.NoError(t, err)
	require.Len(t, lines, defaultIters/defaultK, "progress lines:\n%s", strings.Join(lines, "\n"))
	for i, l := range lines {
		val := strings.Fields(l)[4] // "step", "50:", "T(x=256,", "y=8)", value
		assert.NotEmpty(t, strings.Trim(val, "0."), "line %d shows a zero temperature: %s", i, l)
		if i > 0 {
			assert.NotEqual(t, lines[i-1][strings.Index(lines[i-1], ":"):], l[strings.Index(l, ":"):],
				"line %d shows the same field as the line before", i)
		}
	}
	ref := reference(defaultNX, defaultNY, defaultIters)
	for i := range a {
		require.InDelta(t, ref[i], a[i], 1e-5, "grid[%d]", i)
	}
}
