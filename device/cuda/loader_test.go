package cuda

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/cu"
)

// TestNoDriver runs where CI knows there is no GPU (GOMPT_EXPECT_NO_CUDA=1):
// the registered plugin must report zero devices and why, so the loader path
// is exercised rather than skipped.
func TestNoDriver(t *testing.T) {
	if os.Getenv("GOMPT_EXPECT_NO_CUDA") != "1" {
		t.Skip("set GOMPT_EXPECT_NO_CUDA=1 on a machine without a CUDA driver")
	}
	p, ok := device.Lookup("cuda")
	if !ok {
		t.Fatal(`plugin "cuda" is not registered`)
	}
	devs, err := p.Devices()
	if len(devs) != 0 {
		t.Fatalf("%d devices on a machine expected to have no CUDA driver", len(devs))
	}
	if !errors.Is(err, device.ErrNoDevice) {
		t.Fatalf("Devices error %v does not wrap ErrNoDevice", err)
	}
	want := "no CUDA driver: libcuda.so.1: cannot open shared object file"
	if !cu.Available {
		want = "not available: built without cgo"
	} else if os.Getenv(EnvLibrary) != "" {
		want = "no CUDA driver: "
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Devices error %q, want it to contain %q", err, want)
	}
	t.Logf("reason: %v", err)
	if devs2, err2 := p.Devices(); len(devs2) != 0 || err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Devices call gave %d devices, %v; want the same result", len(devs2), err2)
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
	if len(devs) != 0 {
		t.Fatalf("library %s: %d devices, want none", lib, len(devs))
	}
	if !errors.Is(err, device.ErrNoDevice) {
		t.Fatalf("library %s: error %v does not wrap ErrNoDevice", lib, err)
	}
	t.Logf("library %s: %v", lib, err)
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("library %s: reason %q does not contain %q", lib, err, w)
		}
	}
}

// TestLibraryNotCUDA points the plugin at libraries that are not a CUDA
// driver: a file that is not a shared object, a missing path, and libc.
func TestLibraryNotCUDA(t *testing.T) {
	needCgo(t)
	junk := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := os.WriteFile(junk, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
		if os.Getenv("CI") != "" {
			t.Fatal("gcc is needed for this test in CI")
		}
		t.Skip("no gcc to build the fake driver")
	}
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "fake.c"), filepath.Join(dir, "libfakecuda.so")
	if err := os.WriteFile(src, []byte(fakeDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	noDevice(t, lib, "no CUDA driver", lib, "missing symbol cuGetErrorString")
}
