package omptrt

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceStopHandsBackEmptyBuffer: stop_trace after a flush gives the
// buffer back with an empty part, and says so the documented way:
// bytes 0 and begin 0.
func TestTraceStopHandsBackEmptyBuffer(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	tt := &traceTool{}
	tt.complete = func(dev int, b []byte, bytes, begin uint64) {
		mu.Lock()
		calls = append(calls, fmt.Sprintf("bytes %d begin %d", bytes, begin))
		mu.Unlock()
	}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	tt.flush(0)
	tt.stop(0)
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(calls), 2, "buffer_complete calls %q; want the flushed part, then the empty buffer handed back", calls)
	assert.Equal(t, "bytes 0 begin 0", calls[len(calls)-1], "stop after a flush: the last buffer_complete (all: %q)", calls)
}

// TestTargetInfoWhereTheOpEnds: a nowait construct's data operation may
// end on another goroutine than the one that began it (the one completing
// its queue); a tool calling ompt_get_target_info from the end callback
// gets the construct's ids there.
func TestTargetInfoWhereTheOpEnds(t *testing.T) {
	reset(t, nil)
	var lookup ompt.LookupFunc
	var bad []string
	ends := 0
	ompt.RegisterTool("info", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			lookup = l
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetDataOpEMI, func(e ompt.Endpoint, _, _ *ompt.Data, hop *uint64, _ ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
				if e != ompt.ScopeEnd {
					return
				}
				ends++
				if _, tid, ihop, ok := lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)(); !ok || tid == 0 || ihop != *hop { // collected: may run on another goroutine
					bad = append(bad, fmt.Sprintf("get_target_info at a data op's end: ok %v target_id %d host_op_id %d (op's %d)", ok, tid, ihop, *hop))
				}
			})
			return 1
		}}
	})
	Start(fakeRuntime{1})
	tg := TargetBegin(ompt.KindTargetEnterDataNowait, 0, 1)
	tg.DataOpBegin(ompt.DataOpAlloc, 0x1000, ompt.InitialDevice, 0, 0, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tg.DataOpEnd(0xd000)
		tg.End()
	}()
	<-done
	require.Equal(t, 1, ends, "data op ends seen")
	assert.Empty(t, bad, "what the tool found at the data op's end")
}

// TestFlushWithNothingNew: a flush with no record since the last one
// delivers nothing and tracing goes on: later records still arrive.
func TestFlushWithNothingNew(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	tt.flush(0)
	n, _ := tt.got()
	tt.flush(0) // nothing new
	tracedRegion(0, 1, clks[0], false)
	tt.flush(0)
	all, _ := tt.got()
	require.NotEmpty(t, n, "records after one region")
	require.Len(t, all, 2*len(n), "records after two regions with an empty flush between; want twice as many as after one")
}

// TestFlushKeepsABufferWithRoomForTheLargestEntry: a flush that leaves
// exactly ompt.MaxEntrySize bytes free in the tool's buffer hands the
// part over without giving the buffer back (owned false): the next
// records are written after the part, in the same buffer.
func TestFlushKeepsABufferWithRoomForTheLargestEntry(t *testing.T) {
	probe := &traceTool{}
	clks := withTrace(t, probe, 1)
	tracedRegion(0, 1, clks[0], false)
	probe.flush(0)
	lines, _ := probe.got()
	r := len(lines) // OMPT records of one region
	require.NotZero(t, r, "no records from a traced region")

	tt := &traceTool{size: r*ompt.RecordOMPTSize + ompt.MaxEntrySize}
	clks = withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	require.Equal(t, 1, tt.flush(0), "flush")
	tracedRegion(0, 1, clks[0], false)
	tt.flush(0)
	_, parts := tt.got()
	require.GreaterOrEqual(t, len(parts), 2, "buffer_complete calls: %+v", parts)
	first, next := parts[0], parts[1]
	assert.False(t, first.owned, "the flush's part %+v: want the buffer kept (owned false) with %d bytes free", first, ompt.MaxEntrySize)
	assert.Equal(t, r, first.n, "the flush's part %+v: records", first)
	assert.Equal(t, uint64(r*ompt.RecordOMPTSize), first.bytes, "the flush's part %+v: bytes", first)
	assert.Equal(t, first.base, next.base, "the next part %+v: want it in the same buffer", next)
	assert.Equal(t, first.bytes, next.begin, "the next part %+v: want it from the flush's cursor", next)
}
