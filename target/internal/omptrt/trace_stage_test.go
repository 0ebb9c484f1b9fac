package omptrt

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zeroClock is a tick clock that reads 0 once when zero is set (a device
// clock at its epoch).
type zeroClock struct {
	tickDevice
	zero atomic.Bool
}

func (d *zeroClock) Now() (int64, error) {
	if d.zero.Swap(false) {
		return 0, nil
	}
	return d.tickDevice.Now()
}

// TestConstructBeginAtDeviceTimeZero: a construct whose begin the device
// clock times at 0 (no usable time) gets neither target record (no begin
// without its end, no record with time 0); both count as lost, and its
// operations are recorded as usual.
func TestConstructBeginAtDeviceTimeZero(t *testing.T) {
	reset(t, nil)
	tt := &traceTool{}
	tt.install(t, 1)
	clk := &zeroClock{}
	clk.t.Store(1e9)
	require.NoError(t, DeviceInitialize(0, "zero", clk))
	clk.zero.Store(true)
	tracedRegion(0, 1, &clk.tickDevice, false)
	require.Equal(t, 1, tt.flush(0), "flush")
	lines, _ := tt.got()
	assert.Len(t, lines, 5, "records: want the 5 operations' only:\n%s", strings.Join(lines, "\n"))
	for _, l := range lines {
		assert.NotContains(t, l, "rec target ", "a target record of a construct begun at device time 0")
	}
	_, lost := TraceStats(0)
	assert.Equal(t, uint64(2), lost, "records lost: the construct's begin and end")
}

// TestTargetRecordsTurnedOffMidConstruct: a tool that turns target
// records off while a construct runs gets no target record after that:
// not the construct's end.
func TestTargetRecordsTurnedOffMidConstruct(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	set := tt.entry(0, "ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)
	c := TargetBegin(ompt.KindTarget, 0, 0x5)
	require.Equal(t, ompt.SetAlways, set(tt.handle(0), false, ompt.CallbackTarget), "set_trace_ompt(target, off)")
	c.SubmitBegin(1)
	b, e := clks[0].interval()
	c.SubmitEnd()
	o := c.Op()
	o.Record(b, e, 1, nil)
	c.End()
	require.Equal(t, 1, tt.flush(0), "flush")
	lines, _ := tt.got()
	if assert.Len(t, lines, 2, "records:\n%s", strings.Join(lines, "\n")) {
		assert.Contains(t, lines[0], "rec target ompt_target begin", "the first record (made while target records were on)")
		assert.Contains(t, lines[1], "rec kernel", "the second record")
	}
}

// TestConstructStageFullAtItsEnd: a construct whose operations (five
// copies, each with the largest native record) nearly fill the records
// it holds back until its end still delivers every record, the end
// record last.
func TestConstructStageFullAtItsEnd(t *testing.T) {
	tt := &traceTool{native: ompt.NativeDataMotionExplicit}
	clks := withTrace(t, tt, 1)
	c := TargetBegin(ompt.KindTarget, 0, 0x6)
	for i := range 5 {
		c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 64)
		b, e := clks[0].interval()
		c.DataOpEnd(0xd000)
		o := c.Op()
		o.Record(b, e, 0, &NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent, Type: "copy", HWID: uint64(i + 1),
			Start: uint64(b), End: uint64(e), Data: make([]byte, ompt.NativeMax)})
	}
	c.End()
	require.Equal(t, 1, tt.flush(0), "flush")
	lines, _ := tt.got()
	require.Len(t, lines, 12, "records: begin, 5 copies with their native records, end")
	assert.Contains(t, lines[0], "rec target ompt_target begin", "the first record")
	for i := range 5 {
		assert.Contains(t, lines[1+2*i], "rec data_op", "record %d", 1+2*i)
		assert.Contains(t, lines[2+2*i], "native", "record %d", 2+2*i)
		assert.Contains(t, lines[2+2*i], "hwid="+string(rune('1'+i)), "record %d", 2+2*i)
	}
	assert.Contains(t, lines[11], "rec target ompt_target end", "the last record")
}

// TestRecordMissingOrReversedTimes: an operation recorded with no start
// time is written at its end time; one whose end is before its start
// ends at its start (Record's documented repairs), not at the clock's now.
func TestRecordMissingOrReversedTimes(t *testing.T) {
	tt := &traceTool{}
	withTrace(t, tt, 1)
	c := TargetBegin(ompt.KindTarget, 0, 0x7)
	c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
	c.DataOpEnd(0xd000)
	o := c.Op()
	o.Record(0, 5e9, 0, nil)
	c.DataOpBegin(ompt.DataOpTransferFromDevice, 0xd000, 0, 0x1000, ompt.InitialDevice, 8)
	c.DataOpEnd(0x1000)
	o = c.Op()
	o.Record(6e9, 5.5e9, 0, nil)
	c.End()
	require.Equal(t, 1, tt.flush(0), "flush")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.Len(t, tt.raw, 4, "records")
	for i, want := range []uint64{5e9, 6e9} {
		r := tt.raw[1+i]
		require.NotNil(t, r.DataOp(), "record %d: a data op", 1+i)
		assert.Equal(t, want, r.Time, "record %d: time", 1+i)
		assert.Equal(t, want, r.DataOp().EndTime, "record %d: end_time", 1+i)
	}
}

// TestEndFlushesAPendingOperation: a construct that ends with one traced
// operation still waiting for its times (the runtime did not call
// FlushTrace) still gets that operation's record, with the queue's times,
// before its end record.
func TestEndFlushesAPendingOperation(t *testing.T) {
	tt := &traceTool{}
	withTrace(t, tt, 1)
	c := TargetBegin(ompt.KindTarget, 0, 0x8)
	c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
	c.DataOpEnd(0xd000)
	c.TraceTimed(&fakeTiming{begin: 2e9, end: 3e9}, 0, nil) // not ready: it waits
	require.True(t, c.TracePending(), "setup: the operation waits for its times")
	c.End()
	require.Equal(t, 1, tt.flush(0), "flush")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.Len(t, tt.raw, 3, "records: begin, the copy, end")
	if assert.NotNil(t, tt.raw[1].DataOp(), "the second record") {
		assert.Equal(t, uint64(2e9), tt.raw[1].Time, "the copy's time")
		assert.Equal(t, uint64(3e9), tt.raw[1].DataOp().EndTime, "the copy's end_time")
	}
}
