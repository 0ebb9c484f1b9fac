package main

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLineDirectivesOnlyWhereTheLineChanges reads the generated Go files
// of the library and the corpus: each //line directive names a position
// that the line after it would not have had without it (were the
// directive's own line not there); inside a function's body, none goes
// back to the generated file between the kernel's lines; and each function
// ends at its own line of the generated file.
func TestLineDirectivesOnlyWhereTheLineChanges(t *testing.T) {
	for _, path := range []string{"../../kernels/gompt_kernels.go", "internal/corpus/gompt_kernels.go"} {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		file, line := "gompt_kernels.go", 1 // the position of the line being read
		lines := strings.Split(string(src), "\n")
		for i, ln := range lines {
			if pos, ok := strings.CutPrefix(ln, "//line "); ok {
				if strings.HasPrefix(pos, "gompt_kernels.go:") {
					assert.False(t, strings.HasPrefix(lines[i+1], "\t"), "%s:%d: %s inside a function's body", path, i+1, ln)
				}
				c := strings.LastIndex(pos, ":")
				l, err := strconv.Atoi(pos[c+1:])
				require.NoError(t, err, "%s:%d: %s", path, i+1, ln)
				assert.False(t, pos[:c] == file && l == line, "%s:%d: %s says what the line after it would be without it", path, i+1, ln)
				file, line = pos[:c], l
				continue
			}
			if ln == "}" {
				assert.Equal(t, "gompt_kernels.go:"+strconv.Itoa(i+1), file+":"+strconv.Itoa(line), "%s:%d: a function's closing brace", path, i+1)
			}
			line++
		}
	}
}
