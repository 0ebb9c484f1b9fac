package main

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
)

// empty_target_ctool_all: an empty target region with a C tool
// (target/internal/cabi/testdata/empty.c, built here with the C compiler) registered
// for every target callback, each returning at once, attached through
// OMP_TOOL_LIBRARIES in a child process.
func init() {
	register(bcase{name: "empty_target_ctool_all", backend: "host", env: []string{"OMP_TOOL_LIBRARIES=" + ctoolMarker},
		bench: emptyTarget})
}

// ctoolMarker stands for the built tool's path in the case's environment;
// runChild replaces it.
const ctoolMarker = "<empty C tool>"

var (
	ctoolOnce sync.Once
	ctoolPath string // in a folder of its own
	ctoolErr  error
)

// emptyCTool builds the C tool once per run, from the source tree this
// command was built from.
func emptyCTool() (string, error) {
	ctoolOnce.Do(func() {
		src, err := ctoolbuild.SourceFile("target/internal/cabi/testdata/empty.c")
		if err != nil {
			ctoolErr = err
			return
		}
		dir, err := os.MkdirTemp("", "ompt-bench-")
		if err != nil {
			ctoolErr = err
			return
		}
		ctoolPath = filepath.Join(dir, "libempty.so")
		ctoolErr = ctoolbuild.BuildTool(ctoolPath, src)
	})
	return ctoolPath, ctoolErr
}

// removeCTool removes the C tool built for this run, if one was.
func removeCTool() {
	if ctoolPath != "" {
		os.RemoveAll(filepath.Dir(ctoolPath))
	}
}
