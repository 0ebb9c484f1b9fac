package generic

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gompt/gompt/device"
)

// Plugin is a device.Plugin whose devices are found once: its Devices
// calls open on the first call only, and returns what it found to every
// call. A plugin registers one (device.Register, device.RegisterPlugin).
type Plugin struct {
	name string
	open func() ([]device.Device, error)
	once sync.Once
	devs []device.Device
	err  error
}

// NewPlugin returns the plugin called name whose devices open finds. open
// loads the driver and returns the devices in a stable order; with none
// it returns why (a driver that is missing, too old, sees no device),
// which Devices wraps in device.NoDevice unless it is one already. With
// some, an error says what was skipped, and Devices returns it too.
func NewPlugin(name string, open func() ([]device.Device, error)) *Plugin {
	if name == "" || open == nil {
		panic("generic: NewPlugin needs a name and an open function")
	}
	return &Plugin{name: name, open: open}
}

// Devices opens the plugin on the first call and returns its devices
// (device.Plugin); later calls return the same devices, in a new slice, and
// the same error. Safe for concurrent use.
func (p *Plugin) Devices() ([]device.Device, error) {
	p.once.Do(func() {
		defer func() {
			if v := recover(); v != nil {
				p.devs, p.err = nil, device.NoDevice(p.name, fmt.Errorf("opening the plugin panicked: %v", v))
			}
		}()
		p.devs, p.err = p.open()
		if len(p.devs) == 0 {
			p.devs = nil
			if p.err == nil {
				p.err = errors.New("the plugin found no device")
			}
			if !errors.Is(p.err, device.ErrNoDevice) {
				p.err = device.NoDevice(p.name, p.err)
			}
		}
	})
	return slices.Clone(p.devs), p.err
}
