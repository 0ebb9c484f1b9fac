package soak

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
)

// plan is the fault plan of device 0.
var plan = faulty.Register(nil)

func TestMain(m *testing.M) {
	if os.Getenv("GOMPT_PLUGINS") == "" {
		os.Setenv("GOMPT_PLUGINS", "faulty,opencl")
	}
	if os.Getenv(childEnv) != "" {
		// A child process (leak_test.go): its test shuts the runtime
		// down itself.
		os.Exit(m.Run())
	}
	code := m.Run()
	if err := target.Shutdown(); err != nil {
		fmt.Fprintln(os.Stderr, "soak: shutdown:", err)
		code = 1
	}
	os.Exit(code)
}

// memInUse returns device n's memory in use, and false if it does not
// account for its memory.
func memInUse(n int) (int64, int, bool) {
	infos := target.Devices()
	if n < 0 || n >= len(infos) {
		return 0, 0, false
	}
	p, ok := device.Lookup(infos[n].Plugin)
	if !ok {
		return 0, 0, false
	}
	ds, _ := p.Devices()
	if infos[n].Index >= len(ds) {
		return 0, 0, false
	}
	mi, ok := ds[infos[n].Index].(device.MemInfo)
	if !ok {
		return 0, 0, false
	}
	b, a := mi.MemInUse()
	return b, a, true
}

// memBaseline records every device's memory in use and checks, when the
// test ends, that it is back there.
func memBaseline(t *testing.T) {
	t.Helper()
	type use struct {
		b  int64
		a  int
		ok bool
	}
	before := make([]use, target.NumDevices())
	for n := range before {
		before[n].b, before[n].a, before[n].ok = memInUse(n)
	}
	t.Cleanup(func() {
		for n, u := range before {
			if !u.ok {
				continue
			}
			b, a, _ := memInUse(n)
			assert.Equal(t, u.b, b, "device %d: bytes in use after the test against before (leak)", n)
			assert.Equal(t, u.a, a, "device %d: allocations in use after the test against before (leak)", n)
		}
	})
}

// envInt reads a positive whole number from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
