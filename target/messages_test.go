package target

import (
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The memory routines' bounds errors name the device and the pointer (or
// the host slice) on the side that is too short.
func TestMemoryRoutineErrorsNameDeviceAndPointer(t *testing.T) {
	hostRuntime(t)
	p, err := AllocMem(8, 0)
	require.NoError(t, err)
	defer FreeMem(p, 0)
	ip, err := AllocMem(8, InitialDevice)
	require.NoError(t, err)
	defer FreeMem(ip, InitialDevice)
	big := make([]byte, 16)
	onDev := fmt.Sprintf("%v on device 0 (host:0)", p)
	onInit := fmt.Sprintf("%v on the initial device (1)", ip)
	for _, c := range []struct {
		name string
		err  error
		want []string
	}{
		{"memcpy to device", Memcpy(On(0, p), Host(big), 16), []string{"memcpy of 16 bytes to " + onDev, "(from host slice 0x", "out of bounds, only 8 bytes there"}},
		{"memcpy from device", Memcpy(Host(big), On(0, p), 16), []string{"memcpy of 16 bytes from " + onDev, "(to host slice 0x", "only 8 bytes"}},
		{"memcpy into host slice", Memcpy(Host(big[:4]), On(0, p), 8), []string{"memcpy of 8 bytes to host slice 0x", "(from " + onDev + ")", "only 4 bytes"}},
		{"memcpy to initial device", Memcpy(On(InitialDevice, ip), Host(big), 16), []string{"memcpy of 16 bytes to " + onInit, "only 8 bytes"}},
		{"memset", Memset(On(0, p).Add(4), 0, 8), []string{fmt.Sprintf("memset of 8 bytes at %v on device 0 (host:0): out of bounds, only 4 bytes there", p+4)}},
		{"memcpy_rect", MemcpyRect(On(0, p), Host(big), 1, []int{4, 4}, []int{0, 0}, []int{0, 0}, []int{4, 4}, []int{4, 4}),
			[]string{"destination " + onDev + ": volume [4 4]", "only 8 bytes there"}},
	} {
		if !assert.Error(t, c.err, c.name) {
			continue
		}
		for _, w := range c.want {
			assert.ErrorContains(t, c.err, w, c.name)
		}
	}
}

// A plugin with no device is named once in the runtime's messages: "cuda:
// no device: ...", not "cuda: cuda: device: no device: ...".
func TestNoDeviceReasonSaysPluginOnce(t *testing.T) {
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": "cuda,host"})
	if r.plugins[0].Devices > 0 {
		t.Skip("the cuda plugin has devices here")
	}
	_, err := DeviceNum(7)
	require.ErrorIs(t, err, ErrDevice, "DeviceNum(7)")
	s := err.Error()
	assert.Contains(t, s, "(cuda: no device: ", "DeviceNum(7): want the cuda plugin's reason once, as \"cuda: no device: ...\"")
	assert.NotContains(t, s, "cuda: cuda:", "DeviceNum(7): want the cuda plugin's reason once")
	assert.NotContains(t, s, "device: no device", "DeviceNum(7): want the cuda plugin's reason once")
	assert.ErrorIs(t, r.plugins[0].Err, device.ErrNoDevice, "cuda plugin error")
}

func TestDeviceNum(t *testing.T) {
	r := hostRuntime(t)
	nd := len(r.devs)
	for _, c := range []struct{ in, want int }{{0, 0}, {InitialDevice, nd}, {nd, nd}, {DefaultDevice, 0}} {
		got, err := DeviceNum(c.in)
		assert.NoError(t, err, "DeviceNum(%d)", c.in)
		assert.Equal(t, c.want, got, "DeviceNum(%d)", c.in)
	}
	_, err := DeviceNum(nd + 1)
	assert.ErrorIs(t, err, ErrDevice, "DeviceNum(%d)", nd+1)
	assert.ErrorContains(t, err, fmt.Sprintf("device %d is out of range", nd+1), "DeviceNum(%d)", nd+1)
}
