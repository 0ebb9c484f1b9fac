package host_test

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/devicetest"
	_ "github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/require"
)

// TestLibraryConformance runs the conformance suite on the registered host
// device with the kernel library: every library kernel with a Go image runs
// on the device and is compared with its Go image run on the host.
func TestLibraryConformance(t *testing.T) {
	p, ok := device.Lookup("host")
	require.True(t, ok, `plugin "host" is not registered`)
	devs, err := p.Devices()
	require.NoError(t, err, "Devices")
	devicetest.TestDevice(t, devs[0], kernels.Conformance()...)
}
