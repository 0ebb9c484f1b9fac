package omptrt

import (
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceNoBufferAskedOncePerBatch: a tool that has no buffer to give
// is asked once for a batch of queued records (a construct's seven), not
// once per record; the records count as lost.
func TestTraceNoBufferAskedOncePerBatch(t *testing.T) {
	var calls atomic.Int32
	tt := &traceTool{request: func(int) []byte { calls.Add(1); return nil }}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	require.Equal(t, 1, tt.flush(0), "flush")
	assert.Equal(t, int32(1), calls.Load(), "buffer_request calls for one construct's records")
	_, lost := TraceStats(0)
	assert.Equal(t, uint64(7), lost, "records lost")
}

// TestTraceQueueFullLosesWholeRecords: while the delivery goroutine is
// stuck in a buffer callback, the record queue holds at most ringMax
// words (4 MiB; here made smaller); the records of later constructs that find no room are
// lost, whole records and counted (a construct may lose its later
// records only), and the queued ones are delivered once the callback
// returns.
func TestTraceQueueFullLosesWholeRecords(t *testing.T) {
	oldCap, oldMax := ringCap, ringMax
	ringCap, ringMax = 1024, 65*63+30 // a small queue (the same rules, fewer constructs to fill it), full after 65 constructs and 3 records of the next
	t.Cleanup(func() { ringCap, ringMax = oldCap, oldMax })
	var armed atomic.Bool
	tt, entered, release := gatedTraceTool(ompt.RecordOMPTSize, &armed)
	clks := withTrace(t, tt, 1)
	armed.Store(true)
	tracedRegion(0, 1, clks[0], false) // its second record fills the first buffer: the worker waits in buffer_complete
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		close(release)
		require.Fail(t, "the first construct's records were not delivered")
	}
	const perRegion = 63 // words: 2 target, 4 data op and 1 kernel entries
	fit := ringMax / perRegion
	const extra = 10
	for range fit + extra {
		tracedRegion(0, 2, clks[0], false)
	}
	_, lost := TraceStats(0)
	wantLost := uint64(4 + 7*(extra-1)) // the 66th construct's last 4, then every record
	assert.Equal(t, wantLost, lost, "records lost while the queue was full")
	close(release)
	require.Equal(t, 1, tt.stop(0), "stop")
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(7*(fit+1)+3), written, "records written")
	assert.Equal(t, wantLost, lost, "records lost")
}

// TestNativeRecordOfFewBytes: a native record whose data is shorter than
// a word reaches the tool with its bytes, zero-padded.
func TestNativeRecordOfFewBytes(t *testing.T) {
	var data [][]byte
	tt := &traceTool{native: ompt.NativeDataMotionExplicit}
	tt.complete = func(dev int, b []byte, bytes, begin uint64) {
		l := tt.l[dev]
		advance := l("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
		typ := l("ompt_get_record_type").(ompt.GetRecordTypeFunc)
		getNative := l("ompt_get_record_native").(ompt.GetRecordNativeFunc)
		for cur, ok := begin, bytes > 0; ok; cur, ok = advance(tt.h[dev], b, bytes, cur) {
			if typ(b, cur) == ompt.RecordKindNative {
				p, _ := getNative(b, cur)
				data = append(data, append([]byte(nil), unsafe.Slice((*byte)(p), 8)...))
			}
		}
	}
	clks := withTrace(t, tt, 1)
	c := TargetBegin(ompt.KindTarget, 0, 0x9)
	for _, s := range []string{"abcde", "xyz12345", "q"} {
		c.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
		b, e := clks[0].interval()
		c.DataOpEnd(0xd000)
		o := c.Op()
		o.Record(b, e, 0, &NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent, Type: "copy", Start: uint64(b), End: uint64(e), Data: []byte(s)})
	}
	c.End()
	require.Equal(t, 1, tt.stop(0), "stop")
	assert.Equal(t, [][]byte{[]byte("abcde\x00\x00\x00"), []byte("xyz12345"), []byte("q\x00\x00\x00\x00\x00\x00\x00")}, data, "native records' data")
}

// TestTracingOfUntracedDevices: Tracing answers false, without failing,
// for a device that does not trace beside one that does, for a device
// number past every traced one, and for a negative one.
func TestTracingOfUntracedDevices(t *testing.T) {
	tt := &traceTool{noStart: true}
	withTrace(t, tt, 2)
	require.Equal(t, 1, tt.start(0), "start device 0")
	assert.True(t, Tracing(0), "Tracing(0)")
	for _, dev := range []int{1, 2, 100, -1} {
		assert.NotPanics(t, func() { assert.False(t, Tracing(dev), "Tracing(%d)", dev) }, "Tracing(%d)", dev)
	}
}
