//go:build cgo

package opencl

import (
	"sync"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pluginDevices returns the first OpenCL device, skipping without one.
func pluginDevices(t testing.TB) (*clDevice, error) {
	p, _ := device.Lookup(Name)
	devs, err := p.Devices()
	if len(devs) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	return devs[0].(*clDevice), nil
}

func clDevices(t *testing.T) []*clDevice {
	t.Helper()
	p, _ := device.Lookup(Name)
	devs, err := p.Devices()
	if len(devs) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	var out []*clDevice
	for _, dv := range devs {
		d := dv.(*clDevice)
		require.NoError(t, d.init())
		out = append(out, d)
	}
	return out
}

// TestStamps checks both kinds of timestamp command on every device, and
// on POCL as a device without a host clock whose markers carry no times
// (NVIDIA, reportedly): each completes with QUEUED <= SUBMIT <= START <=
// END, END between clock readings taken before and after it, and a later
// stamp no earlier. The marker leg is skipped only where the plugin found
// markers untimed, which it then never uses.
func TestStamps(t *testing.T) {
	for _, base := range clDevices(t) {
		for _, c := range []struct {
			name string
			d    func(t *testing.T) *clDevice
		}{
			{"native", func(*testing.T) *clDevice { return base }},
			{"as-nvidia", func(t *testing.T) *clDevice { return pretend(t, base, asNVIDIA, 0) }},
		} {
			t.Run(c.name, func(t *testing.T) {
				testStamps(t, c.d(t))
			})
		}
	}
}

func testStamps(t *testing.T, d *clDevice) {
	_, err := d.emptyKernel()
	require.NoError(t, err)
	t.Logf("%s: markers have times: %v; Now reads host clock %d: %v; host timer %v; host times %v", d.info.Name, !d.kstamps, d.hclock, d.hclockOK, d.timer, d.hostTimes)
	if d.hostTimes {
		// The driver's times were found unusable: they truly are, for
		// markers and kernels alike (a driver wrongly judged so would lose
		// its own times for nothing). The brackets used instead are
		// checked by TestHostTimes and devicetest.
		require.False(t, d.hooks.noTimes, "a pretend device without times is TestHostTimes' to check")
		for _, kernel := range []bool{false, true} {
			p, err := d.probeStamp(kernel)
			require.NoError(t, err)
			assert.False(t, p.ordered(), "kernel stamp %v: counters %+v are usable, yet the device uses host times (%s)", kernel, p, d.timesWhy)
		}
		return
	}
	require.False(t, d.hooks.kstamps && !d.kstamps, "a device whose markers were made out untimed stamps with markers")
	require.False(t, d.hooks.noHostClock && (d.hclockOK || d.timer), "a device with no host clock reads one")
	if d.hclockOK {
		// Now reads that clock: a command's END lies between readings.
		h0 := cl.HostClock(d.hclock)
		end, h1, err := d.stampEnd(d.hclock)
		assert.NoError(t, err, "host clock %d: stamp end %d outside [%d, %d] (%v)", d.hclock, end, h0, h1, err)
		assert.GreaterOrEqual(t, end, h0, "host clock %d: stamp end %d outside [%d, %d] (%v)", d.hclock, end, h0, h1, err)
		assert.LessOrEqual(t, end, h1, "host clock %d: stamp end %d outside [%d, %d] (%v)", d.hclock, end, h0, h1, err)
	}
	q, err := d.createQueue()
	require.NoError(t, err)
	defer cl.ReleaseCommandQueue(q)
	legs := []bool{true, false, true, false}
	if d.kstamps {
		t.Log("markers carry no times on this device: marker leg skipped")
		legs = []bool{true, true}
	}
	var last int64
	for _, kernel := range legs {
		before, _ := d.Now()
		ev, err := d.stampWith(q, kernel)
		require.NoError(t, err)
		p, err := d.readEvent(q, ev)
		cl.ReleaseEvent(ev)
		after, _ := d.Now()
		require.NoError(t, err)
		assert.True(t, p.ordered(), "kernel stamp %v: counters %+v, want 0 < queued <= submit <= start <= end", kernel, p)
		// Where Now is the line fitted to timestamp commands (no host clock,
		// no host timer: NVIDIA), it is off by up to half its calibration's
		// bracket, which a busy machine widens: allow the whole bracket.
		var slack int64
		if c := d.clock.cal.Load(); !d.hclockOK && !d.timer && c != nil {
			slack = c.width
		}
		assert.GreaterOrEqual(t, p.End, before-slack, "kernel stamp %v: end %d, clock [%d, %d] (end %+d, %+d ns; calibration slack %d ns), previous %d", kernel, p.End, before, after, p.End-before, p.End-after, slack, last)
		assert.LessOrEqual(t, p.End, after+slack, "kernel stamp %v: end %d, clock [%d, %d] (end %+d, %+d ns; calibration slack %d ns), previous %d", kernel, p.End, before, after, p.End-before, p.End-after, slack, last)
		assert.GreaterOrEqual(t, p.End, last, "kernel stamp %v: end %d, clock [%d, %d] (end %+d, %+d ns; calibration slack %d ns), previous %d", kernel, p.End, before, after, p.End-before, p.End-after, slack, last)
		last = p.End
	}
}

// TestCalibratedClock forces, on POCL, the clock of a device whose
// profiling timer runs on no host clock and that has no host timer
// (NVIDIA's OpenCL): Now maps CLOCK_MONOTONIC through a fitted line
// without a command per reading, agrees with the END of timestamp commands
// to within its calibration's bracket, never goes backwards from any
// goroutine, recalibrates in the background once the line is old, and
// Close stops that cleanly.
func TestCalibratedClock(t *testing.T) {
	base := clDevices(t)[0]
	before := cl.Live()
	func() {
		d := pretend(t, base, hooks{noHostClock: true}, 0)
		require.False(t, d.hclockOK, "pretend device reads host clock %v, timer %v", d.hclockOK, d.timer)
		require.False(t, d.timer, "pretend device reads host clock %v, timer %v", d.hclockOK, d.timer)
		cal := d.clock.cal.Load()
		require.NotNil(t, cal, "calibrations after init: %d (line %+v), want 1", d.clock.n.Load(), cal)
		require.EqualValues(t, 1, d.clock.n.Load(), "calibrations after init: %d (line %+v), want 1", d.clock.n.Load(), cal)
		t.Logf("calibration: bracket %d ns, rate %g", cal.width, cal.rate)
		events := cl.Live().Events
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var prev int64
				for i := 0; i < 10000; i++ {
					v, err := d.Now()
					if !assert.NoError(t, err, "Now = %d, %v after %d", v, err, prev) || !assert.GreaterOrEqual(t, v, prev, "Now = %d, %v after %d", v, err, prev) {
						return
					}
					prev = v
				}
			}()
		}
		wg.Wait()
		assert.LessOrEqual(t, d.clock.n.Load(), int64(2), "calibrations for 40000 readings within ~1 period")
		got := cl.Live().Events
		assert.Equal(t, events, got, "live events %d after Now calls, %d before: a reading enqueued a command", got, events)
		half := cal.width/2 + 1000
		for i := 0; i < 5; i++ {
			t0, _ := d.Now()
			end, _, err := d.stampEnd(cl.CLOCK_MONOTONIC)
			t1, _ := d.Now()
			require.NoError(t, err)
			assert.GreaterOrEqual(t, end, t0-half, "stamp end %d outside Now readings [%d, %d] widened by %d ns (%+d, %+d)", end, t0, t1, half, end-t0, end-t1)
			assert.LessOrEqual(t, end, t1+half, "stamp end %d outside Now readings [%d, %d] widened by %d ns (%+d, %+d)", end, t0, t1, half, end-t0, end-t1)
		}
		// An old line is refitted in the background on the next reading.
		n := d.clock.n.Load()
		time.Sleep(2 * calPeriod * time.Nanosecond)
		d.Now()
		deadline := time.Now().Add(10 * time.Second)
		for d.clock.n.Load() == n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		assert.NotEqual(t, n, d.clock.n.Load(), "no calibration after the line got old")
		// Close while a calibration may be running.
		time.Sleep(2 * calPeriod * time.Nanosecond)
		d.Now()
		require.NoError(t, d.Close())
		_, err := d.Now()
		assert.Equal(t, device.CodeInvalidDevice, device.CodeOf(err), "Now after Close: %v, want invalid device", err)
		for d.clock.running.Load() {
			time.Sleep(time.Millisecond)
		}
	}()
	after := cl.Live()
	assert.Equal(t, before, after, "live OpenCL objects %+v after the pretend device closed, %+v before", after, before)
}
