//go:build cgo

package opencl

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// TestStamps checks both kinds of timestamp command, whichever the device
// uses for Record: each completes with an end time between clock readings
// taken before it and after it, and a later stamp is no earlier.
func TestStamps(t *testing.T) {
	p, _ := device.Lookup(Name)
	devs, err := p.Devices()
	if len(devs) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	for _, dv := range devs {
		d := dv.(*clDevice)
		if err := d.init(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.emptyKernel(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: markers have times: %v; Now reads host clock %d (0: none)", d.info.Name, !d.kstamps, d.hclock)
		if d.hclock != 0 {
			// Now reads that clock: a command's END lies between readings.
			h0 := cl.HostClock(d.hclock)
			ev, err := d.stamp(d.ioq)
			if err != nil {
				t.Fatal(err)
			}
			err = cl.WaitForEvents(ev)
			end, perr := cl.GetEventProfilingInfo(ev, cl.PROFILING_COMMAND_END)
			h1 := cl.HostClock(d.hclock)
			cl.ReleaseEvent(ev)
			if err != nil || perr != nil || int64(end) < h0 || int64(end) > h1 {
				t.Errorf("host clock %d: stamp end %d outside [%d, %d] (%v, %v)", d.hclock, end, h0, h1, err, perr)
			}
		}
		q, err := d.createQueue()
		if err != nil {
			t.Fatal(err)
		}
		var last int64
		for _, kernel := range []bool{true, false, true} {
			before, _ := d.Now()
			ev, err := d.stampWith(q, kernel)
			if err != nil {
				t.Fatal(err)
			}
			if err := cl.WaitForEvents(ev); err != nil {
				t.Fatal(err)
			}
			end, err := cl.GetEventProfilingInfo(ev, cl.PROFILING_COMMAND_END)
			cl.ReleaseEvent(ev)
			after, _ := d.Now()
			if err != nil {
				t.Fatal(err)
			}
			if int64(end) < before || int64(end) > after || int64(end) < last {
				t.Errorf("kernel stamp %v: end %d, clock [%d, %d], previous %d", kernel, end, before, after, last)
			}
			last = int64(end)
		}
		if err := cl.ReleaseCommandQueue(q); err != nil {
			t.Fatal(err)
		}
	}
}
