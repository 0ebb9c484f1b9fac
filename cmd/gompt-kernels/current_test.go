package main

import (
	"bufio"
	"bytes"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ptxgen"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// generateLines finds the module's packages that run gompt-kernels with
// go:generate, and the flags each passes.
func generateLines(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "//go:generate ") {
				continue
			}
			fields := strings.Fields(strings.TrimPrefix(line, "//go:generate "))
			for i, w := range fields {
				if strings.HasSuffix(w, "cmd/gompt-kernels") {
					pkgs[filepath.Dir(path)] = fields[i+1:]
				}
			}
		}
		return sc.Err()
	})
	require.NoError(t, err)
	return pkgs
}

// TestGeneratedFilesAreCurrent runs gompt-kernels, as each package's
// go:generate line does, into a temporary folder, and fails when a
// committed generated file differs from what it makes now, is missing, or
// is left from a kernel that is gone. With CI set, a missing clang-19 or
// libclc is a failure; otherwise the test skips, saying so.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	if _, err := exec.LookPath(ptxgen.DefaultClang); err != nil {
		require.Empty(t, os.Getenv("CI"), "clang-19 not found (%v); CI is set, so this is a failure: install clang-19 and libclc-19", err)
		t.Skipf("clang-19 not found (%v): the PTX cannot be regenerated; install clang-19 and libclc-19", err)
	}
	if _, err := os.Stat(ptxgen.DefaultLibclc); err != nil {
		require.Empty(t, os.Getenv("CI"), "libclc missing (%v); CI is set, so this is a failure: install libclc-19", err)
		t.Skipf("libclc missing (%v); install libclc-19", err)
	}
	root := modRoot(t)
	pkgs, dirs := generatorPackages(t, root)
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		t.Run(rel, func(t *testing.T) {
			o := ir.Options{Dir: dir}
			args := pkgs[dir]
			for i := 0; i < len(args); i++ {
				switch args[i] {
				case "-launchers":
					i++
					o.Launchers = args[i]
				default:
					require.Failf(t, "unknown flag", "%s: go:generate passes %q, which this test does not know", rel, args[i])
				}
			}
			out, err := generate(o)
			require.NoError(t, err)
			tmp := t.TempDir()
			require.NoError(t, write(tmp, out))
			for name, want := range out {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if !assert.NoError(t, err, "%s: %s is not committed; run go generate ./%s and commit", rel, name, rel) {
					continue
				}
				assert.True(t, bytes.Equal(got, want), "%s: %s is stale: it differs from what gompt-kernels makes now; run go generate ./%s and commit", rel, name, rel)
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				n := e.Name()
				if strings.HasPrefix(n, "gompt_") && (strings.HasSuffix(n, ".cl") || strings.HasSuffix(n, ".ptx") || strings.HasSuffix(n, ".go")) {
					_, ok := out[n]
					assert.True(t, ok, "%s: %s is not generated any more (a kernel renamed or deleted); run go generate ./%s and commit", rel, n, rel)
				}
			}
		})
	}
}

// generatorPackages returns the module's packages that run gompt-kernels
// (generateLines) and their folders, sorted; the three this repository
// has must be among them.
func generatorPackages(t *testing.T, root string) (map[string][]string, []string) {
	t.Helper()
	pkgs := generateLines(t, root)
	var dirs []string
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, want := range []string{"kernels", "examples/heat", "cmd/gompt-kernels/internal/corpus"} {
		require.Contains(t, dirs, filepath.Join(root, want), "a package that runs gompt-kernels")
	}
	return pkgs, dirs
}
