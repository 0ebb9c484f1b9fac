// Package exampletest is what the example tools' tests share: building an
// example with a tool linked in, and reading the key=value fields of the
// tools' lines.
package exampletest

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
		t.Fatalf("go build %s: %v\n%s", name, err, out)
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
