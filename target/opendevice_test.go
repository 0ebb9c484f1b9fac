package target

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenDevice opens every device as ompt-devinfo does: each says where
// its times come from and what kernels may use there, the same
// capabilities Devices lists, and the initial device describes itself.
func TestOpenDevice(t *testing.T) {
	for _, d := range Devices() {
		got, err := OpenDevice(d.Num)
		require.NoError(t, err, "OpenDevice(%d) (%s)", d.Num, d.ID)
		assert.Equal(t, d.ID, got.ID, "OpenDevice(%d)", d.Num)
		assert.Equal(t, d.Name, got.Name, "OpenDevice(%d)", d.Num)
		assert.Equal(t, d.Caps, got.Caps, "OpenDevice(%d): capabilities", d.Num)
		assert.NotEmpty(t, got.TimeSource, "OpenDevice(%d) (%s): where its times come from", d.Num, d.ID)
		assert.Positive(t, got.Caps.TeamSize.N, "OpenDevice(%d): team size", d.Num)
		t.Logf("%s: times from %s; bracketing %v; caps %+v", d.ID, got.TimeSource, got.BracketTimes, got.Caps)
	}
	in, err := OpenDevice(InitialDevice)
	require.NoError(t, err)
	assert.Equal(t, InitialDeviceNum(), in.Num, "the initial device's number")
	assert.True(t, in.Caps.FP64.Has && in.Caps.Int64Atomics.Has, "the initial device runs Go: every capability")
	_, err = OpenDevice(NumDevices() + 5)
	assert.ErrorIs(t, err, ErrDevice, "a device number that names no device")
}
