package tooltest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tgtMapEvent is one target_map event as a second tool sees it: what a
// tool needs to join host ranges to device addresses.
type tgtMapEvent struct {
	hosts, devs []uintptr
	sizes       []uint64
	flags       []uint32
}

// tgtMaps records every target_map event. It belongs to a second Go tool,
// "tooltest-tgt", active beside the package's main one (several Go tools
// may be active at once), with a target_map callback and one for
// device_initialize, which starts tracing the devices other than device 0
// (tgtStartTracing).
var tgtMaps struct {
	mu sync.Mutex
	ev []tgtMapEvent
}

func init() {
	ompt.RegisterTool("tooltest-tgt", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, _ string, h *ompt.DeviceHandle, lk ompt.LookupFunc, _ string) {
				if dev != 0 { // device 0 is the main tool's to trace
					tgtStartTracing(dev, h, lk)
				}
			}))
			set(ompt.CallbackTargetMapEMI, ompt.TargetMapEMICallback(func(_ *ompt.Data, host, dev []uintptr, bytes []uint64, flags []uint32, _ uintptr) {
				tgtMaps.mu.Lock()
				tgtMaps.ev = append(tgtMaps.ev, tgtMapEvent{
					hosts: append([]uintptr(nil), host...), devs: append([]uintptr(nil), dev...),
					sizes: append([]uint64(nil), bytes...), flags: append([]uint32(nil), flags...),
				})
				tgtMaps.mu.Unlock()
			}))
			return 1
		}}
	})
}

// tgtTakeMaps returns the target_map events since the last call.
func tgtTakeMaps() []tgtMapEvent {
	tgtMaps.mu.Lock()
	defer tgtMaps.mu.Unlock()
	ev := tgtMaps.ev
	tgtMaps.ev = nil
	return ev
}

func tgtAddr(s []float32) uintptr { return uintptr(unsafe.Pointer(&s[0])) }

// A target construct's target_map event gives each clause's item its own
// map type (to, from, tofrom, alloc), its host range and its device
// address; target exit data's event gives each item the device address it
// had while mapped, whatever the constructs before it mapped.
func TestMapEventsGiveTypesAndAddresses(t *testing.T) {
	a, b, c, d := make([]float32, 16), make([]float32, 32), make([]float32, 64), make([]float32, 8)
	tgtTakeMaps()
	require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Fill, Shape: target.N(64),
		Maps: []target.Map{target.To(a), target.From(b), target.ToFrom(c), target.Alloc(d)},
		Args: []target.Arg{target.Int(64), target.Float32(1), target.Slice(c)}}))
	ev := tgtTakeMaps()
	require.Len(t, ev, 1, "target_map events of one target construct")
	assert.Equal(t, []uint32{ompt.MapFlagTo, ompt.MapFlagFrom, ompt.MapFlagTo | ompt.MapFlagFrom, ompt.MapFlagAlloc}, ev[0].flags, "map flags of to, from, tofrom, alloc")
	assert.Equal(t, []uintptr{tgtAddr(a), tgtAddr(b), tgtAddr(c), tgtAddr(d)}, ev[0].hosts, "host addresses")
	assert.Equal(t, []uint64{64, 128, 256, 32}, ev[0].sizes, "sizes")
	seen := map[uintptr]bool{}
	for i, p := range ev[0].devs {
		assert.NotZero(t, p, "item %d: device address", i)
		assert.False(t, seen[p], "item %d: device address %#x given twice", i, p)
		seen[p] = true
	}

	// Enter a, then b (a construct's scratch keeps b's device address),
	// then exit a: the event names a's device address, not b's.
	require.NoError(t, target.EnterData(0, target.To(a)))
	require.NoError(t, target.EnterData(0, target.To(b), target.To(d)))
	pa, err := target.MappedPtr(a, 0)
	require.NoError(t, err)
	pb, err := target.MappedPtr(b, 0)
	require.NoError(t, err)
	require.NotEqual(t, pa, pb)
	tgtTakeMaps()
	require.NoError(t, target.ExitData(0, target.From(a)))
	ev = tgtTakeMaps()
	require.Len(t, ev, 1, "target_map events of one exit data construct")
	assert.Equal(t, []uintptr{tgtAddr(a)}, ev[0].hosts, "exit data: host address")
	assert.Equal(t, []uintptr{uintptr(pa)}, ev[0].devs, "exit data of a: a's device address (b's is %#x)", uintptr(pb))
	assert.Equal(t, []uint32{ompt.MapFlagFrom}, ev[0].flags, "exit data: map flags of from")
	require.NoError(t, target.ExitData(0, target.Release(d), target.Delete(b)))
	ev = tgtTakeMaps()
	require.Len(t, ev, 1, "target_map events of the second exit data construct")
	assert.Equal(t, []uint32{ompt.MapFlagRelease, ompt.MapFlagDelete}, ev[0].flags, "exit data: map flags of release, delete")
	assert.False(t, target.IsPresent(b, 0), "b after exit data delete")
	tool.take()
}

// Every data operation of a target nowait construct is reported with an
// asynchronous kind (OpenMP 5.1's *_async data-op types), as those of the
// nowait data constructs are.
func TestTargetNowaitDataOpsAreAsync(t *testing.T) {
	x, y := make([]float32, 32), make([]float32, 32)
	tool.take()
	require.NoError(t, target.TargetNowait(target.Region{Device: target.Dev(0), Kernel: kernels.Saxpy, Shape: target.N(32),
		Maps: []target.Map{target.To(x), target.ToFrom(y)},
		Args: []target.Arg{target.Int(32), target.Float32(2), target.Slice(x), target.Slice(y)}}).Wait())
	tgtCheckDataOps(t, "TestTargetNowaitDataOpsAreAsync", "ompt_target_nowait", "_async")
}

// tgtCheckDataOps checks the events since the last take: the construct
// (kind, e.g. "ompt_target") begins and ends naming the test fn as its
// caller, and its data ops, of a saxpy over x (to) and y (tofrom), are of
// the kinds with suffix ("_async" or "").
func tgtCheckDataOps(t *testing.T, fn, kind, suffix string) {
	t.Helper()
	got, errs := tool.take()
	assert.Empty(t, errs, "slot-rule violations the tool saw")
	kinds := map[string]int{}
	ends := 0
	for _, l := range got {
		f := strings.Fields(l)
		if len(f) > 2 && f[0] == "data_op" && f[2] == "end" {
			kinds[f[1]]++
		}
		if len(f) > 2 && f[0] == "target" && f[1] == kind {
			ends++
			assert.True(t, strings.HasSuffix(l, " code="+fn), "%s: the tool was told %q; want the caller %s", kind, l, fn)
		}
	}
	assert.Equal(t, 2, ends, "%s begin and end events; events:\n%s", kind, strings.Join(got, "\n"))
	assert.Equal(t, map[string]int{
		"ompt_target_data_alloc" + suffix: 2, "ompt_target_data_transfer_to_device" + suffix: 2,
		"ompt_target_data_transfer_from_device" + suffix: 1, "ompt_target_data_delete" + suffix: 2,
	}, kinds, "data ops of a %s construct; events:\n%s", kind, strings.Join(got, "\n"))
}

// A synchronous target construct with depend items reports its data ops
// with the synchronous kinds and its caller's code pointer, as one
// without.
func TestTargetWithDependDataOpsAreSync(t *testing.T) {
	x, y := make([]float32, 32), make([]float32, 32)
	tool.take()
	require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Saxpy, Shape: target.N(32),
		Maps: []target.Map{target.To(x), target.ToFrom(y), target.DependInOut(y)},
		Args: []target.Arg{target.Int(32), target.Float32(2), target.Slice(x), target.Slice(y)}}))
	tgtCheckDataOps(t, "TestTargetWithDependDataOpsAreSync", "ompt_target", "")
}

// A target construct that maps nothing (no map clause, no slice argument)
// has no target_map event: its events are the construct's begin, the
// kernel's submit and the end.
func TestNothingMappedNoMapEvent(t *testing.T) {
	reg := target.Region{Device: target.Dev(0), Kernel: kernels.Empty, Shape: target.N(4), Args: []target.Arg{target.Int(4)}}
	require.NoError(t, target.Target(reg), "device 0's first construct, if none ran yet")
	tool.take()
	tgtTakeMaps()
	require.NoError(t, target.Target(reg))
	td := lastTD()
	expect(t,
		fmt.Sprintf("target ompt_target begin dev=0 td=%d code=TestNothingMappedNoMapEvent", td),
		fmt.Sprintf("submit begin teams=0 td=%d", td),
		fmt.Sprintf("submit end teams=0 td=%d", td),
		fmt.Sprintf("target ompt_target end dev=0 td=%d code=TestNothingMappedNoMapEvent", td),
	)
	assert.Empty(t, tgtTakeMaps(), "target_map events of a construct that maps nothing")
}

// A traced construct whose kernel launch is refused (a device pointer the
// device does not know) returns that failure, also when its copies ran on
// the queue's goroutine and their trace records wait for the construct's
// end: on device 0 (queues that time themselves) and on the untimed
// device (records bracketed by events), when there is one.
func TestTracedConstructKeepsLaunchFailure(t *testing.T) {
	devs := []int{0}
	for i, d := range target.Devices() {
		if d.Plugin == tgtUntimedName {
			devs = append(devs, i)
		}
	}
	for _, dev := range devs {
		x := make([]float32, bigLen)
		for i := range x {
			x[i] = 1
		}
		err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(len(x)),
			Maps: []target.Map{target.ToFrom(x)},
			Args: []target.Arg{target.Int(len(x)), target.Float32(2), target.Slice(x), target.Ptr(target.DevicePtr(0x10))}})
		require.Error(t, err, "device %d: a launch with a pointer the device does not know", dev)
		assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "device %d: the refused launch's code: %v", dev, err)
		assert.Equal(t, float32(1), x[len(x)-1], "device %d: x after the construct", dev)
	}
	tool.take()
}

// A traced construct whose kernel launch is refused, and whose queue then
// fails a wait (whichever: before a free, for the trace's times at its
// end, when it is given back), returns the launch failure, its cause,
// among its errors, not only the later failure.
func TestTracedConstructKeepsFirstFailure(t *testing.T) {
	dev := -1
	for i, d := range target.Devices() {
		if d.Plugin == tgtUntimedName {
			dev = i
		}
	}
	if dev < 0 {
		t.Skip("no " + tgtUntimedName + " device: GOMPT_PLUGINS names other plugins")
	}
	fired := 0
	for n := 1; n < 10; n++ {
		x := make([]float32, bigLen)
		tgtSyncFail.mu.Lock()
		before := tgtSyncFail.fired
		tgtSyncFail.mu.Unlock()
		tgtFailNthSync(n)
		err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(len(x)),
			Maps: []target.Map{target.ToFrom(x)},
			Args: []target.Arg{target.Int(len(x)), target.Float32(2), target.Slice(x), target.Ptr(target.DevicePtr(0x10))}})
		tgtFailNthSync(0)
		tgtSyncFail.mu.Lock()
		hit := tgtSyncFail.fired > before
		tgtSyncFail.mu.Unlock()
		require.Error(t, err, "sync %d failing: a launch with a pointer the device does not know", n)
		if !hit {
			assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "the refused launch's code: %v", err)
			break
		}
		fired++
		assert.ErrorContains(t, err, "launch saxpy", "sync %d failing after a refused launch: want the launch failure among the errors", n)
	}
	assert.GreaterOrEqual(t, fired, 2, "syncs of the construct's queue that failed")
	tool.take()
}
