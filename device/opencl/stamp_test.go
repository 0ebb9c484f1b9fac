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
		t.Logf("%s: markers have times: %v", d.info.Name, !d.kstamps)
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
