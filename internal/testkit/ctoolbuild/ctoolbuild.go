// Package ctoolbuild compiles C OMPT tools for the tests and benchmarks:
// it finds omp-tools.h and drives gcc (or $CC), and finds C files of the
// source tree this package was built from. It is test scaffolding (it runs
// a compiler through os/exec): no production package imports it, so it
// stays out of offload programs.
package ctoolbuild

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// HeaderDir returns the directory that holds omp-tools.h, for building C
// tools: $GOMPT_OMPT_INCLUDE if set, else the newest clang resource
// directory of an installed LLVM (Debian libomp-N-dev puts it at
// /usr/lib/llvm-N/lib/clang/N/include), else /usr/include or
// /usr/local/include.
func HeaderDir() (string, error) {
	if d := os.Getenv("GOMPT_OMPT_INCLUDE"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "omp-tools.h")); err != nil {
			return "", fmt.Errorf("ctoolbuild: GOMPT_OMPT_INCLUDE=%q: %w (set it to the directory that holds omp-tools.h)", d, err)
		}
		return d, nil
	}
	// The newest LLVM first (by its number: llvm-19 before llvm-9), then
	// /usr/include, then /usr/local/include.
	found, _ := filepath.Glob("/usr/lib/llvm-*/lib/clang/*/include/omp-tools.h")
	newestFirst(found)
	found = append(found, "/usr/include/omp-tools.h", "/usr/local/include/omp-tools.h")
	for _, f := range found {
		if _, err := os.Stat(f); err == nil {
			return filepath.Dir(f), nil
		}
	}
	return "", errors.New("ctoolbuild: omp-tools.h not found (install libomp-19-dev, or set GOMPT_OMPT_INCLUDE to its directory)")
}

// BuildTool compiles the C source files srcs into the shared library out
// with gcc (or $CC) against omp-tools.h (HeaderDir), with -shared -fPIC
// -pthread. It is what the tests use to build C tools; the error carries
// the compiler's output. Only omp-tools.h is put on the include path (a
// clang resource directory also holds clang's own stddef.h, which older
// clang versions write in a way gcc rejects).
func BuildTool(out string, srcs ...string) error {
	hdir, err := HeaderDir()
	if err != nil {
		return err
	}
	inc, err := os.MkdirTemp("", "gompt-ompt-include-")
	if err != nil {
		return fmt.Errorf("ctoolbuild: %w", err)
	}
	defer os.RemoveAll(inc)
	if err := os.Symlink(filepath.Join(hdir, "omp-tools.h"), filepath.Join(inc, "omp-tools.h")); err != nil {
		return fmt.Errorf("ctoolbuild: %w", err)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return fmt.Errorf("ctoolbuild: C compiler %q: %w (install gcc or set CC)", cc, err)
	}
	args := append([]string{"-shared", "-fPIC", "-pthread", "-O2", "-Wall", "-Werror", "-I", inc, "-o", out}, srcs...)
	cmd := exec.Command(cc, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ctoolbuild: %s %v: %w\n%s", cc, args, err, b)
	}
	return nil
}

// newestFirst sorts paths under /usr/lib/llvm-N/ by N, highest first.
func newestFirst(paths []string) {
	slices.SortStableFunc(paths, func(a, b string) int { return llvmVersion(b) - llvmVersion(a) })
}

// llvmVersion is N of a path under /usr/lib/llvm-N/, 0 if none.
func llvmVersion(path string) int {
	rest, ok := strings.CutPrefix(path, "/usr/lib/llvm-")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(rest[:strings.IndexByte(rest+"/", '/')])
	return n
}

// SourceFile returns the path of the file at rel (slash-separated, from
// the module root) in the source tree this package was built from, for
// tests and benchmarks that build C files of the repository.
func SourceFile(rel string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("ctoolbuild: cannot locate the source tree")
	}
	src := filepath.Join(filepath.Dir(file), "..", "..", "..", filepath.FromSlash(rel))
	if _, err := os.Stat(src); err != nil {
		return "", fmt.Errorf("ctoolbuild: source file %s: %w", rel, err)
	}
	return src, nil
}

// ExampleToolSource returns the path of examples/tools/ctool/ctool.c in
// the source tree this package was built from.
func ExampleToolSource() (string, error) { return SourceFile("examples/tools/ctool/ctool.c") }

// BuildExampleTool compiles the example C tool (examples/tools/ctool) into
// dir/libctool.so and returns its path, for tests that run a program under
// it with OMP_TOOL_LIBRARIES. The tool writes its event lines to the file
// named by $CTOOL_OUTPUT (stdout if unset); see examples/tools/ctool.
func BuildExampleTool(dir string) (string, error) {
	src, err := ExampleToolSource()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "libctool.so")
	if err := BuildTool(out, src); err != nil {
		return "", err
	}
	return out, nil
}
