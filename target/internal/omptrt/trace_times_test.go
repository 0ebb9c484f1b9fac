package omptrt

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptClock is a tick clock that first reads the values queued in next.
type scriptClock struct {
	tickDevice
	mu   sync.Mutex
	next []int64
}

func (d *scriptClock) Now() (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.next) > 0 {
		v := d.next[0]
		d.next = d.next[1:]
		return v, nil
	}
	return d.tickDevice.Now()
}

func (d *scriptClock) queue(v ...int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next = append(d.next, v...)
}

func withScriptTrace(t *testing.T) (*traceTool, *scriptClock) {
	t.Helper()
	reset(t, nil)
	tt := &traceTool{r: &recorder{plain: true}}
	tt.install(t, 1)
	clk := &scriptClock{}
	clk.t.Store(1e9)
	require.NoError(t, DeviceInitialize(0, "script", clk))
	return tt, clk
}

// TestSyncOpTimes: a synchronous operation's record takes the clock's
// readings around it, even the smallest valid ones (1 ns); a reading of
// 0 (no usable time) loses the record; an operation begun while the
// device did not trace (TraceNow 0) is neither recorded nor lost.
func TestSyncOpTimes(t *testing.T) {
	tt, clk := withScriptTrace(t)
	c := TargetBegin(ompt.KindTarget, 0, 0x42)
	_, lost0 := TraceStats(0)

	c.DataOpBegin(ompt.DataOpAlloc, 0x1000, ompt.InitialDevice, 0, 0, 64)
	clk.queue(1, 1)
	b := c.TraceNow()
	require.Equal(t, int64(1), b, "TraceNow with the clock at 1")
	c.DataOpEnd(0xd000)
	c.TraceDone(b)

	c.DataOpBegin(ompt.DataOpAlloc, 0x2000, ompt.InitialDevice, 0, 0, 64)
	clk.queue(0)
	b = c.TraceNow()
	assert.Equal(t, int64(-1), b, "TraceNow with the clock at 0: want -1 (no usable time)")
	c.DataOpEnd(0xd100)
	c.TraceDone(b)
	_, lost := TraceStats(0)
	assert.Equal(t, uint64(1), lost-lost0, "records lost: the operation timed at device time 0")

	c.DataOpBegin(ompt.DataOpAlloc, 0x3000, ompt.InitialDevice, 0, 0, 64)
	c.DataOpEnd(0xd200)
	c.TraceDone(0) // begun while not tracing
	_, lost = TraceStats(0)
	assert.Equal(t, uint64(1), lost-lost0, "records lost after an operation the device did not trace at its begin")
	c.End()

	require.Equal(t, 1, tt.flush(0), "flush")
	lines, _ := tt.got()
	require.Len(t, lines, 3, "records: the target begin, the 1 ns alloc, the target end:\n%s", strings.Join(lines, "\n"))
	assert.Contains(t, lines[1], "ompt_target_data_alloc src=0x1000/1 dest=0xd000/0")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.Len(t, tt.raw, 3)
	assert.Equal(t, uint64(1), tt.raw[1].Time, "alloc record's begin time")
	assert.Equal(t, uint64(1), tt.raw[1].DataOp().EndTime, "alloc record's end time")
}

// TestLaunchRecordsWithoutGrantedTeams: a launch timed by the clock
// around it or by queue events carries no granted team count (0): only a
// queue's timing knows it.
func TestLaunchRecordsWithoutGrantedTeams(t *testing.T) {
	tt, _ := withScriptTrace(t)
	c := TargetBegin(ompt.KindTarget, 0, 0x42)
	c.SubmitBegin(4)
	b := c.TraceNow()
	c.SubmitEnd()
	c.TraceDone(b)
	c.SubmitBegin(8)
	c.SubmitEnd()
	c.TraceBracketed(&fakeEvent{t: 5e9}, &fakeEvent{t: 6e9}, nil)
	c.FlushTrace()
	c.End()
	require.Equal(t, 1, tt.flush(0), "flush")
	lines, _ := tt.got()
	var kernels []string
	for _, l := range lines {
		if strings.Contains(l, "rec kernel") {
			kernels = append(kernels, l[strings.Index(l, "requested"):])
		}
	}
	assert.Equal(t, []string{"requested=4 granted=0", "requested=8 granted=0"}, kernels, "kernel records:\n%s", strings.Join(lines, "\n"))
}

// TestReadyTimingWaitsBehindPending: an operation whose queue timing is
// ready at once is still written after the operations issued before it
// that wait for their times: records come in issue order.
func TestReadyTimingWaitsBehindPending(t *testing.T) {
	tt, _ := withScriptTrace(t)
	c := TargetBegin(ompt.KindTarget, 0, 0x42)
	c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 64)
	c.DataOpEnd(0xd000)
	c.TraceTimed(&fakeTiming{begin: 5e9, end: 6e9}, ompt.NativeDataMotionExplicit, nil)
	c.DataOpBegin(ompt.DataOpTransferToDevice, 0x2000, ompt.InitialDevice, 0xd100, 0, 64)
	c.DataOpEnd(0xd100)
	c.TraceTimed(&fakeTiming{begin: 7e9, end: 8e9, ready: true}, ompt.NativeDataMotionExplicit, nil)
	// and with nothing pending, a ready timing is written at once: not
	// pending
	c.FlushTrace()
	c.DataOpBegin(ompt.DataOpTransferToDevice, 0x3000, ompt.InitialDevice, 0xd200, 0, 64)
	c.DataOpEnd(0xd200)
	c.TraceTimed(&fakeTiming{begin: 9e9, end: 10e9, ready: true}, ompt.NativeDataMotionExplicit, nil)
	assert.False(t, c.TracePending(), "a ready timing with nothing pending waits for FlushTrace")
	c.End()
	require.Equal(t, 1, tt.flush(0), "flush")
	lines, _ := tt.got()
	var srcs []string
	for _, l := range lines {
		if i := strings.Index(l, "src="); i >= 0 {
			srcs = append(srcs, l[i:i+len("src=0x1000")])
		}
	}
	assert.Equal(t, []string{"src=0x1000", "src=0x2000", "src=0x3000"}, srcs, "data op records in issue order:\n%s", strings.Join(lines, "\n"))
}

// TestConstructEndClockBackwards: a construct whose device clock reads
// earlier at its end than at its begin gets an end record at the begin's
// time, never before it.
func TestConstructEndClockBackwards(t *testing.T) {
	tt, clk := withScriptTrace(t)
	clk.queue(5e9, 3e9) // begin, end
	c := TargetBegin(ompt.KindTarget, 0, 0x42)
	c.End()
	require.Equal(t, 1, tt.flush(0), "flush")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.Len(t, tt.raw, 2, "target begin and end records")
	assert.Equal(t, uint64(5e9), tt.raw[0].Time, "begin record's time")
	assert.Equal(t, uint64(5e9), tt.raw[1].Time, "end record's time: want the begin's, not the earlier reading")
}

// TestKernelTypeNames: a launch's native type names its kernel, one name
// per plugin type and kernel, for the first maxKernelTypes of them;
// later kernels keep the plugin's type alone, and every name stays what
// it was first.
func TestKernelTypeNames(t *testing.T) {
	kernelTypes.mu.Lock()
	saved := kernelTypes.m
	kernelTypes.m = nil
	kernelTypes.mu.Unlock()
	t.Cleanup(func() {
		kernelTypes.mu.Lock()
		kernelTypes.m = saved
		kernelTypes.mu.Unlock()
	})
	ks := make([]*device.Kernel, maxKernelTypes+2)
	for i := range ks {
		ks[i] = &device.Kernel{Name: fmt.Sprintf("k%d", i)}
		want := "host kernel: " + ks[i].Name
		if i >= maxKernelTypes {
			want = "host kernel"
		}
		assert.Equal(t, want, kernelTypeName("host kernel", ks[i]), "kernel %d's first type name", i)
	}
	for _, i := range []int{0, maxKernelTypes - 1, maxKernelTypes} {
		want := "host kernel: " + ks[i].Name
		if i >= maxKernelTypes {
			want = "host kernel"
		}
		assert.Equal(t, want, kernelTypeName("host kernel", ks[i]), "kernel %d's type name again", i)
	}
}
