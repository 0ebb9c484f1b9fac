package target

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
)

// The memory routines' bounds errors name the device and the pointer (or
// the host slice) on the side that is too short.
func TestMemoryRoutineErrorsNameDeviceAndPointer(t *testing.T) {
	hostRuntime(t)
	p, err := AllocMem(8, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer FreeMem(p, 0)
	ip, err := AllocMem(8, InitialDevice)
	if err != nil {
		t.Fatal(err)
	}
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
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(c.err.Error(), w) {
				t.Errorf("%s: %v\nwant it to say %q", c.name, c.err, w)
			}
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
	if !errors.Is(err, ErrDevice) {
		t.Fatalf("DeviceNum(7) = %v, want ErrDevice", err)
	}
	s := err.Error()
	if !strings.Contains(s, "(cuda: no device: ") || strings.Contains(s, "cuda: cuda:") || strings.Contains(s, "device: no device") {
		t.Errorf("DeviceNum(7): %s\nwant the cuda plugin's reason once, as \"cuda: no device: ...\"", s)
	}
	if !errors.Is(r.plugins[0].Err, device.ErrNoDevice) {
		t.Errorf("cuda plugin error %v does not match device.ErrNoDevice", r.plugins[0].Err)
	}
}

func TestDeviceNum(t *testing.T) {
	r := hostRuntime(t)
	nd := len(r.devs)
	for _, c := range []struct{ in, want int }{{0, 0}, {InitialDevice, nd}, {nd, nd}, {DefaultDevice, 0}} {
		if got, err := DeviceNum(c.in); err != nil || got != c.want {
			t.Errorf("DeviceNum(%d) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	if _, err := DeviceNum(nd + 1); !errors.Is(err, ErrDevice) || !strings.Contains(err.Error(), fmt.Sprintf("device %d is out of range", nd+1)) {
		t.Errorf("DeviceNum(%d): %v", nd+1, err)
	}
}
