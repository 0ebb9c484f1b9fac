package main

import (
	"strings"
	"testing"

	"github.com/gompt/gompt/target"
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
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != defaultIters/defaultK {
		t.Fatalf("%d progress lines, want %d:\n%s", len(lines), defaultIters/defaultK, strings.Join(lines, "\n"))
	}
	for i, l := range lines {
		val := strings.Fields(l)[4] // "step", "50:", "T(x=256,", "y=8)", value
		if strings.Trim(val, "0.") == "" {
			t.Errorf("line %d shows a zero temperature: %s", i, l)
		}
		if i > 0 && l[strings.Index(l, ":"):] == lines[i-1][strings.Index(lines[i-1], ":"):] {
			t.Errorf("line %d shows the same field as the line before: %s", i, l)
		}
	}
	ref := reference(defaultNX, defaultNY, defaultIters)
	for i := range a {
		if d := a[i] - ref[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("grid[%d] = %g, want %g", i, a[i], ref[i])
		}
	}
}
