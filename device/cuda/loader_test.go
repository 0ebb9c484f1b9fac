package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoDriver runs where CI knows there is no GPU (GOMPT_EXPECT_NO_CUDA=1):
// the registered plugin must report zero devices and why, so the loader path
// is exercised rather than skipped.
func TestNoDriver(t *testing.T) {
	if os.Getenv("GOMPT_EXPECT_NO_CUDA") != "1" {
		t.Skip("set GOMPT_EXPECT_NO_CUDA=1 on a machine without a CUDA driver")
	}
	p, ok := device.Lookup("cuda")
	require.True(t, ok, `plugin "cuda" is not registered`)
	devs, err := p.Devices()
	require.Empty(t, devs, "devices on a machine expected to have no CUDA driver")
	require.ErrorIs(t, err, device.ErrNoDevice, "Devices error %v does not wrap ErrNoDevice", err)
	want := "no CUDA driver: libcuda.so.1: cannot open shared object file"
	if !cu.Available {
		want = "not available: built without cgo"
	} else if os.Getenv(EnvLibrary) != "" {
		want = "no CUDA driver: "
	}
	require.Contains(t, err.Error(), want, "Devices error %q, want it to contain", err)
	t.Logf("reason: %v", err)
	if devs2, err2 := p.Devices(); assert.Empty(t, devs2, "second Devices call gave %d devices, %v; want the same result", len(devs2), err2) && assert.Error(t, err2, "second Devices call gave %d devices, %v; want the same result", len(devs2), err2) {
		assert.Equal(t, err.Error(), err2.Error(), "second Devices call gave %d devices, %v; want the same result", len(devs2), err2)
	}
}

func needCgo(t *testing.T) {
	if !cu.Available {
		t.Skip("built without cgo")
	}
}

// noDevice asserts that a plugin loading lib has zero devices and a reason
// containing each of want.
func noDevice(t *testing.T, lib string, want ...string) {
	t.Helper()
	devs, err := newPlugin(lib).Devices()
	require.Empty(t, devs, "library %s: %d devices, want none", lib, len(devs))
	require.ErrorIs(t, err, device.ErrNoDevice, "library %s: error %v does not wrap ErrNoDevice", lib, err)
	t.Logf("library %s: %v", lib, err)
	for _, w := range want {
		assert.Contains(t, err.Error(), w, "library %s: reason %q does not contain", lib, err)
	}
}

// TestLibraryNotCUDA points the plugin at libraries that are not a CUDA
// driver: a file that is not a shared object, a missing path, and libc.
func TestLibraryNotCUDA(t *testing.T) {
	needCgo(t)
	junk := filepath.Join(t.TempDir(), "libcuda.so.1")
	require.NoError(t, os.WriteFile(junk, []byte("not an ELF file\n"), 0o644))
	noDevice(t, junk, "no CUDA driver", junk)
	missing := filepath.Join(t.TempDir(), "nowhere", "libcuda.so.1")
	noDevice(t, missing, "no CUDA driver", missing, "No such file or directory")
	noDevice(t, "libc.so.6", "no CUDA driver", "libc.so.6", "missing symbol cuInit")
}

// TestLibraryEnv checks that GOMPT_CUDA_LIBRARY picks the library.
func TestLibraryEnv(t *testing.T) {
	needCgo(t)
	bad := filepath.Join(t.TempDir(), "libgompt-env-test.so")
	t.Setenv(EnvLibrary, bad)
	noDevice(t, "", "no CUDA driver", bad)
}

// fakeDriver exports the first two entry points the plugin resolves and
// nothing else.
const fakeDriver = `
int cuInit(unsigned flags) { (void)flags; return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
`

// TestMissingSymbol builds a library with only cuInit and
// cuDriverGetVersion: the reason must name the first entry point missing.
func TestMissingSymbol(t *testing.T) {
	needCgo(t)
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		require.Empty(t, os.Getenv("CI"), "gcc is needed for this test in CI")
		t.Skip("no gcc to build the fake driver")
	}
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "fake.c"), filepath.Join(dir, "libfakecuda.so")
	require.NoError(t, os.WriteFile(src, []byte(fakeDriver), 0o644))
	out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput()
	require.NoError(t, err, "gcc: %v\n%s", err, out)
	noDevice(t, lib, "no CUDA driver", lib, "missing symbol cuGetErrorString")
}
