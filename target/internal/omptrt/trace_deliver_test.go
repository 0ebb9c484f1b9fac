package omptrt

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceBufferOfExactlyThreeRecords: a buffer with room for exactly
// three records (no byte more) is filled with three before it goes back
// to the tool: 7 records come as parts of 3, 3 and 1.
func TestTraceBufferOfExactlyThreeRecords(t *testing.T) {
	tt := &traceTool{size: 3 * ompt.RecordOMPTSize}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	require.Equal(t, 1, tt.stop(0), "stop")
	lines, parts := tt.got()
	assert.Len(t, lines, 7, "records delivered")
	var ns []int
	for _, p := range parts {
		ns = append(ns, p.n)
		assert.True(t, p.owned, "part %+v: owned (full, or the stop's last)", p)
	}
	assert.Equal(t, []int{3, 3, 1}, ns, "records per buffer")
}

// TestTraceTooSmallBufferThenALargerOne: a buffer too small for a record
// goes back to the tool (that is not a failure of the tool's callback):
// the session goes on, the next buffer receives the next construct's
// records, and nothing is written to stderr.
func TestTraceTooSmallBufferThenALargerOne(t *testing.T) {
	warn := reset(t, nil)
	var calls atomic.Int32
	tt := &traceTool{request: func(int) []byte {
		if calls.Add(1) == 1 {
			return make([]byte, 64)
		}
		return make([]byte, 1<<16)
	}}
	tt.install(t, 1)
	clk := newTick(0)
	require.NoError(t, DeviceInitialize(0, "tick", clk))
	tracedRegion(0, 1, clk, false)
	require.Equal(t, 1, tt.flush(0), "flush after the small buffer")
	assert.True(t, Tracing(0), "the session ended after a too small buffer")
	tracedRegion(0, 2, clk, false)
	require.Equal(t, 1, tt.stop(0), "stop")
	lines, parts := tt.got()
	if assert.Len(t, lines, 7, "records delivered: want the second construct's") {
		assert.Contains(t, lines[0], "code=0x2", "the first record delivered")
	}
	if assert.NotEmpty(t, parts, "parts") {
		assert.Zero(t, parts[0].bytes, "the small buffer's bytes")
		assert.True(t, parts[0].owned, "the small buffer's owned")
	}
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(7), written, "records written")
	assert.Equal(t, uint64(7), lost, "records lost: the first construct's")
	assert.Empty(t, warn.String(), "stderr")
}

// TestTraceRequestPanicLosesTheBatch: a buffer_request callback that
// panics ends the session; the records it would have received count as
// lost, and the OMP_TOOL_VERBOSE_INIT log says how many.
func TestTraceRequestPanicLosesTheBatch(t *testing.T) {
	log := t.TempDir() + "/v.log"
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": log})
	tt := &traceTool{request: func(int) []byte { panic("no buffers today") }}
	tt.install(t, 1)
	clk := newTick(0)
	require.NoError(t, DeviceInitialize(0, "tick", clk))
	tracedRegion(0, 1, clk, false)
	tt.flush(0)
	assert.False(t, Tracing(0), "still tracing after buffer_request panicked")
	written, lost := TraceStats(0)
	assert.Zero(t, written, "records written")
	assert.Equal(t, uint64(7), lost, "records lost")
	Finalize()
	b, _ := os.ReadFile(log)
	assert.Contains(t, string(b), "Device 0: 7 trace records lost", "verbose log")
	assert.Contains(t, string(b), "buffer_request callback panicked: no buffers today", "verbose log")
}

// TestTraceRecordsQueuedDuringACallback: records queued while the
// delivery goroutine is inside a buffer callback (in the middle of a
// batch) are delivered once each, after the batch, in order: each
// construct's seven records, none twice, none missing.
func TestTraceRecordsQueuedDuringACallback(t *testing.T) {
	var armed atomic.Bool
	tt, entered, release := gatedTraceTool(3*ompt.RecordOMPTSize, &armed)
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	require.Equal(t, 1, tt.flush(0), "flush")
	armed.Store(true)
	tracedRegion(0, 2, clks[0], false) // its third record fills the buffer
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		close(release)
		require.Fail(t, "the second construct's records were not delivered")
	}
	tracedRegion(0, 3, clks[0], false) // queued while the worker is in buffer_complete
	close(release)
	require.Equal(t, 1, tt.stop(0), "stop")
	lines, _ := tt.got()
	require.Len(t, lines, 21, "records delivered")
	seen := map[string]bool{}
	for i, l := range lines {
		assert.False(t, seen[l], "record %d delivered twice: %s", i, l)
		seen[l] = true
		if strings.Contains(l, "code=") {
			assert.True(t, strings.HasSuffix(l, fmt.Sprintf("code=%#x", i/7+1)), "record %d is not construct %d's: %s", i, i/7+1, l)
		}
	}
}

// TestTraceUntimedRecordsLogged: the OMP_TOOL_VERBOSE_INIT log names the
// records lost because the device could not tell their times, and says
// nothing of the kind for a session that lost none.
func TestTraceUntimedRecordsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("clock fails %v", fail), func(t *testing.T) {
			log := t.TempDir() + "/v.log"
			reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": log})
			tt := &traceTool{}
			tt.install(t, 1)
			clk := &flakyClock{}
			clk.t.Store(1e9)
			require.NoError(t, DeviceInitialize(0, "flaky", clk))
			if fail {
				clk.fail.Store(1) // the construct's begin cannot be timed
			}
			tracedRegion(0, 1, &clk.tickDevice, false)
			require.Equal(t, 1, tt.stop(0), "stop")
			Finalize()
			b, _ := os.ReadFile(log)
			if fail {
				assert.Contains(t, string(b), "Device 0: 2 trace records lost: the device could not tell the operation's times", "verbose log")
			} else {
				assert.NotContains(t, string(b), "could not tell", "verbose log of a session that lost no record")
				assert.NotContains(t, string(b), "records lost", "verbose log of a session that lost no record")
			}
		})
	}
}

// TestTraceRuntimeForgetsHandedBackBuffers: once a buffer went back to
// the tool (owned) the runtime keeps no hold on it: after the session the
// runtime knows no buffer, and a tool may walk a kept buffer with any
// device's entry points.
func TestTraceRuntimeForgetsHandedBackBuffers(t *testing.T) {
	var kept [][]byte
	var bytes []uint64
	tt := &traceTool{size: 3 * ompt.RecordOMPTSize}
	tt.complete = func(dev int, b []byte, n, _ uint64) {
		if dev == 0 && n > 0 {
			kept, bytes = append(kept, b), append(bytes, n)
		}
	}
	clks := withTrace(t, tt, 2)
	tracedRegion(0, 1, clks[0], false)
	require.Equal(t, 1, tt.stop(0), "stop device 0")
	require.Equal(t, 1, tt.stop(1), "stop device 1")
	require.NotEmpty(t, kept, "buffers")
	for i, b := range kept {
		_, _, held := lookupLive(b)
		assert.False(t, held, "kept buffer %d: the runtime still holds it after the session ended", i)
	}
	advance := tt.entry(1, "ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	h1 := tt.handle(1)
	for i, b := range kept {
		recs := 1
		for cur, ok := uint64(0), true; ok; recs++ {
			cur, ok = advance(h1, b, bytes[i], cur)
			if !ok {
				break
			}
		}
		assert.Equal(t, int(bytes[i])/ompt.RecordOMPTSize, recs, "kept buffer %d walked with device 1's advance_buffer_cursor: records", i)
	}
}

// TestTraceRecordsOverwriteADirtyBuffer: the tracing goroutine decodes
// each OMPT record in the tool's buffer itself, so every byte of a
// record, padding and the unused tail of its body included, must be
// written: a buffer the tool filled with 0xa5 reads back with those bytes
// zero, as the records the runtime wrote through a zeroed copy did.
func TestTraceRecordsOverwriteADirtyBuffer(t *testing.T) {
	type span struct{ from, to int } // bytes of a record that must be zero
	zero := map[int32][]span{
		int32(ompt.CallbackTarget):       {{4, 8}, {32 + 12, 32 + 16}, {32 + 40, 104}},
		int32(ompt.CallbackTargetDataOp): {{4, 8}, {32 + 12, 32 + 16}, {32 + 28, 32 + 32}, {32 + 44, 32 + 48}},
		int32(ompt.CallbackTargetSubmit): {{4, 8}, {32 + 24, 104}},
	}
	var (
		mu     sync.Mutex
		seen   = map[int32]int{}
		dirty  []string
		misfit []string
	)
	tt := &traceTool{
		request: func(int) []byte { return bytes.Repeat([]byte{0xa5}, 16*ompt.RecordOMPTSize) },
		complete: func(_ int, b []byte, n, begin uint64) {
			mu.Lock()
			defer mu.Unlock()
			if (n-begin)%uint64(ompt.RecordOMPTSize) != 0 {
				misfit = append(misfit, fmt.Sprintf("part [%d, %d)", begin, n))
				return
			}
			for off := begin; off < n; off += uint64(ompt.RecordOMPTSize) {
				rec := b[off : off+uint64(ompt.RecordOMPTSize)]
				typ := (*ompt.RecordOMPT)(unsafe.Pointer(&rec[0])).Type
				seen[typ]++
				for _, s := range zero[typ] {
					if !bytes.Equal(rec[s.from:s.to], make([]byte, s.to-s.from)) {
						dirty = append(dirty, fmt.Sprintf("record type %d at %d: bytes [%d, %d) = % x", typ, off, s.from, s.to, rec[s.from:s.to]))
					}
				}
			}
		},
	}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 0x42, clks[0], false)
	require.Equal(t, 1, tt.flush(0), "flush")
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, misfit, "parts of whole records")
	assert.Empty(t, dirty, "bytes left from the tool's fill")
	for typ := range zero {
		assert.Positive(t, seen[typ], "records of type %d", typ)
	}
}
