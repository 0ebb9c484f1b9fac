package target

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/device/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memPairPluginName is a plugin of two devices that are the host device
// wrapped twice by device/faulty with faultPlan: two devices of one
// plugin whose queues do not copy from a peer (faulty's queues are not
// device.PeerCopier), as two OpenCL devices are, so that copies between
// them are staged through host memory. The name sorts after "host", as
// faultyPluginName does.
const memPairPluginName = "host-mempair"

type memPairPlugin struct{}

func (memPairPlugin) Devices() ([]device.Device, error) {
	p, ok := device.Lookup(host.Name)
	if !ok {
		return nil, device.NoDevice(memPairPluginName, errors.New("host plugin not registered"))
	}
	ds, err := p.Devices()
	if len(ds) == 0 {
		return nil, device.NoDevice(memPairPluginName, fmt.Errorf("the host plugin has no device: %v", err))
	}
	return []device.Device{faulty.Wrap(ds[0], faultPlan), faulty.Wrap(ds[0], faultPlan)}, nil
}

func init() { device.Register(memPairPluginName, memPairPlugin{}) }

// memPairRuntime is a runtime on memPairPlugin's two devices, with
// nothing armed; the plan is disarmed again when the test ends.
func memPairRuntime(t *testing.T) *runtimeState {
	t.Helper()
	faultPlan.Reset()
	t.Cleanup(faultPlan.Reset)
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": memPairPluginName})
	require.Len(t, r.devs, 2, "devices of %s: %s", memPairPluginName, r.why())
	require.Equal(t, r.devs[0].plugin, r.devs[1].plugin, "the two devices' plugins")
	return r
}

// A copy between two devices that is staged through host memory, and a
// copy between the host and a device, return the failure of any device
// operation they make — a copy out of the source, a
// copy into the destination, the wait for either queue — rather than
// success with bytes missing; after each failure the next copy is right.
// Memcpy and MemcpyRect alike.
func TestCopiesReportEveryDeviceFailure(t *testing.T) {
	r := memPairRuntime(t)
	noLeakOn(t, r)
	const size = 4096
	var p [2]DevicePtr
	for dev := range p {
		var err error
		p[dev], err = AllocMem(size, dev)
		require.NoError(t, err)
		defer FreeMem(p[dev], dev)
	}
	src := make([]byte, size)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	// Each copy, and what the destination's first size bytes must hold
	// after it, from a destination of zeros.
	rectWant := make([]byte, size)
	for row := range 8 { // 8 rows of 100 bytes, at row*128+4 from (row+2)*128+8
		copy(rectWant[row*128+4:row*128+104], src[(row+2)*128+8:])
	}
	plainWant := make([]byte, size)
	copy(plainWant[16:16+1000], src[8:])
	rect := func(dst, src Loc) error {
		return MemcpyRect(dst, src, 1, []int{8, 100}, []int{0, 4}, []int{2, 8}, []int{32, 128}, []int{32, 128})
	}
	type copyCase struct {
		name string
		dst  int // device, or -1 for the host slice got
		run  func(got []byte) error
		want []byte
	}
	cases := []copyCase{
		{"Memcpy device 0 to device 1", 1, func([]byte) error { return Memcpy(On(1, p[1]).Add(16), On(0, p[0]).Add(8), 1000) }, plainWant},
		{"MemcpyRect device 0 to device 1", 1, func([]byte) error { return rect(On(1, p[1]), On(0, p[0])) }, rectWant},
		{"Memcpy host to device 1", 1, func([]byte) error { return Memcpy(On(1, p[1]).Add(16), Host(src[8:]), 1000) }, plainWant},
		{"MemcpyRect host to device 1", 1, func([]byte) error { return rect(On(1, p[1]), Host(src)) }, rectWant},
		{"Memcpy device 0 to host", -1, func(got []byte) error { return Memcpy(Host(got[16:]), On(0, p[0]).Add(8), 1000) }, plainWant},
		{"MemcpyRect device 0 to host", -1, func(got []byte) error { return rect(Host(got), On(0, p[0])) }, rectWant},
		{"Memcpy within device 0", 0, func([]byte) error { return Memcpy(On(0, p[0]).Add(16), On(0, p[0]).Add(size/2+8), 1000) }, plainWant},
	}
	for _, c := range cases {
		for _, op := range []faulty.Op{faulty.CopyOut, faulty.CopyIn, faulty.Copy, faulty.Sync} {
			t.Run(fmt.Sprintf("%s/%s", c.name, op), func(t *testing.T) {
				got := make([]byte, size)
				reset := func() {
					t.Helper()
					clear(got)
					// Device 0 holds src, in its second half too (for the copy within it).
					require.NoError(t, Memcpy(On(0, p[0]), Host(src), size))
					if c.dst == 0 {
						require.NoError(t, Memcpy(On(0, p[0]).Add(size/2), Host(src[:size/2]), size/2))
						require.NoError(t, Memset(On(0, p[0]), 0, size/2))
					} else {
						require.NoError(t, Memset(On(1, p[1]), 0, size))
					}
				}
				result := func() []byte {
					t.Helper()
					if c.dst < 0 {
						return got
					}
					out := make([]byte, size)
					require.NoError(t, Memcpy(Host(out), On(c.dst, p[c.dst]), size))
					if c.dst == 0 {
						clear(out[size/2:]) // the source half
					}
					return out
				}
				fired := 0
				for n := 1; n < 50; n++ {
					reset()
					before := faultPlan.Injected(op)
					faultPlan.FailNth(op, n, device.CodeUnknown)
					err := c.run(got)
					faultPlan.FailNth(op, 0, 0)
					if faultPlan.Injected(op) == before {
						require.NoError(t, err, "with %s %d never reached", op, n)
						assert.True(t, bytes.Equal(c.want, result()), "the bytes copied, with no failure")
						break
					}
					fired++
					require.Error(t, err, "%s %d failed: the copy reported success", op, n)
					require.True(t, isInjectedIn(err, op), "%s %d failed: the copy returned %v; want that failure", op, n, err)
				}
				// The device works afterwards.
				reset()
				require.NoError(t, c.run(got), "the copy after the failures")
				assert.True(t, bytes.Equal(c.want, result()), "the bytes copied after the failures")
				t.Logf("%d failures injected", fired)
			})
		}
	}
}

// When every queue of a device is in use and the device cannot make
// another, Memcpy, Memset and MemcpyRect on it return that failure rather
// than success with nothing copied; once a queue is free they work.
func TestRoutinesReportAQueueTheDeviceCannotMake(t *testing.T) {
	r := faultRuntime(t)
	noLeak(t, r)
	d := r.devs[0]
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	defer FreeMem(p, 0)
	require.NoError(t, Memset(On(0, p), 1, 64))
	// Take every queue the device has: the spare, the idle ones.
	var held []*construct
	for {
		d.qmu.Lock()
		free := len(d.idle)
		d.qmu.Unlock()
		if free == 0 && d.spare.Load() == nil {
			break
		}
		c, err := d.take()
		require.NoError(t, err)
		held = append(held, c)
	}
	src := make([]byte, 64)
	for i := range src {
		src[i] = byte(i + 100)
	}
	got := make([]byte, 64)
	calls := []struct {
		name string
		run  func() error
	}{
		{"Memcpy to the device", func() error { return Memcpy(On(0, p), Host(src), 64) }},
		{"Memcpy from the device", func() error { return Memcpy(Host(got), On(0, p), 64) }},
		{"Memcpy within the device", func() error { return Memcpy(On(0, p), On(0, p).Add(32), 32) }},
		{"Memset", func() error { return Memset(On(0, p), 9, 64) }},
		{"MemcpyRect to the device", func() error {
			return MemcpyRect(On(0, p), Host(src), 1, []int{2, 4}, []int{0, 0}, []int{0, 0}, []int{8, 8}, []int{8, 8})
		}},
	}
	for _, c := range calls {
		faultPlan.FailNth(faulty.NewQueue, 1, device.CodeOutOfResources)
		err := c.run()
		require.False(t, faultPlan.Armed(faulty.NewQueue), "%s made no queue", c.name)
		assert.True(t, isInjectedIn(err, faulty.NewQueue), "%s with no queue to be had: %v; want the new-queue failure", c.name, err)
	}
	assert.Equal(t, make([]byte, 64), got, "host bytes after the failed copy from the device")
	for _, c := range held {
		require.NoError(t, d.give(c))
	}
	require.NoError(t, Memcpy(Host(got), On(0, p), 64))
	assert.Equal(t, bytes.Repeat([]byte{1}, 64), got, "device bytes after the failed routines")
	require.NoError(t, Memcpy(On(0, p), Host(src), 64), "Memcpy once a queue is free")
	require.NoError(t, Memcpy(Host(got), On(0, p), 64))
	assert.Equal(t, src, got, "device bytes after the copy once a queue is free")
}

// AllocMem whose device allocation fails returns that failure and the
// zero pointer, and the device holds nothing more; the next AllocMem
// works.
func TestAllocMemReportsDeviceFailure(t *testing.T) {
	r := faultRuntime(t)
	noLeak(t, r)
	b0, n0 := memInUse(t, r)
	faultPlan.FailNth(faulty.Alloc, 1, device.CodeOutOfResources)
	p, err := AllocMem(256, 0)
	require.True(t, isInjected(err, faulty.Alloc), "AllocMem whose device alloc failed: %v; want the alloc failure", err)
	assert.Zero(t, p, "the pointer of a failed AllocMem")
	b, n := memInUse(t, r)
	assert.Equal(t, b0, b, "bytes in use after a failed AllocMem")
	assert.Equal(t, n0, n, "allocations in use after a failed AllocMem")
	assert.Error(t, FreeMem(p, 0), "FreeMem of a failed AllocMem's pointer")
	p, err = AllocMem(256, 0)
	require.NoError(t, err, "AllocMem after the failure")
	require.NoError(t, Memset(On(0, p), 1, 256))
	require.NoError(t, FreeMem(p, 0))
}
