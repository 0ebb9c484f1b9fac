package omptrt

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/gompt/gompt/device"
	hostplugin "github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flakyClock is a tick clock whose next fail reads fail.
type flakyClock struct {
	tickDevice
	fail atomic.Int32
}

var errClock = errors.New("flaky: clock read failed")

func (d *flakyClock) Now() (int64, error) {
	if d.fail.Add(-1) >= 0 {
		return 0, errClock
	}
	d.fail.Store(0)
	return d.tickDevice.Now()
}

// fakeTiming is a queue's timing of one operation (device.Timing,
// device.ReadyTiming).
type fakeTiming struct {
	begin, end int64
	native     device.Native
	err        error
	ready      bool
}

func (f *fakeTiming) Times() (int64, int64, device.Native, error) {
	return f.begin, f.end, f.native, f.err
}
func (f *fakeTiming) Ready() bool { return f.ready }

// fakeEvent is a queue event (device.Event).
type fakeEvent struct {
	t   int64
	err error
}

func (e *fakeEvent) Wait() error          { return e.err }
func (e *fakeEvent) Time() (int64, error) { return e.t, e.err }

// withFlakyTrace starts a traceTool tracing every record type and the
// native records of device 0, whose clock is a flakyClock.
func withFlakyTrace(t *testing.T) (*traceTool, *flakyClock) {
	t.Helper()
	reset(t, nil)
	tt := &traceTool{r: &recorder{plain: true}, native: ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution}
	tt.install(t, 1)
	clk := &flakyClock{}
	clk.flags = ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution
	clk.t.Store(1e9)
	require.NoError(t, DeviceInitialize(0, "flaky", clk))
	return tt, clk
}

// TestTracePath: each way the runtime tells an operation's times (the
// clock around a synchronous operation, the queue's timing, queue events)
// gives one record with those times, in issue order, with the plugin's
// native record as its bytes and a launch's kernel named in its type.
func TestTracePath(t *testing.T) {
	tt, _ := withFlakyTrace(t)
	k := &device.Kernel{Name: "saxpy"}
	t0 := TargetBegin(ompt.KindTarget, 0, 0x42)
	// synchronous alloc: clock before and after
	t0.DataOpBegin(ompt.DataOpAlloc, 0x1000, ompt.InitialDevice, 0, 0, 64)
	b := t0.TraceNow()
	t0.DataOpEnd(0xd000)
	t0.TraceDone(b)
	// copy timed by the queue, not yet complete: kept until FlushTrace
	copyIn := &fakeTiming{begin: 5e9, end: 6e9,
		native: hostplugin.Record{Start: 5e9, End: 6e9, Queue: 2}.Native("host copy in", 2, 0)}
	t0.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 64)
	t0.DataOpEnd(0xd000)
	t0.TraceTimed(copyIn, ompt.NativeDataMotionExplicit, nil)
	require.True(t, t0.TracePending(), "a timing that is not ready is not pending")
	// launch timed by the queue
	launch := &fakeTiming{begin: 7e9, end: 8e9,
		native: hostplugin.Record{Start: 7e9, End: 8e9, Queue: 2}.Native("host kernel", 2, 16)}
	t0.SubmitBegin(4)
	t0.SubmitEnd()
	t0.TraceTimed(launch, ompt.NativeKernelExecution, k)
	// copy bracketed by events
	t0.DataOpBegin(ompt.DataOpTransferFromDevice, 0xd000, 0, 0x1000, ompt.InitialDevice, 64)
	t0.DataOpEnd(0x1000)
	t0.TraceBracketed(&fakeEvent{t: 9e9}, &fakeEvent{t: 10e9}, nil)
	t0.FlushTrace()
	assert.False(t, t0.TracePending(), "pending after FlushTrace")
	t0.End()
	require.Equal(t, 1, tt.flush(0), "flush")
	lines, _ := tt.got()
	diffSeq(t, lines, []string{
		"dev0 rec target ompt_target begin dev=0 target_id=#1 code=0x42",
		"dev0 rec data_op target_id=#1 host_op_id=#2 ompt_target_data_alloc src=0x1000/1 dest=0xd000/0 bytes=64 code=0x42",
		"dev0 rec data_op target_id=#1 host_op_id=#3 ompt_target_data_transfer_to_device src=0x1000/1 dest=0xd000/0 bytes=64 code=0x42",
		`dev0 native host_op_id=#3 type="host copy in" class=2 hwid=2`,
		"dev0 rec kernel target_id=#1 host_op_id=#4 requested=4 granted=16",
		`dev0 native host_op_id=#4 type="host kernel: saxpy" class=2 hwid=2`,
		"dev0 rec data_op target_id=#1 host_op_id=#5 ompt_target_data_transfer_from_device src=0xd000/0 dest=0x1000/1 bytes=64 code=0x42",
		"dev0 rec target ompt_target end dev=0 target_id=#1 code=0x42",
	})
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.Len(t, tt.raw, 6, "OMPT records")
	r := tt.raw[1].DataOp()
	assert.NotZero(t, tt.raw[1].Time, "alloc record's begin time: want the clock read before it")
	assert.Greater(t, r.EndTime, tt.raw[1].Time, "alloc record's end time: want the clock read after it")
	for i, want := range [][2]uint64{2: {5e9, 6e9}, 4: {9e9, 10e9}} {
		if want[0] == 0 {
			continue
		}
		assert.Equal(t, want[0], tt.raw[i].Time, "record %d's begin time", i)
		assert.Equal(t, want[1], tt.raw[i].DataOp().EndTime, "record %d's end time", i)
	}
	assert.Equal(t, uint64(7e9), tt.raw[3].Time, "kernel record's begin time")
	assert.Equal(t, uint64(8e9), tt.raw[3].Kernel().EndTime, "kernel record's end time")
	wantNat := []hostplugin.Record{{Start: 5e9, End: 6e9, Queue: 2}, {Start: 7e9, End: 8e9, Queue: 2}}
	assert.Equal(t, wantNat, tt.natives, "native records: want the plugin's HostRecord bytes as they were")
}

// TestTracePathTimeErrorsAreLost: an operation whose device times cannot
// be read (the clock before or after a synchronous operation, the queue's
// timing, a bracketing event or its time, the clock at a construct's
// begin) is not written with made-up times: its records count as lost,
// and the records of the operations around it are written as usual.
func TestTracePathTimeErrorsAreLost(t *testing.T) {
	tt, clk := withFlakyTrace(t)
	failed := errors.New("injected")
	good := func(c *Target) {
		c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
		c.DataOpEnd(0xd000)
		c.TraceBracketed(&fakeEvent{t: 2e9}, &fakeEvent{t: 3e9}, nil)
	}
	cases := []struct {
		name string
		lost uint64 // records lost
		op   func(c *Target)
	}{
		{"clock before a synchronous op", 1, func(c *Target) {
			c.DataOpBegin(ompt.DataOpAlloc, 0, ompt.InitialDevice, 0, 0, 8)
			clk.fail.Store(1)
			b := c.TraceNow()
			assert.Equal(t, int64(-1), b, "TraceNow with a failing clock")
			c.DataOpEnd(0xd000)
			c.TraceDone(b)
		}},
		{"clock after a synchronous op", 1, func(c *Target) {
			c.DataOpBegin(ompt.DataOpDelete, 0xd000, 0, 0, ompt.InitialDevice, 0)
			b := c.TraceNow()
			c.DataOpEnd(0)
			clk.fail.Store(1)
			c.TraceDone(b)
		}},
		{"the queue's timing", 2, func(c *Target) { // the OMPT record and the native one
			c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
			c.DataOpEnd(0xd000)
			c.TraceTimed(&fakeTiming{err: failed, ready: true}, ompt.NativeDataMotionExplicit, nil)
		}},
		{"a timing that fails at FlushTrace", 1, func(c *Target) {
			c.SubmitBegin(1)
			c.SubmitEnd()
			c.TraceTimed(&fakeTiming{err: failed}, ompt.NativeDataMotionImplicit, nil) // flag not enabled: 1 record
		}},
		{"recording a bracket", 1, func(c *Target) {
			c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
			c.DataOpEnd(0xd000)
			c.TraceBracketed(nil, nil, failed)
		}},
		{"recording a bracket whose events were made", 1, func(c *Target) {
			c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
			c.DataOpEnd(0xd000)
			c.TraceBracketed(&fakeEvent{t: 2e9}, &fakeEvent{t: 3e9}, failed)
		}},
		{"the time of the event before", 1, func(c *Target) {
			c.DataOpBegin(ompt.DataOpTransferFromDevice, 0xd000, 0, 0x1000, ompt.InitialDevice, 8)
			c.DataOpEnd(0x1000)
			c.TraceBracketed(&fakeEvent{err: failed}, &fakeEvent{t: 3e9}, nil)
		}},
		{"the time of the event after", 1, func(c *Target) {
			c.DataOpBegin(ompt.DataOpTransferFromDevice, 0xd000, 0, 0x1000, ompt.InitialDevice, 8)
			c.DataOpEnd(0x1000)
			c.TraceBracketed(&fakeEvent{t: 2e9}, &fakeEvent{err: failed}, nil)
		}},
	}
	for _, tc := range cases {
		_, lost0 := TraceStats(0)
		n0 := len(tt.raw)
		c := TargetBegin(ompt.KindTarget, 0, 0x42)
		good(c)
		tc.op(c)
		good(c)
		c.FlushTrace()
		c.End()
		require.Equal(t, 1, tt.flush(0), "%s: flush", tc.name)
		_, lost := TraceStats(0)
		assert.Equal(t, tc.lost, lost-lost0, "%s: records counted lost", tc.name)
		tt.mu.Lock()
		got := tt.raw[n0:]
		// target begin, the two good copies, target end
		assert.Len(t, got, 4, "%s: records written (the failed operation's dropped)", tc.name)
		for i := range got {
			assert.NotZero(t, got[i].Time, "%s: record %d's time", tc.name, i)
		}
		tt.mu.Unlock()
	}

	// the clock fails at a construct's begin: no begin record, so no end
	// record either; both count as lost
	_, lost0 := TraceStats(0)
	n0 := len(tt.raw)
	clk.fail.Store(1)
	c := TargetBegin(ompt.KindTarget, 0, 0x43)
	good(c)
	c.FlushTrace()
	c.End()
	tt.flush(0)
	_, lost := TraceStats(0)
	assert.Equal(t, uint64(2), lost-lost0, "clock failing at the construct's begin: records lost")
	tt.mu.Lock()
	assert.Equal(t, 1, len(tt.raw)-n0, "clock failing at the construct's begin: records written, want the copy's")
	tt.mu.Unlock()
}

// TestTracePathNotTracing: with no tracing device (or a nil Target) the
// trace calls do nothing: TraceNow is 0 and nothing is kept.
func TestTracePathNotTracing(t *testing.T) {
	var nilT *Target
	assert.Zero(t, nilT.TraceNow(), "nil Target's TraceNow")
	assert.False(t, nilT.TracePending(), "nil Target's TracePending")
	nilT.TraceDone(5)
	nilT.TraceTimed(&fakeTiming{}, 0, nil)
	nilT.TraceBracketed(nil, nil, nil)
	nilT.FlushTrace()

	reset(t, nil)
	tt := &traceTool{r: &recorder{plain: true}, noStart: true}
	tt.install(t, 1)
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	c := TargetBegin(ompt.KindTarget, 0, 1)
	c.DataOpBegin(ompt.DataOpAlloc, 0, ompt.InitialDevice, 0, 0, 8)
	assert.Zero(t, c.TraceNow(), "TraceNow on a device that does not trace")
	c.DataOpEnd(1)
	c.TraceTimed(&fakeTiming{begin: 1, end: 2}, 0, nil)
	assert.False(t, c.TracePending(), "an operation of a device that does not trace is pending")
	c.End()
	_, lost := TraceStats(0)
	assert.Zero(t, lost, "records lost on a device that does not trace")
}

// TestTracePathSyncAfterPending: a synchronous operation (clock around
// it) that ends while an earlier operation's queue timing is not ready
// waits for it: at FlushTrace both are recorded, in issue order, each
// with its own times.
func TestTracePathSyncAfterPending(t *testing.T) {
	tt, _ := withFlakyTrace(t)
	c := TargetBegin(ompt.KindTarget, 0, 0x42)
	c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 64)
	c.DataOpEnd(0xd000)
	c.TraceTimed(&fakeTiming{begin: 5e9, end: 6e9}, ompt.NativeDataMotionExplicit, nil)
	c.DataOpBegin(ompt.DataOpAlloc, 0x2000, ompt.InitialDevice, 0, 0, 32)
	b := c.TraceNow()
	c.DataOpEnd(0xe000)
	c.TraceDone(b)
	c.FlushTrace()
	c.End()
	require.Equal(t, 1, tt.flush(0), "flush")
	lines, _ := tt.got()
	diffSeq(t, lines, []string{
		"dev0 rec target ompt_target begin dev=0 target_id=#1 code=0x42",
		"dev0 rec data_op target_id=#1 host_op_id=#2 ompt_target_data_transfer_to_device src=0x1000/1 dest=0xd000/0 bytes=64 code=0x42",
		"dev0 rec data_op target_id=#1 host_op_id=#3 ompt_target_data_alloc src=0x2000/1 dest=0xe000/0 bytes=32 code=0x42",
		"dev0 rec target ompt_target end dev=0 target_id=#1 code=0x42",
	})
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if len(tt.raw) == 4 {
		assert.Equal(t, uint64(b), tt.raw[2].Time, "alloc record's begin time")
		assert.Greater(t, tt.raw[2].DataOp().EndTime, uint64(b), "alloc record's end time: want the clock read after it")
	}
}
