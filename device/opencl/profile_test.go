package opencl_test

import (
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func must(t testing.TB, what string, err error) {
	t.Helper()
	require.NoError(t, err, "%s", what)
}

// profiler returns q as a device.Profiler, failing the test if it is not.
func profiler(t *testing.T, q device.Queue) device.Profiler {
	t.Helper()
	p, ok := q.(device.Profiler)
	require.True(t, ok, "OpenCL queue %T does not implement device.Profiler", q)
	return p
}

// TestProfile times a copy in, a launch, a copy on the device and a copy
// out with profiling on: each timing lies within clock readings taken
// before the first enqueue and after the Sync, in queue order, with the
// four OpenCL counters in order as its native record, and the launch's
// work-groups as Teams. Each operation holds one cl_event until its timing
// is read or the queue syncs; with profiling off no event is made.
//
// On a device whose driver gives no usable times (rusticl; POCL pretending
// so), the timings are host readings that bracket each operation: begins
// and ends each in queue order, the native record's counters the begin
// (queued, submit, start) and the end.
func TestProfile(t *testing.T) {
	var devs []device.Device
	for _, d := range devices(t) {
		devs = append(devs, d, opencl.PretendNoTimes(t, d))
	}
	for _, d := range devs {
		desc, err := d.(device.Describer).Describe()
		must(t, "Describe", err)
		t.Run(desc.Name+map[bool]string{true: " (bracketing times)"}[desc.BracketTimes], func(t *testing.T) {
			f, err := d.Load(iotaKernel) // cached program and kernel: counted in base
			must(t, "Load", err)
			const n = 1 << 12
			shape := device.Shape{Size: [3]int{n}, Threads: 64}
			global, local, err := opencl.LaunchGeometry(f, shape)
			must(t, "LaunchGeometry", err)
			wantGroups := global[0] / local[0]
			trimCache(t, d)
			base := cl.Live()

			q, err := d.NewQueue()
			must(t, "NewQueue", err)
			p := profiler(t, q)
			a, err := d.Alloc(4 * n)
			must(t, "Alloc", err)
			b, err := d.Alloc(4 * n)
			must(t, "Alloc", err)
			assert.Nil(t, p.Last(), "Last before any operation")

			p.Profile(true)
			got := make([]byte, 4*n)
			var tms []device.Timing
			before, err := d.Now()
			must(t, "Now", err)
			must(t, "CopyIn", q.CopyIn(a.Ptr, make([]byte, 4*n)))
			tms = append(tms, p.Last())
			must(t, "Launch", q.Launch(f, shape, []device.Arg{{Bits: n}, {Ptr: a.Ptr}}))
			tms = append(tms, p.Last())
			must(t, "Copy", q.Copy(b.Ptr, a.Ptr, 4*n))
			tms = append(tms, p.Last())
			must(t, "CopyOut", q.CopyOut(got, b.Ptr))
			tms = append(tms, p.Last())
			assert.EqualValues(t, 4, cl.Live().Events-base.Events, "live events with 4 profiled operations pending, want 4")
			for i := 1; i < len(tms); i++ {
				require.NotNil(t, tms[i], "Last after operation %d = %v, the same as before it (%v)", i, tms[i], tms[i-1])
				require.NotSame(t, tms[i-1], tms[i], "Last after operation %d = %v, the same as before it (%v)", i, tms[i], tms[i-1])
			}
			must(t, "Sync", q.Sync())
			after, err := d.Now()
			must(t, "Now", err)
			checkIota(t, got, 0)
			assert.Zero(t, cl.Live().Events-base.Events, "live events after Sync, want 0: Sync reads and releases the timings")

			types := []string{"opencl write", "opencl kernel", "opencl copy", "opencl read"}
			var prevEnd, prevBegin int64
			var hwid uint64
			for i, tm := range tms {
				begin, end, nat, err := tm.Times()
				must(t, types[i]+" Times", err)
				assert.Positive(t, begin, "%s: [%d, %d], want 0 < begin <= end within the clock readings [%d, %d]", types[i], begin, end, before, after)
				assert.GreaterOrEqual(t, end, begin, "%s: [%d, %d], want 0 < begin <= end within the clock readings [%d, %d]", types[i], begin, end, before, after)
				assert.GreaterOrEqual(t, begin, before, "%s: [%d, %d], want 0 < begin <= end within the clock readings [%d, %d]", types[i], begin, end, before, after)
				assert.LessOrEqual(t, end, after, "%s: [%d, %d], want 0 < begin <= end within the clock readings [%d, %d]", types[i], begin, end, before, after)
				if desc.BracketTimes {
					assert.GreaterOrEqual(t, begin, prevBegin, "%s begins at %d, before the previous operation began at %d (in-order queue, bracketing times)", types[i], begin, prevBegin)
					assert.GreaterOrEqual(t, end, prevEnd, "%s ends at %d, before the previous operation ended at %d (in-order queue, bracketing times)", types[i], end, prevEnd)
				} else {
					assert.GreaterOrEqual(t, begin, prevEnd, "%s begins at %d, before the previous operation ended at %d (in-order queue)", types[i], begin, prevEnd)
				}
				prevEnd, prevBegin = end, begin
				w, ok := device.RecordOf[opencl.Record](nat)
				if msg := fmt.Sprintf("%s: native %+v, want NativeOpenCL with queued <= submit <= start = %d <= end = %d", types[i], nat, begin, end); assert.True(t, ok, msg) {
					assert.NotZero(t, w.Queued, msg)
					assert.LessOrEqual(t, w.Queued, w.Submit, msg)
					assert.LessOrEqual(t, w.Submit, w.Start, msg)
					assert.LessOrEqual(t, w.Start, w.End, msg)
					assert.Equal(t, begin, int64(w.Start), msg)
					assert.Equal(t, end, int64(w.End), msg)
				}
				assert.Equal(t, types[i], nat.Type, "native type %q", nat.Type)
				if i == 0 {
					hwid = nat.HWID
				}
				assert.NotZero(t, nat.HWID, "%s: HWID %d, want the queue's non-zero number %d", types[i], nat.HWID, hwid)
				assert.Equal(t, hwid, nat.HWID, "%s: HWID %d, want the queue's non-zero number %d", types[i], nat.HWID, hwid)
				wantTeams := 0
				if types[i] == "opencl kernel" {
					wantTeams = wantGroups
				}
				assert.Equal(t, wantTeams, nat.Teams, "%s: Teams %d", types[i], nat.Teams)
				b2, e2, nat2, err := tm.Times()
				assert.NoError(t, err, "%s: second Times = %d, %d, %+v, %v; want the first's", types[i], b2, e2, nat2, err)
				assert.Equal(t, begin, b2, "%s: second Times = %d, %d, %+v, %v; want the first's", types[i], b2, e2, nat2, err)
				assert.Equal(t, end, e2, "%s: second Times = %d, %d, %+v, %v; want the first's", types[i], b2, e2, nat2, err)
				assert.Equal(t, nat, nat2, "%s: second Times = %d, %d, %+v, %v; want the first's", types[i], b2, e2, nat2, err)
			}

			// Read before the queue syncs: Times waits and releases the event.
			must(t, "CopyIn", q.CopyIn(a.Ptr, got))
			tm := p.Last()
			_, _, _, err = tm.Times()
			require.NoError(t, err)
			assert.Zero(t, cl.Live().Events-base.Events, "live events after Times, want 0")

			// Off: no event, and Last keeps the last profiled operation.
			p.Profile(false)
			must(t, "CopyIn", q.CopyIn(a.Ptr, got))
			must(t, "Launch", q.Launch(f, shape, []device.Arg{{Bits: n}, {Ptr: a.Ptr}}))
			assert.Zero(t, cl.Live().Events-base.Events, "live events after operations with profiling off, want 0")
			assert.Same(t, tm, p.Last(), "Last with profiling off changed")

			// Timings never read are released with the queue, and can
			// still be read after it.
			p.Profile(true)
			var left []device.Timing
			for range 10 {
				must(t, "CopyIn", q.CopyIn(a.Ptr, got))
				left = append(left, p.Last())
			}
			q2, err := d.NewQueue()
			must(t, "NewQueue", err)
			p2 := profiler(t, q2)
			p2.Profile(true)
			must(t, "CopyIn", q2.CopyIn(b.Ptr, got))
			_, _, nat2, err := p2.Last().Times()
			must(t, "Times", err)
			assert.NotEqual(t, hwid, nat2.HWID, "second queue's HWID %d, first's %d: want distinct non-zero queue numbers", nat2.HWID, hwid)
			assert.NotZero(t, nat2.HWID, "second queue's HWID %d, first's %d: want distinct non-zero queue numbers", nat2.HWID, hwid)
			must(t, "Release", q2.Release())
			must(t, "Release", q.Release())
			for i, tm := range left {
				if b, e, _, err := tm.Times(); assert.NoError(t, err, "timing %d read after the queue's release: %d, %d", i, b, e) && assert.Positive(t, b, "timing %d read after the queue's release: %d, %d, %v", i, b, e, err) {
					assert.GreaterOrEqual(t, e, b, "timing %d read after the queue's release: %d, %d, %v", i, b, e, err)
				}
			}
			must(t, "Free", d.Free(a.Ptr))
			must(t, "Free", d.Free(b.Ptr))
			trimCache(t, d)
			now := cl.Live()
			assert.Equal(t, base, now, "live OpenCL objects %+v after the work, %+v before", now, base)
		})
	}
}

// TestProfileOffAllocates checks that with profiling off (after it was on)
// a copy and a launch allocate nothing for timing: profiling off costs a
// branch.
func TestProfileOffAllocates(t *testing.T) {
	d := devices(t)[0]
	f, err := d.Load(iotaKernel)
	must(t, "Load", err)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	defer q.Release()
	buf, err := d.Alloc(4 << 10)
	must(t, "Alloc", err)
	defer d.Free(buf.Ptr)
	p := profiler(t, q)
	p.Profile(true)
	must(t, "Launch", q.Launch(f, device.Shape{Size: [3]int{1 << 10}}, []device.Arg{{Bits: 1 << 10}, {Ptr: buf.Ptr}}))
	p.Profile(false)
	must(t, "Sync", q.Sync())
	args := []device.Arg{{Bits: 1 << 10}, {Ptr: buf.Ptr}}
	allocs := testing.AllocsPerRun(100, func() {
		require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{1 << 10}}, args))
	})
	must(t, "Sync", q.Sync())
	assert.Zero(t, allocs, "Launch with profiling off allocates %v times per call, want 0", allocs)
}

// trimCache releases the freed buffers d keeps for reuse (generic's
// cache), which are not a leak, before a test counts the live OpenCL
// objects.
func trimCache(t *testing.T, d device.Device) {
	t.Helper()
	tr, ok := d.(interface{ Trim() (int64, error) })
	require.True(t, ok, "%T has no Trim", d)
	_, err := tr.Trim()
	require.NoError(t, err, "Trim")
}
