//go:build cgo

package clraw_test

import (
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	_ "github.com/gompt/gompt/device/host"
	_ "github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/device/opencl/clraw"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func devicesOf(t *testing.T, plugin string) []device.Device {
	t.Helper()
	p, ok := device.Lookup(plugin)
	require.True(t, ok, "plugin %s not registered", plugin)
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
		_, err := clraw.EmptyKernel(d, 1) // the device opens
		require.NoError(t, err, "%s: CLEmptyKernel", d.Info().Name)
		before := cl.Live()
		dt, err := clraw.EmptyKernel(d, 3)
		assert.NoError(t, err, "%s: CLEmptyKernel = %v", d.Info().Name, dt)
		assert.Greater(t, dt, time.Duration(0), "%s: CLEmptyKernel = %v, %v", d.Info().Name, dt, err)
		for _, fn := range []func(device.Device, int, bool, int) (_ any, err error){
			func(d device.Device, b int, to bool, n int) (any, error) { return clraw.Copy(d, b, to, n) },
			func(d device.Device, b int, to bool, n int) (any, error) { return clraw.CopyPinned(d, b, to, n) },
		} {
			for _, to := range []bool{true, false} {
				_, err := fn(d, 1<<16, to, 3)
				assert.NoError(t, err, "%s: copy (to device %v)", d.Info().Name, to)
			}
			_, err := fn(d, 0, true, 1)
			require.Error(t, err, "%s: copy of 0 bytes: %v, want an error naming the size", d.Info().Name, err)
			assert.Contains(t, err.Error(), "bytes 0", "%s: copy of 0 bytes: %v, want an error naming the size", d.Info().Name, err)
		}
		wait, release, err := clraw.Wait(d, 1000)
		require.NoError(t, err, "%s: CLWait", d.Info().Name)
		assert.NoError(t, wait(2), "%s: wait", d.Info().Name)
		release()
		after := cl.Live()
		assert.Equal(t, before, after, "%s: the baselines left OpenCL objects: %+v, before %+v", d.Info().Name, after, before)
	}
}

// TestWrongDevice: each baseline refuses a device of another plugin, or
// none, with an error naming the plugin it wants.
func TestWrongDevice(t *testing.T) {
	host := devicesOf(t, "host")[0]
	for _, d := range []device.Device{nil, host} {
		for name, call := range map[string]func() error{
			"EmptyKernel": func() error { _, err := clraw.EmptyKernel(d, 1); return err },
			"Copy":        func() error { _, err := clraw.Copy(d, 1, true, 1); return err },
			"CopyPinned":  func() error { _, err := clraw.CopyPinned(d, 1, true, 1); return err },
			"Wait":        func() error { _, _, err := clraw.Wait(d, 1); return err },
		} {
			const want = "not a device of the opencl plugin"
			err := call()
			require.Error(t, err, "%s(%T): %v, want an error containing %q", name, d, err, want)
			assert.Contains(t, err.Error(), want, "%s(%T): %v, want an error containing %q", name, d, err, want)
		}
	}
}
