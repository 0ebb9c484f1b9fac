// Package ci holds the project's test command, ci/test.sh; this test
// checks what it says about dependencies it could not install.
package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTools writes stand-ins for the commands ci/test.sh -deps uses to
// install packages: every package is missing (dpkg-query), the user is
// root (id), apt-get fails with a held lock lockedFor times and then
// succeeds (or fails for good with aptFails), and clinfo lists an OpenCL
// device when ocl is set. It returns the PATH to use.
func fakeTools(t *testing.T, lockedFor int, aptFails, ocl bool) (path, dir string) {
	dir = t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755))
	}
	write("dpkg-query", "exit 1\n")
	write("id", "echo 0\n")
	count := filepath.Join(dir, "apt-calls")
	final := "exit 0"
	if aptFails {
		final = `echo "E: Unable to locate package clang-19" >&2; exit 100`
	}
	write("apt-get", `n=$(cat `+count+` 2>/dev/null || echo 0); n=$((n+1)); echo $n >`+count+`
if [ $n -le `+itoa(lockedFor)+` ]; then
	echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
	exit 100
fi
`+final+"\n")
	if ocl {
		write("clinfo", "echo 'Platform #0: Portable Computing Language'; echo ' `-- Device #0: cpu'\n")
	} else {
		write("clinfo", "exit 0\n")
	}
	return bin + ":" + os.Getenv("PATH"), dir
}

func itoa(n int) string { return strconv.Itoa(n) }

func runDeps(t *testing.T, path, dir string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "test.sh", "-deps")
	cmd.Env = append(os.Environ(), "PATH="+path, "TMPDIR="+dir, "GOMPT_APT_PAUSE=1", "GOMPT_APT_WAIT=2")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return string(out), code
}

func TestDepsHeldLockRetried(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	// Held twice, then free: the install goes on, nothing is skipped
	// because of it.
	path, dir := fakeTools(t, 2, false, true)
	out, code := runDeps(t, path, dir, "CI=")
	assert.Zero(t, code, "exit %d; want 0, two retries and no failed install:\n%s", code, out)
	assert.EqualValues(t, 2, strings.Count(out, "apt's lock is held by another process; retrying"), "exit %d; want 0, two retries and no failed install:\n%s", code, out)
	assert.False(t, strings.Contains(out, "could not install"), "exit %d; want 0, two retries and no failed install:\n%s", code, out)
}

func TestDepsInstallFailsOutsideCI(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	// The lock stays held past GOMPT_APT_WAIT and there is no OpenCL
	// device: the OpenCL plugin goes untested, which fails the run, and
	// the list says why.
	path, dir := fakeTools(t, 99, false, false)
	out, code := runDeps(t, path, dir, "CI=")
	for _, want := range []string{
		"apt's lock is still held after 2s",
		"these steps would be skipped:",
		"OpenCL plugin tests, the tracing property test on OpenCL, examples on an OpenCL device: no OpenCL device found by clinfo; could not install gcc pocl-opencl-icd",
		"Could not get lock",
		"FAILED: nothing of the opencl plugin(s) was tested",
	} {
		assert.Contains(t, out, want, "output lacks")
	}
	assert.EqualValues(t, 1, code, "exit %d, want 1 and no all-passed line:\n%s", code, out)
	assert.False(t, strings.Contains(out, "all checks passed"), "exit %d, want 1 and no all-passed line:\n%s", code, out)
	assert.False(t, strings.Contains(out, "no step would be skipped"), "exit %d, want 1 and no all-passed line:\n%s", code, out)

	// An install that fails, with an OpenCL device there all the same:
	// no plugin is untested, so the run passes.
	path, dir = fakeTools(t, 0, true, true)
	out, code = runDeps(t, path, dir, "CI=")
	assert.Zero(t, code, "failed install, OpenCL present: exit %d:\n%s", code, out)
	assert.False(t, !strings.Contains(out, "ci/test.sh: every dependency is there") && !strings.Contains(out, "would be skipped"), "failed install, OpenCL present: exit %d:\n%s", code, out)
}

func TestDepsInstallFailsInCI(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	path, dir := fakeTools(t, 0, true, true)
	out, code := runDeps(t, path, dir, "CI=true")
	assert.EqualValues(t, 1, code, "CI=true with a failed install: exit %d, want 1 and the reason:\n%s", code, out)
	assert.Contains(t, out, "ci/test.sh: could not install gcc pocl-opencl-icd", "CI=true with a failed install: exit %d, want 1 and the reason:\n%s", code, out)
}
