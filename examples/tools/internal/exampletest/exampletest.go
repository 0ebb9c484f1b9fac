// Package exampletest is what the example tools' tests share: building an
// example with a tool linked in, and reading the key=value fields of the
// tools' lines.
package exampletest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Build builds examples/<name> (a path relative to examples/tools/<tool>)
// with the given build tags into the test's temporary folder.
func Build(t testing.TB, name string, tags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name+strings.Join(tags, "_"))
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, "../../"+name)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		require.NoError(t, err, "go build %s:\n%s", name, out)
	}
	return bin
}

var fieldRe = regexp.MustCompile(`(\w+)=("[^"]*"|\S+)`)

// Fields returns the key=value fields of one tool line.
func Fields(l string) map[string]string {
	f := map[string]string{}
	for _, m := range fieldRe.FindAllStringSubmatch(l, -1) {
		f[m[1]] = m[2]
	}
	return f
}

// Golden compares got with the golden file at path, rewriting the file
// first when update is set (the tests' -update flag).
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	if got != string(want) {
		assert.Failf(t, "output differs", "output differs from %s (rerun with -update after checking):\n--- got\n%s--- want\n%s", path, got, want)
	}
}
