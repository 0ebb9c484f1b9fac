//go:build cgo

package rawbench_test

import (
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	_ "github.com/gompt/gompt/device/cuda"
	_ "github.com/gompt/gompt/device/host"
	_ "github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/internal/cl"
	"github.com/gompt/gompt/internal/rawbench"
)

func devicesOf(t *testing.T, plugin string) []device.Device {
	t.Helper()
	p, ok := device.Lookup(plugin)
	if !ok {
		t.Fatalf("plugin %s not registered", plugin)
	}
	ds, err := p.Devices()
	if len(ds) == 0 {
		t.Skipf("no %s device: %v", plugin, err)
	}
	return ds
}

// TestCL runs every OpenCL baseline on each OpenCL device (POCL in CI):
// each measures something and gives back every OpenCL object it made.
func TestCL(t *testing.T) {
	for _, d := range devicesOf(t, "opencl") {
		if _, err := rawbench.CLEmptyKernel(d, 1); err != nil { // the device opens
			t.Fatalf("%s: CLEmptyKernel: %v", d.Info().Name, err)
		}
		before := cl.Live()
		if dt, err := rawbench.CLEmptyKernel(d, 3); err != nil || dt <= 0 {
			t.Errorf("%s: CLEmptyKernel = %v, %v", d.Info().Name, dt, err)
		}
		for _, fn := range []func(device.Device, int, bool, int) (_ any, err error){
			func(d device.Device, b int, to bool, n int) (any, error) { return rawbench.CLCopy(d, b, to, n) },
			func(d device.Device, b int, to bool, n int) (any, error) { return rawbench.CLCopyPinned(d, b, to, n) },
		} {
			for _, to := range []bool{true, false} {
				if _, err := fn(d, 1<<16, to, 3); err != nil {
					t.Errorf("%s: copy (to device %v): %v", d.Info().Name, to, err)
				}
			}
			if _, err := fn(d, 0, true, 1); err == nil || !strings.Contains(err.Error(), "bytes 0") {
				t.Errorf("%s: copy of 0 bytes: %v, want an error naming the size", d.Info().Name, err)
			}
		}
		wait, release, err := rawbench.CLWait(d, 1000)
		if err != nil {
			t.Fatalf("%s: CLWait: %v", d.Info().Name, err)
		}
		if err := wait(2); err != nil {
			t.Errorf("%s: wait: %v", d.Info().Name, err)
		}
		release()
		if after := cl.Live(); after != before {
			t.Errorf("%s: the baselines left OpenCL objects: %+v, before %+v", d.Info().Name, after, before)
		}
	}
}

// TestWrongDevice: each baseline refuses a device of another plugin, or
// none, with an error naming the plugin it wants.
func TestWrongDevice(t *testing.T) {
	host := devicesOf(t, "host")[0]
	for _, d := range []device.Device{nil, host} {
		for name, call := range map[string]func() error{
			"CLEmptyKernel":       func() error { _, err := rawbench.CLEmptyKernel(d, 1); return err },
			"CLCopy":              func() error { _, err := rawbench.CLCopy(d, 1, true, 1); return err },
			"CLWait":              func() error { _, _, err := rawbench.CLWait(d, 1); return err },
			"CUDAEmptyLaunchSync": func() error { _, err := rawbench.CUDAEmptyLaunchSync(d, 1); return err },
			"CUDACopy":            func() error { _, err := rawbench.CUDACopy(d, 1, true, 1); return err },
			"CUDALoad":            func() error { _, err := rawbench.CUDALoad(d, rawbench.EmptyPTX, false, 1); return err },
		} {
			want := "not a device of the opencl plugin"
			if strings.HasPrefix(name, "CUDA") {
				want = "not a device of the cuda plugin"
			}
			if err := call(); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s(%T): %v, want an error containing %q", name, d, err, want)
			}
		}
	}
}
