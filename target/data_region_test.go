package target

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// datWarnings captures what the runtime writes to warnOut until the test
// ends.
func datWarnings(t *testing.T) *bytes.Buffer {
	var w bytes.Buffer
	old := warnOut
	warnOut = &w
	t.Cleanup(func() { warnOut = old })
	return &w
}

// A data region that ends normally exits its maps once: its items are gone
// (or back to the counts enter data gave them), the copy back happened
// once, and nothing is reported on standard error as if a panic had left
// the region.
func TestDataRegionExitsOnce(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	warn := datWarnings(t)
	for _, dev := range []int{0, InitialDevice} {
		x, y := vecs(256)
		require.NoError(t, Data(dev, []Map{To(x), ToFrom(y)}, func() error {
			return Target(saxpyRegion(dev, len(x), 2, x, y))
		}), "device %d: data region", dev)
		checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
		assert.Empty(t, mappingEntries(dev), "device %d: entries after the region", dev)

		// x entered before the region keeps its dynamic reference after it.
		require.NoError(t, EnterData(dev, To(x)))
		require.NoError(t, Data(dev, []Map{ToFrom(x)}, func() error { return nil }), "device %d: region on present x", dev)
		if dev >= 0 {
			es := mappingEntries(dev)
			require.Len(t, es, 1, "device %d: entries after a region on present x", dev)
			assert.Equal(t, 0, es[0].Structured, "device %d: x's structured count after the region", dev)
			assert.Equal(t, 1, es[0].Dynamic, "device %d: x's dynamic count after the region", dev)
		}
		require.NoError(t, ExitData(dev, Delete(x)))
		assert.Empty(t, warn.String(), "device %d: warnings after data regions that ended normally", dev)
	}
}

// When a data region's body panics and the region's exit then fails (its
// copy back fails on the device), the panic goes on and the exit's failure
// is written to standard error; a body that returns instead gets the
// failure as the region's error, and nothing is written. Either way nothing
// stays mapped.
func TestDataRegionPanicReportsFailedExit(t *testing.T) {
	r := faultRuntime(t)
	noLeak(t, r)
	warn := datWarnings(t)
	x := make([]float32, 64)
	copyOuts := 0
	func() {
		defer func() {
			require.Equal(t, "dat boom", recover(), "recovered: want the body's panic")
		}()
		Data(0, []Map{ToFrom(x).Named("x")}, func() error {
			copyOuts = faultPlan.Injected(faulty.CopyOut) // counts stay from other tests and runs
			faultPlan.FailNth(faulty.CopyOut, 1, device.CodeUnknown)
			panic("dat boom")
		})
	}()
	require.Equal(t, 1, faultPlan.Injected(faulty.CopyOut)-copyOuts, "the region's copy back was not tried")
	w := warn.String()
	assert.Contains(t, w, "gompt: target data region left by a panic: ", "standard error after the panic")
	assert.Contains(t, w, faulty.ErrInjected.Error(), "standard error after the panic: want the copy back's failure")
	assert.Empty(t, mappingEntries(0), "entries after the region left by a panic")

	warn.Reset()
	err := Data(0, []Map{ToFrom(x).Named("x")}, func() error {
		faultPlan.FailNth(faulty.CopyOut, 1, device.CodeUnknown)
		return nil
	})
	assert.True(t, isInjected(err, faulty.CopyOut), "region whose copy back failed: %v; want the copy's failure", err)
	assert.Empty(t, warn.String(), "standard error after a region that returned its exit's failure")
	assert.Empty(t, mappingEntries(0), "entries after the region")
}

// The region's maps are those given when it began: a body that reuses the
// slice of maps for constructs of its own (a scratch slice, refilled)
// changes neither what the region copies back nor what it unmaps, on an
// offload device and on the initial device.
func TestDataRegionKeepsItsMaps(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	for _, dev := range []int{0, InitialDevice} {
		t.Run(fmt.Sprint("device", dev), func(t *testing.T) {
			x, y := vecs(128)
			z := make([]float32, 16) // never mapped
			maps := make([]Map, 2, 4)
			maps[0], maps[1] = To(x), ToFrom(y)
			err := Data(dev, maps, func() error {
				// Reuse the slice: the body's own region maps x and y
				// (present: no copies), then refills it with an item the
				// region never mapped.
				maps = append(maps[:0], To(x), From(y))
				if err := Target(saxpyRegion(dev, len(x), 2, x, y, maps...)); err != nil {
					return err
				}
				maps = append(maps[:0], From(z))
				return nil
			})
			require.NoError(t, err, "device %d: data region whose body reused its slice of maps", dev)
			checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
			assert.Empty(t, mappingEntries(dev), "device %d: entries after the region", dev)
		})
	}
}

// A data construct that cannot get a queue on the device (NewQueue fails:
// the device's one queue is busy with another construct's kernel) returns
// that failure and maps nothing; a data region then does not run its body.
func TestDataConstructWithoutQueueFails(t *testing.T) {
	x := make([]float32, 32)
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"EnterData", func() error { return EnterData(0, To(x)) }},
		{"EnterDataNowait", func() error { return EnterDataNowait(0, To(x)).Wait() }},
		{"Update", func() error { return Update(0, To(x)) }},
		{"UpdateNowait with a depend item", func() error { return UpdateNowait(0, To(x), DependIn(x)).Wait() }},
		{"ExitData", func() error { return ExitData(0, From(x)) }},
		{"Data", func() error {
			return Data(0, []Map{ToFrom(x)}, func() error {
				t.Error("the data region's body ran although its maps failed")
				return nil
			})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := faultRuntime(t)
			noLeak(t, r)
			// A kernel that holds the device's construct (and queue) until
			// let go.
			started, release := make(chan struct{}), make(chan struct{})
			hold := &device.Kernel{
				Name:   "dat_hold_queue",
				Params: []device.Param{{Name: "n", Kind: device.ParamInt64}},
				Images: []device.Image{{Kind: device.ImageHost, Host: func(*device.HostArgs, device.Range, int, int) {
					close(started)
					select {
					case <-release:
					case <-time.After(20 * time.Second):
					}
				}}},
			}
			held := TargetNowait(Region{Device: Dev(0), Kernel: hold, Shape: N(1), Args: []Arg{Int(1)}})
			select {
			case <-started:
			case <-time.After(20 * time.Second):
				close(release)
				require.FailNow(t, "the holding kernel did not start in 20s")
			}
			before := faultPlan.Injected(faulty.NewQueue)
			faultPlan.FailNth(faulty.NewQueue, 1, device.CodeUnknown)
			err := c.run()
			faultPlan.FailNth(faulty.NewQueue, 0, 0)
			close(release)
			require.NoError(t, held.Wait(), "the holding kernel's construct")
			require.Equal(t, before+1, faultPlan.Injected(faulty.NewQueue), "%s made no queue", c.name)
			assert.True(t, isInjected(err, faulty.NewQueue), "%s: %v; want the failed new queue", c.name, err)
			assert.Empty(t, mappingEntries(0), "%s: entries after it failed", c.name)
		})
	}
}

// A data region on a device that does not exist returns an error naming
// the device number and does not run its body.
func TestDataRegionOnMissingDeviceFails(t *testing.T) {
	r := hostRuntime(t)
	x := make([]float32, 8)
	ran := false
	err := Data(len(r.devs)+3, []Map{ToFrom(x)}, func() error { ran = true; return nil })
	require.Error(t, err, "data region on device %d of %d", len(r.devs)+3, len(r.devs))
	assert.ErrorContains(t, err, fmt.Sprint(len(r.devs)+3), "the error names the device")
	assert.False(t, ran, "the body of a data region on a missing device ran")
}

// The initial device refuses the updates an offload device refuses, with
// the same words: an empty list item, two items sharing storage.
func TestInitialDeviceRefusesBadUpdates(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x := make([]float32, 64)
	require.NoError(t, EnterData(0, To(x)))
	for _, c := range []struct {
		name string
		maps []Map
		want string
	}{
		{"empty item", []Map{To(x[:0])}, "empty host range"},
		{"overlapping items", []Map{To(x[:40]), From(x[20:])}, "overlaps"},
	} {
		for _, dev := range []int{0, InitialDevice} {
			err := Update(dev, c.maps...)
			require.Error(t, err, "device %d: update with %s", dev, c.name)
			assert.ErrorContains(t, err, c.want, "device %d: update with %s", dev, c.name)
			err = UpdateNowait(dev, c.maps...).Wait()
			require.Error(t, err, "device %d: update nowait with %s", dev, c.name)
			assert.ErrorContains(t, err, c.want, "device %d: update nowait with %s", dev, c.name)
		}
	}
	require.NoError(t, ExitData(0, Delete(x)))
}
