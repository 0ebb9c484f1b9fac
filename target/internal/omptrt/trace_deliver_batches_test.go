package omptrt

import (
	"bytes"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceDeliversWithoutFlush: records reach the tool's buffers (and
// TraceStats' written) without a flush or a stop, also when more than a
// batch piled up while the tool's buffer_complete was running.
func TestTraceDeliversWithoutFlush(t *testing.T) {
	oldCap := ringCap
	ringCap = 1024 // a quarter of the ring, a batch, is four constructs' records
	t.Cleanup(func() { ringCap = oldCap })
	tt, entered, release := gatedTraceTool(2*ompt.RecordOMPTSize, nil)
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false) // its third record fills the first buffer
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		close(release)
		require.Fail(t, "the first construct's records were not delivered without a flush")
	}
	const more = 20
	for range more {
		tracedRegion(0, 2, clks[0], false) // queued while the tool holds the worker
	}
	close(release)
	const total = 7 * (1 + more)
	assert.Eventually(t, func() bool { w, _ := TraceStats(0); return w == total }, 10*time.Second, time.Millisecond,
		"records written without a flush: want %d", total)
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(total), written, "records written")
	assert.Zero(t, lost, "records lost")
	require.Equal(t, 1, tt.stop(0), "stop")
}

// TestTraceLossLoggedPerSession: the OMP_TOOL_VERBOSE_INIT log of a
// session counts that session's lost records only, and names a single
// record lost for want of a time.
func TestTraceLossLoggedPerSession(t *testing.T) {
	log := t.TempDir() + "/v.log"
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": log})
	var noBuf atomic.Bool
	noBuf.Store(true)
	tt := &traceTool{request: func(int) []byte {
		if noBuf.Load() {
			return nil
		}
		return make([]byte, 1<<16)
	}}
	tt.install(t, 1)
	clk := &flakyClock{}
	clk.t.Store(1e9)
	require.NoError(t, DeviceInitialize(0, "flaky", clk))
	clk.fail.Store(1) // the construct's begin: both target records lost
	tracedRegion(0, 1, &clk.tickDevice, false)
	require.Equal(t, 1, tt.stop(0), "stop of the first session")
	first, err := os.ReadFile(log)
	require.NoError(t, err, "verbose log")
	require.Contains(t, string(first), "Device 0: 5 trace records lost (no buffer", "the first session's log")
	require.Contains(t, string(first), "Device 0: 2 trace records lost: the device could not tell", "the first session's log")

	noBuf.Store(false)
	require.Equal(t, 1, tt.start(0), "start of the second session")
	c := TargetBegin(ompt.KindTarget, 0, 0x2)
	c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
	c.DataOpEnd(0xd000)
	o := c.Op()
	clk.fail.Store(1)
	o.Record(0, 0, 0, nil) // no times, and the clock fails: lost
	c.End()
	require.Equal(t, 1, tt.stop(0), "stop of the second session")
	all, err := os.ReadFile(log)
	require.NoError(t, err, "verbose log")
	second := string(bytes.TrimPrefix(all, first))
	assert.Contains(t, second, "Device 0: 1 trace records lost: the device could not tell", "the second session's log")
	assert.NotContains(t, second, "(no buffer", "the second session's log: it lost no record for want of a buffer")
	lines, _ := tt.got()
	assert.Len(t, lines, 2, "records of the second session: its target begin and end")
}

// TestFlushGivesBackABufferWithoutRoomForTheLargestEntry: a flush that
// leaves less than ompt.MaxEntrySize bytes free in the tool's buffer
// gives the buffer back (owned), and the next records go to a new one.
func TestFlushGivesBackABufferWithoutRoomForTheLargestEntry(t *testing.T) {
	tt := &traceTool{size: 7*ompt.RecordOMPTSize + ompt.MaxEntrySize - 8}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false) // 7 records
	require.Equal(t, 1, tt.flush(0), "flush")
	tracedRegion(0, 2, clks[0], false)
	require.Equal(t, 1, tt.stop(0), "stop")
	_, parts := tt.got()
	require.GreaterOrEqual(t, len(parts), 2, "buffer_complete calls: %+v", parts)
	first, next := parts[0], parts[1]
	assert.Equal(t, 7, first.n, "the flush's part %+v: records", first)
	assert.True(t, first.owned, "the flush's part %+v: want the buffer given back (%d bytes free)", first, ompt.MaxEntrySize-8)
	assert.NotEqual(t, first.base, next.base, "the next part %+v: want a new buffer", next)
	assert.Zero(t, next.begin, "the next part %+v: begin", next)
	assert.Equal(t, 7, next.n, "the next part %+v: records", next)
}

// TestEntryPointsOnAnEmptyBuffer: the record entry points answer "no
// record" for a nil or empty buffer, without panicking.
func TestEntryPointsOnAnEmptyBuffer(t *testing.T) {
	tt := &traceTool{}
	withTrace(t, tt, 1)
	tracedRegion(0, 1, newTick(0), false) // a session with a buffer of its own
	advance := tt.entry(0, "ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	typ := tt.entry(0, "ompt_get_record_type").(ompt.GetRecordTypeFunc)
	getOMPT := tt.entry(0, "ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)
	getNative := tt.entry(0, "ompt_get_record_native").(ompt.GetRecordNativeFunc)
	for _, b := range [][]byte{nil, {}} {
		assert.NotPanics(t, func() {
			_, ok := advance(tt.handle(0), b, 0, 0)
			assert.False(t, ok, "advance_buffer_cursor on %#v", b)
			assert.Equal(t, ompt.RecordKindInvalid, typ(b, 0), "get_record_type on %#v", b)
			assert.Nil(t, getOMPT(b, 0), "get_record_ompt on %#v", b)
			p, hop := getNative(b, 0)
			assert.Nil(t, p, "get_record_native on %#v", b)
			assert.Zero(t, hop, "get_record_native's host_op_id on %#v", b)
		}, "entry points on %#v", b)
	}
	require.Equal(t, 1, tt.stop(0), "stop")
}

// TestRecordAbstractAtTheStartOfAHeldBuffer: get_record_abstract of a
// pointer at the start of a buffer the runtime holds is NULL, even where
// the tool carved its buffers from one arena and the bytes before the
// pointer (the end of another device's buffer, or the arena's first
// bytes) look like a native header.
func TestRecordAbstractAtTheStartOfAHeldBuffer(t *testing.T) {
	const hs, size = ompt.NativeHeaderSize, 4096
	words := make([]uint64, (hs+2*size)/8)
	arena := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), hs+2*size)
	fake := func(at []byte) {
		*(*omptlink.Header)(unsafe.Pointer(&at[0])) = omptlink.Header{Marker: ompt.NativeMarker, Size: uint32(hs + 8), Class: int32(ompt.NativeRecordEvent), HWID: 99}
	}
	fake(arena)              // before device 0's buffer
	fake(arena[hs+size-hs:]) // the last bytes of device 0's buffer
	bufs := [][]byte{arena[hs : hs+size : hs+size], arena[hs+size:]}
	var given [2]atomic.Bool
	tt := &traceTool{request: func(dev int) []byte {
		if given[dev].Swap(true) {
			return nil
		}
		return bufs[dev]
	}}
	clks := withTrace(t, tt, 2)
	for dev := range 2 {
		tracedRegion(dev, 1, clks[dev], false)
		require.Equal(t, 1, tt.flush(dev), "flush device %d", dev)
	}
	_, parts := tt.got()
	require.Len(t, parts, 2, "buffer_complete calls")
	for _, p := range parts {
		require.False(t, p.owned, "part %+v: want the buffer kept", p)
	}
	abstract := tt.entry(0, "ompt_get_record_abstract").(ompt.GetRecordAbstractFunc)
	assert.Nil(t, abstract(unsafe.Pointer(&bufs[0][0])), "abstract at the start of device 0's buffer")
	for range 100 { // the runtime's buffers are a map: every order
		if !assert.Nil(t, abstract(unsafe.Pointer(&bufs[1][0])), "abstract at the start of device 1's buffer (device 0's end)") {
			break
		}
	}
	require.Equal(t, 1, tt.stop(0), "stop device 0")
	require.Equal(t, 1, tt.stop(1), "stop device 1")
	// given back, the buffers are the tool's memory: the header before
	// device 0's buffer is read like any other
	if a := abstract(unsafe.Pointer(&bufs[0][0])); assert.NotNil(t, a, "abstract after the session: the fake header") {
		assert.Equal(t, uint64(99), a.HWID, "the fake header's hwid")
	}
}

// TestTraceRingGrowsForALargeFirstBatch: a construct whose records are
// more than the ring holds at first grows it; none is lost.
func TestTraceRingGrowsForALargeFirstBatch(t *testing.T) {
	oldCap := ringCap
	ringCap = 16 // words: doubled, still less than one construct's 63
	t.Cleanup(func() { ringCap = oldCap })
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	require.Equal(t, 1, tt.stop(0), "stop")
	lines, _ := tt.got()
	assert.Len(t, lines, 7, "records delivered")
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(7), written, "records written")
	assert.Zero(t, lost, "records lost")
}

// TestRecordSmallPositiveTimes: Record's repairs apply to times <= 0
// only: an operation at device times 1 to 5000 is recorded with them.
func TestRecordSmallPositiveTimes(t *testing.T) {
	tt := &traceTool{}
	withTrace(t, tt, 1)
	c := TargetBegin(ompt.KindTarget, 0, 0x7)
	c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
	c.DataOpEnd(0xd000)
	o := c.Op()
	o.Record(1, 5000, 0, nil)
	c.End()
	require.Equal(t, 1, tt.stop(0), "stop")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.Len(t, tt.raw, 3, "records")
	r := tt.raw[1]
	require.NotNil(t, r.DataOp(), "record 1: a data op")
	assert.Equal(t, uint64(1), r.Time, "time")
	assert.Equal(t, uint64(5000), r.DataOp().EndTime, "end_time")
}

// TestNativeRecordsWithoutTheirOMPTType: a tool that enables native
// records of data motion but not target_data_op records gets the native
// records alone.
func TestNativeRecordsWithoutTheirOMPTType(t *testing.T) {
	tt := &traceTool{types: []ompt.Callback{ompt.CallbackTarget}, native: ompt.NativeDataMotionExplicit}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], true)
	require.Equal(t, 1, tt.stop(0), "stop")
	lines, _ := tt.got()
	var natives, others int
	for _, l := range lines {
		switch {
		case bytes.Contains([]byte(l), []byte(" native ")):
			natives++
		case bytes.Contains([]byte(l), []byte(" rec target ")):
		default:
			others++
		}
	}
	assert.Equal(t, 4, natives, "native records (one per data op): %q", lines)
	assert.Zero(t, others, "records of types not enabled: %q", lines)
	assert.Len(t, lines, 6, "records: 2 target, 4 native")
}

// TestRecordWhenTheClockReadsZero: an operation with no times whose
// device clock reads 0 (no error, no usable time) is not recorded at
// time 0: its OMPT and native records count as lost.
func TestRecordWhenTheClockReadsZero(t *testing.T) {
	reset(t, nil)
	tt := &traceTool{native: ompt.NativeDataMotionExplicit}
	tt.install(t, 1)
	clk := &zeroClock{}
	clk.t.Store(1e9)
	clk.flags = ompt.NativeDataMotionExplicit
	require.NoError(t, DeviceInitialize(0, "zero", clk))
	c := TargetBegin(ompt.KindTarget, 0, 0x7)
	c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
	c.DataOpEnd(0xd000)
	o := c.Op()
	clk.zero.Store(true)
	o.Record(0, 0, 0, &NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent, Type: "copy", Data: []byte("x")})
	c.End()
	require.Equal(t, 1, tt.stop(0), "stop")
	tt.mu.Lock()
	for i, r := range tt.raw {
		assert.NotZero(t, r.Time, "record %d: time", i)
		assert.Nil(t, r.DataOp(), "record %d: the untimed data op was written", i)
	}
	assert.Empty(t, tt.natives, "native records written")
	tt.mu.Unlock()
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(2), lost, "records lost: the data op's OMPT and native records")
	// a tool reads the same counts through its device handle
	h, _, ok := GetDeviceInfo(0)
	require.True(t, ok, "device 0's handle")
	hw, hl := h.TraceStats()
	assert.Equal(t, [2]uint64{written, lost}, [2]uint64{hw, hl}, "ompt.DeviceHandle.TraceStats")
	var none *ompt.DeviceHandle
	nw, nl := none.TraceStats()
	assert.Zero(t, nw+nl, "a nil handle's counts")
}

// TestNativeRecordWithoutData: a native record with no data reaches the
// tool as a valid native record (its abstract and host_op_id intact),
// and the padding after a short record's data is zero even in a buffer
// the tool filled with other bytes.
func TestNativeRecordWithoutData(t *testing.T) {
	var data [][]byte
	tt := &traceTool{native: ompt.NativeDataMotionExplicit}
	tt.request = func(int) []byte { return bytes.Repeat([]byte{0xff}, 1<<12) }
	tt.complete = func(dev int, b []byte, n, begin uint64) {
		l := tt.l[dev]
		advance := l("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
		typ := l("ompt_get_record_type").(ompt.GetRecordTypeFunc)
		getNative := l("ompt_get_record_native").(ompt.GetRecordNativeFunc)
		for cur, ok := begin, n > 0; ok; cur, ok = advance(tt.h[dev], b, n, cur) {
			if typ(b, cur) == ompt.RecordKindNative {
				p, _ := getNative(b, cur)
				data = append(data, append([]byte(nil), unsafe.Slice((*byte)(p), 8)...))
			}
		}
	}
	clks := withTrace(t, tt, 1)
	c := TargetBegin(ompt.KindTarget, 0, 0x9)
	for _, s := range []string{"", "abc"} {
		c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
		b, e := clks[0].interval()
		c.DataOpEnd(0xd000)
		o := c.Op()
		o.Record(b, e, 0, &NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent, Type: "copy", HWID: 5, Start: uint64(b), End: uint64(e), Data: []byte(s)})
	}
	c.End()
	require.Equal(t, 1, tt.stop(0), "stop")
	lines, _ := tt.got()
	assert.Len(t, lines, 6, "records: 2 target, 2 data op, 2 native: %q", lines)
	assert.Equal(t, [][]byte{make([]byte, 8), []byte("abc\x00\x00\x00\x00\x00")}, data, "native records' data")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if assert.Len(t, tt.absts, 2, "abstracts") {
		for i, a := range tt.absts {
			assert.Equal(t, uint64(5), a.HWID, "abstract %d: hwid", i)
			assert.Equal(t, "copy", a.Type, "abstract %d: type", i)
		}
	}
}

// TestTooSmallBufferCompletePanics: a buffer_complete that panics when
// handed back a buffer too small for a record stops tracing on the
// device and says so on stderr.
func TestTooSmallBufferCompletePanics(t *testing.T) {
	warn := reset(t, nil)
	tt := &traceTool{request: func(int) []byte { return make([]byte, 64) }}
	tt.complete = func(int, []byte, uint64, uint64) { panic("no thanks") }
	tt.install(t, 1)
	clk := newTick(0)
	require.NoError(t, DeviceInitialize(0, "tick", clk))
	tracedRegion(0, 1, clk, false)
	tt.flush(0)
	assert.False(t, Tracing(0), "still tracing after buffer_complete panicked")
	assert.Contains(t, warn.String(), "buffer_complete callback panicked on device 0: no thanks", "stderr")
	written, lost := TraceStats(0)
	assert.Zero(t, written, "records written")
	assert.Equal(t, uint64(7), lost, "records lost")
}

// TestTraceCompletePanicsOnAFullBuffer: once buffer_complete panicked
// on a full buffer, the runtime calls neither callback again; the rest
// of the batch counts as lost.
func TestTraceCompletePanicsOnAFullBuffer(t *testing.T) {
	warn := reset(t, nil)
	var requests, completes atomic.Int32
	tt := &traceTool{request: func(int) []byte { requests.Add(1); return make([]byte, 3*ompt.RecordOMPTSize) }}
	tt.complete = func(int, []byte, uint64, uint64) { completes.Add(1); panic("full") }
	tt.install(t, 1)
	clk := newTick(0)
	require.NoError(t, DeviceInitialize(0, "tick", clk))
	tracedRegion(0, 1, clk, false)
	tt.flush(0)
	assert.False(t, Tracing(0), "still tracing after buffer_complete panicked")
	assert.Equal(t, int32(1), requests.Load(), "buffer_request calls")
	assert.Equal(t, int32(1), completes.Load(), "buffer_complete calls")
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(3), written, "records written (into the buffer that went back)")
	assert.Equal(t, uint64(4), lost, "records lost")
	assert.Contains(t, warn.String(), "buffer_complete callback panicked on device 0: full", "stderr")
}

// TestConstructRecordsStayTogether: the records of a construct reach the
// tool together, in the order the constructs end: a construct that
// begins, records an operation and ends while another one is open comes
// whole before the other's first record.
func TestConstructRecordsStayTogether(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	opened, closeIt, closed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(closed)
		c := TargetBegin(ompt.KindTarget, 0, 0xa)
		tracedCopy(c, ompt.DataOpTransferToDevice, 0, 8, clks[0])
		close(opened)
		<-closeIt
		c.End()
	}()
	<-opened
	tracedRegion(0, 0xb, clks[0], false)
	close(closeIt)
	<-closed
	require.Equal(t, 1, tt.stop(0), "stop")
	lines, _ := tt.got()
	require.Len(t, lines, 10, "records: 7 of 0xb, 3 of 0xa")
	for i, l := range lines[:7] {
		assert.NotContains(t, l, "0xa", "record %d: want construct 0xb's seven first", i)
	}
	assert.Contains(t, lines[7], "code=0xa", "record 7: construct 0xa's begin")
}

// TestTraceDevicePast65535: a device numbered past 65535 is traced like
// any other (start_trace succeeded, so its records must come).
func TestTraceDevicePast65535(t *testing.T) {
	reset(t, nil)
	tt := &traceTool{}
	tt.install(t, 1)
	const dev = 1 << 16
	clk := newTick(0)
	require.NoError(t, DeviceInitialize(dev, "tick", clk))
	require.NotNil(t, tt.handle(dev), "device_initialize of device %d", dev)
	assert.True(t, Tracing(dev), "Tracing(%d)", dev)
	tracedRegion(dev, 1, clk, false)
	require.Equal(t, 1, tt.stop(dev), "stop")
	lines, _ := tt.got()
	assert.Len(t, lines, 7, "records of device %d", dev)
}

// TestFlushFromGoroutinesAfterASession: once a session ended, no
// goroutine is taken for its delivery goroutine: application goroutines
// started afterwards (Go reuses the ended goroutines' slots) flush the
// device's next session like any other.
func TestFlushFromGoroutinesAfterASession(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	for round := range 20 {
		tracedRegion(0, 1, clks[0], false)
		require.Equal(t, 1, tt.stop(0), "round %d: stop", round)
		time.Sleep(time.Millisecond) // the session's goroutines exit
		const n = 8
		var refused atomic.Int32
		begin, done := make(chan struct{}), make(chan struct{}, n)
		for range n {
			go func() {
				<-begin
				if tt.flush(0) != 1 {
					refused.Add(1)
				}
				done <- struct{}{}
			}()
		}
		require.Equal(t, 1, tt.start(0), "round %d: start", round)
		close(begin)
		for range n {
			<-done
		}
		require.Zero(t, refused.Load(), "round %d: flushes refused", round)
	}
	require.Equal(t, 1, tt.stop(0), "stop")
}

// TestTraceStatsCountWhatTheToolHolds: inside buffer_complete,
// TraceStats' written already counts the records of the part handed
// over, also in the middle of a batch.
func TestTraceStatsCountWhatTheToolHolds(t *testing.T) {
	var seen, short atomic.Int64
	tt := &traceTool{size: 3 * ompt.RecordOMPTSize}
	tt.complete = func(dev int, _ []byte, bytes, begin uint64) {
		seen.Add(int64(bytes-begin) / int64(ompt.RecordOMPTSize))
		if w, _ := TraceStats(dev); int64(w) < seen.Load() {
			short.Add(1)
		}
	}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false) // one batch, three buffers
	require.Equal(t, 1, tt.stop(0), "stop")
	assert.Equal(t, int64(7), seen.Load(), "records handed over")
	assert.Zero(t, short.Load(), "buffer_complete calls that saw written below the records handed over")
}

// TestAbortedSessionForgetsItsBuffer: a buffer the tool kept from a
// flush whose buffer_complete panicked is the tool's afterwards: any
// device's advance_buffer_cursor walks it.
func TestAbortedSessionForgetsItsBuffer(t *testing.T) {
	var kept []byte
	var keptBytes uint64
	tt := &traceTool{}
	tt.complete = func(dev int, b []byte, bytes, _ uint64) {
		if dev == 0 {
			kept, keptBytes = b, bytes
			panic("keeping it")
		}
	}
	clks := withTrace(t, tt, 2)
	tracedRegion(0, 1, clks[0], false)
	tt.flush(0)
	require.False(t, Tracing(0), "still tracing after buffer_complete panicked")
	require.Equal(t, uint64(7*ompt.RecordOMPTSize), keptBytes, "the flushed part's bytes")
	advance := tt.entry(1, "ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	recs := 1
	for cur, ok := uint64(0), true; ok; {
		if cur, ok = advance(tt.handle(1), kept, keptBytes, cur); ok {
			recs++
		}
	}
	assert.Equal(t, 7, recs, "records walked with device 1's advance_buffer_cursor")
}

// TestConstructWithManyOperations: a construct whose records do not fit
// its stage (20 data operations with native records) gets them all, in
// order, between its begin and end records.
func TestConstructWithManyOperations(t *testing.T) {
	tt := &traceTool{native: ompt.NativeDataMotionExplicit}
	clks := withTrace(t, tt, 1)
	const ops = 20
	c := TargetBegin(ompt.KindTarget, 0, 0x5)
	for i := range ops {
		c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, uint64(i+1))
		b, e := clks[0].interval()
		c.DataOpEnd(0xd000)
		o := c.Op()
		o.Record(b, e, 0, &NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent, Type: "copy", Start: uint64(b), End: uint64(e), Data: []byte("0123456789")})
	}
	c.End()
	require.Equal(t, 1, tt.stop(0), "stop")
	lines, _ := tt.got()
	require.Len(t, lines, 2+2*ops, "records")
	assert.Contains(t, lines[0], "begin", "the first record")
	assert.Contains(t, lines[len(lines)-1], "end", "the last record")
	for i := range ops {
		assert.Contains(t, lines[1+2*i], fmt.Sprintf("bytes=%d ", i+1), "record %d: operation %d's data op", 1+2*i, i)
		assert.Contains(t, lines[2+2*i], "native", "record %d: operation %d's native record", 2+2*i, i)
	}
}

// TestTraceRingGrowsForAFastStream: when a quarter of the ring fills
// sooner than a tick, again and again, the ring grows, so that a fast
// stream of records wakes the tracing goroutine about once a tick, not
// once per few constructs; no record is lost or reordered on the way.
func TestTraceRingGrowsForAFastStream(t *testing.T) {
	oldCap := ringCap
	ringCap = 1024 // a quarter of the ring, one wake-up, is four constructs' records
	t.Cleanup(func() { ringCap = oldCap })
	reset(t, nil)
	ompt.RegisterTool("empty", emptyTool)
	Start(fakeRuntime{1})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	h, l, _ := GetDeviceInfo(0)
	l("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
	var records, outOfOrder int
	last := uintptr(0)
	req := func(int) []byte { return make([]byte, 1<<20) }
	done := func(_ int, buf []byte, bytes, begin uint64, _ bool) {
		// the tracing goroutine's calls follow each other: no lock
		for off := begin; off+uint64(ompt.RecordOMPTSize) <= bytes; off += uint64(ompt.RecordOMPTSize) {
			r := (*ompt.RecordOMPT)(unsafe.Pointer(&buf[off]))
			records++
			if tg := r.Target(); tg != nil && ompt.Endpoint(tg.Endpoint) == ompt.ScopeBegin {
				if tg.CodePtr != last+1 {
					outOfOrder++
				}
				last = tg.CodePtr
			}
		}
	}
	require.Equal(t, 1, l("ompt_start_trace").(ompt.StartTraceFunc)(h, req, done), "start_trace")
	// bursts of 20 constructs (more than a quarter of the ring at
	// first), with pauses in which the tracing goroutine catches up
	const burst, n = 20, 1000 * 20
	start := time.Now()
	for i := range n {
		c := TargetBegin(ompt.KindTarget, 0, uintptr(i+1))
		c.SubmitBegin(1)
		c.SubmitEnd()
		o := c.Op()
		o.Record(int64(i+1)*10, int64(i+1)*10+5, 1, nil)
		c.End()
		if i%burst == burst-1 {
			for t0 := time.Now(); time.Since(t0) < 50*time.Microsecond; { // a sleep would last a millisecond or more
			}
		}
	}
	elapsed := time.Since(start)
	require.Equal(t, 1, l("ompt_stop_trace").(ompt.StopTraceFunc)(h), "stop_trace")
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(3*n), written, "records written")
	assert.Zero(t, lost, "records lost")
	assert.Equal(t, 3*n, records, "records in the buffers")
	assert.Zero(t, outOfOrder, "constructs out of order")

	devMu.Lock()
	tr := &devices[0].tr
	devMu.Unlock()
	// Without growth each burst fills a quarter of the ring and wakes
	// the tracing goroutine: a batch per burst or so (180 to 210 here,
	// in some 60 ms). With it, about one a tick after a few doublings,
	// and one for the stop (36 to 42).
	most := uint64(3*elapsed/(2*tickEvery)) + 40
	assert.LessOrEqual(t, tr.batches, most, "batches for %d constructs in %v", n, elapsed)
}
