//go:build cgo

package opencl

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// hostClockTries is how many stamps must each fall inside their host
// clock bracket for probeHostClock to accept a host clock.
const hostClockTries = 5

// hostClocks are the host clocks probeHostClock tries, in order: POCL's
// CPU devices stamp with CLOCK_MONOTONIC_RAW; NVIDIA's GPU timer is said
// to follow CLOCK_REALTIME (nanoseconds since 1970), checked the same way.
var hostClocks = []int{cl.CLOCK_MONOTONIC_RAW, cl.CLOCK_MONOTONIC, cl.CLOCK_REALTIME}

// probeHostClock returns the host clock (one of hostClocks) that the
// device's profiling timer runs on, and whether there is one. Reading it
// directly makes Now exact and cheap, where a timestamp command lands
// anywhere in a 20-70 us window (on POCL) and skews the runtime's
// host/device fit by several microseconds. A clock is accepted when the
// END of each of hostClockTries timestamp commands on the idle internal
// queue lies between readings of it taken before the enqueue and after the
// wait: a foreign clock cannot do that.
func (d *clDevice) probeHostClock() (int, bool) {
	if d.hooks.noHostClock {
		return 0, false
	}
	for _, id := range hostClocks {
		ok := true
		for i := 0; i < hostClockTries && ok; i++ {
			h0 := cl.HostClock(id)
			end, h1, err := d.stampEnd(id)
			ok = err == nil && h0 > 0 && h0 <= end && end <= h1
		}
		if ok {
			return id, true
		}
	}
	return 0, false
}

// stampEnd enqueues a timestamp command on the idle internal queue, waits
// for it and returns its CL_PROFILING_COMMAND_END and a reading of host
// clock id taken after the wait.
func (d *clDevice) stampEnd(id int) (end, after int64, err error) {
	ev, err := d.stamp(d.ioq)
	if err != nil {
		return 0, 0, err
	}
	err = cl.WaitForEvents(ev)
	var e uint64
	if err == nil {
		e, err = cl.GetEventProfilingInfo(ev, cl.PROFILING_COMMAND_END)
	}
	after = cl.HostClock(id)
	cl.ReleaseEvent(ev)
	return int64(e), after, err
}

// Calibration of the device clock against the host's, for devices whose
// profiling timer runs on no host clock and that have no
// clGetDeviceAndHostTimer (NVIDIA's OpenCL: host timer resolution 0).
// Reading the device clock there takes a timestamp command and a wait, tens
// of microseconds, and reports a time anywhere in that window. Instead Now
// maps CLOCK_MONOTONIC through a line fitted to timestamp commands: each
// calibration takes calTries of them on the idle internal queue, bracketed
// by host readings, and keeps the one with the narrowest bracket, pairing
// its END with the bracket's middle (off by at most half the bracket). The
// newest pair is the line's anchor; its slope is the device nanoseconds per
// host nanosecond between the first pair and the newest once they are
// calSpan apart (1 before, and whenever the measured slope is implausible).
// Now starts a calibration in the background when the anchor is older than
// calPeriod, so a caller never waits for one after the first.
const (
	calTries  = 5
	calPeriod = 500_000_000   // ns between calibrations while Now is used
	calSpan   = 2_000_000_000 // ns between pairs before the slope is measured
	maxSkew   = 1e-3          // largest believable |slope-1|
)

// calib is one fitted line: device = dev + rate*(host - host0).
type calib struct {
	host, dev int64   // the anchor: CLOCK_MONOTONIC, device END
	width     int64   // the anchor's bracket, ns
	rate      float64 // device ns per host ns
	host1     int64   // the first pair, for the slope
	dev1      int64
}

// clock is the calibration state of a device.
type clock struct {
	cal     atomic.Pointer[calib]
	running atomic.Bool // a background calibration is under way
	n       atomic.Int64

	mu     sync.Mutex // the idle queue's users after init, against Close
	closed bool
}

// calibrate takes one calibration and installs it. It holds clock.mu, so
// Close (which takes it before releasing the idle queue) waits for it.
func (d *clDevice) calibrate() error {
	c := &d.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return d.errorf("now", device.CodeInvalidDevice, "device is closed")
	}
	best := calib{width: -1}
	for i := 0; i < calTries; i++ {
		h0 := cl.HostClock(cl.CLOCK_MONOTONIC)
		end, h1, err := d.stampEnd(cl.CLOCK_MONOTONIC)
		if err != nil {
			return d.wrap("now: calibrating the device clock", err)
		}
		if w := h1 - h0; best.width < 0 || w < best.width {
			best = calib{host: h0 + w/2, dev: end, width: w}
		}
	}
	best.rate = 1
	best.host1, best.dev1 = best.host, best.dev
	if old := c.cal.Load(); old != nil {
		best.host1, best.dev1 = old.host1, old.dev1
		if span := best.host - old.host1; span >= calSpan {
			r := float64(best.dev-old.dev1) / float64(span)
			if r > 1-maxSkew && r < 1+maxSkew {
				best.rate = r
			}
		}
	}
	c.cal.Store(&best)
	c.n.Add(1)
	return nil
}

// calibrated returns the device time now on the fitted line, starting a
// background calibration when the anchor is old.
func (d *clDevice) calibrated() int64 {
	c := d.clock.cal.Load()
	h := cl.HostClock(cl.CLOCK_MONOTONIC)
	dt := h - c.host
	if dt > calPeriod && d.clock.running.CompareAndSwap(false, true) {
		go func() {
			defer d.clock.running.Store(false)
			d.calibrate() // on failure the old line stays; the next Now tries again
		}()
	}
	if c.rate == 1 {
		return c.dev + dt
	}
	return c.dev + int64(float64(dt)*c.rate)
}

// closeClock stops calibrations before the idle queue is released.
func (d *clDevice) closeClock() {
	d.clock.mu.Lock()
	d.clock.closed = true
	d.clock.mu.Unlock()
}

// Now reads the device clock in nanoseconds: the clock of the device's
// event profiling counters (CL_PROFILING_COMMAND_*), on which Event.Time
// and the Profiler's timings report too; on a device whose counters are
// unusable, the host's CLOCK_MONOTONIC (hosttimes.go). Where the counters run on a host
// clock (probeHostClock: POCL's CPU devices) it reads that clock;
// otherwise clGetDeviceAndHostTimer where the platform has it (whose
// device timer is the profiling timer); else CLOCK_MONOTONIC through the
// line fitted to timestamp commands (calibrate), within half the
// narrowest bracket of a calibration of the device's clock. Readings never
// go backwards. Safe for concurrent use.
func (d *clDevice) Now() (int64, error) {
	if err := d.init(); err != nil {
		return 0, err
	}
	var t int64
	switch {
	case d.hostTimes:
		t = hostNow()
	case d.hclockOK:
		t = cl.HostClock(d.hclock)
	case d.timer:
		v, _, err := cl.GetDeviceAndHostTimer(d.dev)
		if err != nil {
			return 0, d.wrap("now", err)
		}
		t = int64(v)
	default:
		t = d.calibrated()
	}
	for {
		last := d.last.Load()
		if t <= last {
			return last, nil
		}
		if d.last.CompareAndSwap(last, t) {
			return t, nil
		}
	}
}

// clockNames names the host clocks of hostClocks.
var clockNames = map[int]string{cl.CLOCK_MONOTONIC_RAW: "CLOCK_MONOTONIC_RAW", cl.CLOCK_MONOTONIC: "CLOCK_MONOTONIC", cl.CLOCK_REALTIME: "CLOCK_REALTIME"}

// timeSource says where the device's times come from (Info.TimeSource);
// the device is open.
func (d *clDevice) timeSource() string {
	switch {
	case d.hostTimes:
		return "host CLOCK_MONOTONIC readings that bracket each operation: " + d.timesWhy
	case d.hclockOK:
		return "the event profiling timer, which runs on the host's " + clockNames[d.hclock]
	case d.timer:
		return "the event profiling timer, read through clGetDeviceAndHostTimer"
	}
	return "the event profiling timer, read as CLOCK_MONOTONIC through a line fitted to timestamp commands"
}

// Describe opens the device if it is not open yet and returns its Info
// with where its times come from (device.Describer) and whether its
// kernels' own work-group and local memory figures are trusted
// (probeGroups, probeLocal), and what the loop limit and sign-extension
// probes found (loops.go, sext.go).
func (d *clDevice) Describe() (device.Info, error) {
	if err := d.init(); err != nil {
		return device.Info{}, err
	}
	info := d.Info()
	info.TimeSource, info.BracketTimes = d.timeSource(), d.hostTimes
	info.Extra = append(slices.Clone(info.Extra),
		device.Attr{Key: "kernel_work_group_size", Value: d.groupsTrust().why},
		device.Attr{Key: "kernel_local_mem_size", Value: d.localsTrust().why},
		device.Attr{Key: "loop_limit", Value: d.loopsWhy()},
		device.Attr{Key: "sext_compare", Value: d.sextWhy()})
	return info, nil
}
