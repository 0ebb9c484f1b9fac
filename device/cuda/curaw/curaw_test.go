//go:build cgo

package curaw_test

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/curaw"
	_ "github.com/gompt/gompt/device/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWrongDevice: each baseline refuses a device of another plugin, or
// none, with an error naming the plugin it wants. (The baselines on a
// CUDA device are tested by device/cuda's tests, on the GPU and on the
// fake driver.)
func TestWrongDevice(t *testing.T) {
	p, ok := device.Lookup("host")
	require.True(t, ok, "plugin host not registered")
	ds, err := p.Devices()
	require.NoError(t, err, "host devices")
	require.NotEmpty(t, ds, "host devices")
	for _, d := range []device.Device{nil, ds[0]} {
		for name, call := range map[string]func() error{
			"EmptyLaunchSync": func() error { _, err := curaw.EmptyLaunchSync(d, 1); return err },
			"Copy":            func() error { _, err := curaw.Copy(d, 1, true, 1); return err },
			"Load":            func() error { _, err := curaw.Load(d, curaw.EmptyPTX, false, 1); return err },
		} {
			const want = "not a device of the cuda plugin"
			err := call()
			require.Error(t, err, "%s(%T): %v, want an error containing %q", name, d, err, want)
			assert.Contains(t, err.Error(), want, "%s(%T): %v, want an error containing %q", name, d, err, want)
		}
	}
}
