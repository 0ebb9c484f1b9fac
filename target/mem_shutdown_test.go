package target

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memHookPluginName is a plugin of one device, the host device, whose
// NewQueue first runs memOnNewQueue: a test's way to act at the moment a
// routine opens the device for the first time (the device's initialisation
// asks for a queue). The name sorts after "host", as faultyPluginName does.
const memHookPluginName = "host-memhook"

var memOnNewQueue atomic.Pointer[func()]

type memHookPlugin struct{}

type memHookDev struct{ device.Device }

func (d memHookDev) NewQueue() (device.Queue, error) {
	if f := memOnNewQueue.Load(); f != nil {
		(*f)()
	}
	return d.Device.NewQueue()
}

func (memHookPlugin) Devices() ([]device.Device, error) {
	p, ok := device.Lookup(host.Name)
	if !ok {
		return nil, device.NoDevice(memHookPluginName, errors.New("host plugin not registered"))
	}
	ds, err := p.Devices()
	if len(ds) == 0 {
		return nil, device.NoDevice(memHookPluginName, err)
	}
	return []device.Device{memHookDev{ds[0]}}, nil
}

func init() { device.Register(memHookPluginName, memHookPlugin{}) }

// AllocMem and FreeMem on an offload device that Shutdown begins to close
// while they open it fail with the shutdown error, allocate nothing and
// return the zero pointer: they are routines Shutdown waits for or
// refuses, never ones that go on to use a device being closed.
func TestRoutinesRefusedWhenShutdownBeginsAsTheyOpenTheDevice(t *testing.T) {
	t.Cleanup(func() { memOnNewQueue.Store(nil) })
	for _, routine := range []string{"AllocMem", "FreeMem"} {
		r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": memHookPluginName})
		require.Len(t, r.devs, 1, "devices of %s: %s", memHookPluginName, r.why())
		mi, ok := r.devs[0].d.(device.MemInfo)
		if !ok {
			mi, ok = r.devs[0].d.(memHookDev).Device.(device.MemInfo)
		}
		require.True(t, ok, "the host device does not implement device.MemInfo")
		b0, n0 := mi.MemInUse()
		begin := func() { r.closing.Store(true) } // Shutdown's first step
		memOnNewQueue.Store(&begin)
		var err error
		switch routine {
		case "AllocMem":
			var p DevicePtr
			p, err = AllocMem(64, 0)
			assert.Zero(t, p, "AllocMem as Shutdown began")
		case "FreeMem":
			err = FreeMem(0x1000, 0)
		}
		memOnNewQueue.Store(nil)
		require.True(t, r.closing.Load(), "%s did not open the device (no NewQueue)", routine)
		r.closing.Store(false)
		assert.ErrorIs(t, err, ErrShutdown, "%s as Shutdown began", routine)
		b, n := mi.MemInUse()
		assert.Equal(t, b0, b, "%s as Shutdown began: bytes in use", routine)
		assert.Equal(t, n0, n, "%s as Shutdown began: allocations in use", routine)
		assert.Zero(t, r.routines.Load(), "%s as Shutdown began: routines left in flight", routine)
	}
}
