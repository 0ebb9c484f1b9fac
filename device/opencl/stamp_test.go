//go:build cgo

package opencl

import (
	"sync"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/cl"
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
		if err := d.init(); err != nil {
			t.Fatal(err)
		}
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
	if _, err := d.emptyKernel(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: markers have times: %v; Now reads host clock %d: %v; host timer %v", d.info.Name, !d.kstamps, d.hclock, d.hclockOK, d.timer)
	if d.hooks.kstamps && !d.kstamps {
		t.Fatal("a device whose markers were made out untimed stamps with markers")
	}
	if d.hooks.noHostClock && (d.hclockOK || d.timer) {
		t.Fatal("a device with no host clock reads one")
	}
	if d.hclockOK {
		// Now reads that clock: a command's END lies between readings.
		h0 := cl.HostClock(d.hclock)
		end, h1, err := d.stampEnd(d.hclock)
		if err != nil || end < h0 || end > h1 {
			t.Errorf("host clock %d: stamp end %d outside [%d, %d] (%v)", d.hclock, end, h0, h1, err)
		}
	}
	q, err := d.createQueue()
	if err != nil {
		t.Fatal(err)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		p, err := d.readEvent(q, ev)
		cl.ReleaseEvent(ev)
		after, _ := d.Now()
		if err != nil {
			t.Fatal(err)
		}
		if !p.ordered() {
			t.Errorf("kernel stamp %v: counters %+v, want 0 < queued <= submit <= start <= end", kernel, p)
		}
		// Where Now is the line fitted to timestamp commands (no host clock,
		// no host timer: NVIDIA), it is off by up to half its calibration's
		// bracket, which a busy machine widens: allow the whole bracket.
		var slack int64
		if c := d.clock.cal.Load(); !d.hclockOK && !d.timer && c != nil {
			slack = c.width
		}
		if p.End < before-slack || p.End > after+slack || p.End < last {
			t.Errorf("kernel stamp %v: end %d, clock [%d, %d] (end %+d, %+d ns; calibration slack %d ns), previous %d", kernel, p.End, before, after, p.End-before, p.End-after, slack, last)
		}
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
		if d.hclockOK || d.timer {
			t.Fatalf("pretend device reads host clock %v, timer %v", d.hclockOK, d.timer)
		}
		cal := d.clock.cal.Load()
		if cal == nil || d.clock.n.Load() != 1 {
			t.Fatalf("calibrations after init: %d (line %+v), want 1", d.clock.n.Load(), cal)
		}
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
					if err != nil || v < prev {
						t.Errorf("Now = %d, %v after %d", v, err, prev)
						return
					}
					prev = v
				}
			}()
		}
		wg.Wait()
		if n := d.clock.n.Load(); n > 2 {
			t.Errorf("%d calibrations for 40000 readings within ~1 period", n)
		}
		if got := cl.Live().Events; got != events {
			t.Errorf("live events %d after Now calls, %d before: a reading enqueued a command", got, events)
		}
		half := cal.width/2 + 1000
		for i := 0; i < 5; i++ {
			t0, _ := d.Now()
			end, _, err := d.stampEnd(cl.CLOCK_MONOTONIC)
			t1, _ := d.Now()
			if err != nil {
				t.Fatal(err)
			}
			if end < t0-half || end > t1+half {
				t.Errorf("stamp end %d outside Now readings [%d, %d] widened by %d ns (%+d, %+d)", end, t0, t1, half, end-t0, end-t1)
			}
		}
		// An old line is refitted in the background on the next reading.
		n := d.clock.n.Load()
		time.Sleep(2 * calPeriod * time.Nanosecond)
		d.Now()
		deadline := time.Now().Add(10 * time.Second)
		for d.clock.n.Load() == n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if d.clock.n.Load() == n {
			t.Error("no calibration after the line got old")
		}
		// Close while a calibration may be running.
		time.Sleep(2 * calPeriod * time.Nanosecond)
		d.Now()
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Now(); device.CodeOf(err) != device.CodeInvalidDevice {
			t.Errorf("Now after Close: %v, want invalid device", err)
		}
		for d.clock.running.Load() {
			time.Sleep(time.Millisecond)
		}
	}()
	if after := cl.Live(); after != before {
		t.Errorf("live OpenCL objects %+v after the pretend device closed, %+v before", after, before)
	}
}
