//go:build linux

package omptrt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openAs counts the process's open files that are file.
func openAs(t *testing.T, file string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, fd := range fds {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && p == file {
			n++
		}
	}
	return n
}

// TestVerboseLogFileClosedAtFinalize: the OMP_TOOL_VERBOSE_INIT file is
// open from Start to Finalize (a callback's panic is logged there), and
// Finalize closes it: no file descriptor leaks.
func TestVerboseLogFileClosedAtFinalize(t *testing.T) {
	file := filepath.Join(t.TempDir(), "init.log")
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": file})
	r := &recorder{plain: true}
	ompt.RegisterTool("rec", r.start)
	Start(fakeRuntime{1})
	require.Equal(t, 1, openAs(t, file), "the log file is not open after Start")
	Finalize()
	assert.Zero(t, openAs(t, file), "the log file is still open after Finalize")
}
