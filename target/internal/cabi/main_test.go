package cabi

// How the tests keep process state apart: package ompt starts once per
// process (Start, then Finalize, and never again). So no test starts it in
// the test process itself. Each test builds its C tools with gcc in
// t.TempDir(), then re-executes the test binary with CABI_CHILD=<scenario>
// and the environment of the case (OMP_TOOL_LIBRARIES, LD_PRELOAD,
// OMP_TOOL, OMP_TOOL_VERBOSE_INIT=<file>, the tools' output files).
// TestMain sees CABI_CHILD, runs that one scenario against a fresh ompt
// (Start with a fake runtime, device and target events, Finalize) and
// exits without running any test. The parent reads the child's files and
// checks them.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	if s := os.Getenv("CABI_CHILD"); s != "" {
		os.Exit(childMain(s))
	}
	os.Exit(m.Run())
}

// needC skips the test when C tools cannot be built or loaded here,
// unless $CI is set (then it fails: CI must run these tests).
func needC(t *testing.T) {
	t.Helper()
	why := ""
	switch {
	case !Available:
		why = "built without cgo"
	case runtime.GOOS != "linux":
		why = "C tool tests need Linux (dlopen, LD_PRELOAD)"
	default:
		if _, err := exec.LookPath(cc()); err != nil {
			why = "no C compiler: " + err.Error()
		} else if _, err := ctoolbuild.HeaderDir(); err != nil {
			why = err.Error()
		}
	}
	if why == "" {
		return
	}
	require.Empty(t, os.Getenv("CI"), "CI is set but C tools cannot be tested: %s", why)
	t.Skip(why)
}

func cc() string {
	if c := os.Getenv("CC"); c != "" {
		return c
	}
	return "gcc"
}

// build compiles testdata/<name>.c into dir/lib<name>.so.
func build(t *testing.T, dir, name string) string {
	t.Helper()
	out := filepath.Join(dir, "lib"+name+".so")
	require.NoError(t, ctoolbuild.BuildTool(out, filepath.Join("testdata", name+".c")))
	return out
}

// buildCtool compiles the example tool into dir.
func buildCtool(t *testing.T, dir string) string {
	t.Helper()
	p, err := ctoolbuild.BuildExampleTool(dir)
	require.NoError(t, err)
	return p
}

// child is the result of one child run.
type child struct {
	out     string // stdout and stderr
	verbose string // OMP_TOOL_VERBOSE_INIT log
	dir     string
}

// file returns the contents of dir/name ("" if it does not exist).
func (c child) file(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.dir, name))
	return string(b)
}

// run re-executes the test binary for scenario in dir (its working
// directory) with env added to a clean tool environment.
func run(t *testing.T, dir, scenario string, env ...string) child {
	t.Helper()
	verbose := filepath.Join(dir, "verbose.log")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	base := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "OMP_TOOL", "OMP_TOOL_LIBRARIES", "OMP_TOOL_VERBOSE_INIT", "LD_PRELOAD", "CTOOL_OUTPUT", "CTOOL_FORM", "CTOOL_TRACE",
			"PROBE_OUTPUT", "MARK_FILE", "TRACE_OUTPUT", "TRACE_BUFFER_BYTES", "CABI_GO_OUTPUT":
			continue
		}
		base = append(base, kv)
	}
	cmd.Env = append(base, "CABI_CHILD="+scenario, "OMP_TOOL_VERBOSE_INIT="+verbose)
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	c := child{out: string(b), dir: dir}
	vb, _ := os.ReadFile(verbose)
	c.verbose = string(vb)
	require.NoError(t, err, "child %s:\n%s\nverbose log:\n%s", scenario, b, c.verbose)
	return c
}

// lines splits s into lines, without the empty last one.
func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// wantLines fails unless every line of want occurs in got.
func wantLines(t *testing.T, what, got string, want ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range lines(got) {
		have[l] = true
	}
	for _, w := range want {
		assert.Contains(t, have, w, "%s: no such line in:\n%s", what, got)
	}
}

func wantContains(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		assert.Contains(t, got, w, "%s", what)
	}
}

func wantNotContains(t *testing.T, what, got string, bad ...string) {
	t.Helper()
	for _, w := range bad {
		assert.NotContains(t, got, w, "%s", what)
	}
}

func diffLines(a, b []string) string {
	var sb strings.Builder
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		mark := "  "
		if x != y {
			mark = "! "
		}
		fmt.Fprintf(&sb, "%s%-90s | %s\n", mark, x, y)
	}
	return sb.String()
}
