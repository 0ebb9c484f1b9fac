package omptrt

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFinalizeToolWaitsForConstructsOnOtherGoroutines: ompt_finalize_tool
// called while a construct is in progress on another goroutine (which
// may be calling the tool) returns only after that construct has ended,
// and the tool's finalizer runs after it, so no callback of the tool
// follows its finalizer.
func TestFinalizeToolWaitsForConstructsOnOtherGoroutines(t *testing.T) {
	reset(t, nil)
	var inEnd atomic.Bool
	a := &recorder{plain: true}
	a.inside = func(r *recorder, ev string) string {
		if ev == "finalize" && !inEnd.Load() {
			return " while the other goroutine's construct was in progress"
		}
		return ""
	}
	ompt.RegisterTool("a", a.start)
	Start(fakeRuntime{1})
	begun, release, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		c := TargetBegin(ompt.KindTarget, 0, 1)
		close(begun)
		<-release
		inEnd.Store(true)
		c.End()
	}()
	<-begun
	fin := a.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)
	finished := make(chan struct{})
	go func() { defer close(finished); fin() }()
	select {
	case <-finished:
		assert.Fail(t, "ompt_finalize_tool returned while a construct on another goroutine was in progress")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-ended
	<-finished
	got := a.got()
	if assert.NotEmpty(t, got, "tool a's events") {
		assert.Equal(t, "finalize", got[len(got)-1], "tool a's events: %q; want the construct's begin, then finalize last, after the construct ended", got)
	}
}

// TestUnownedTraceEndsWithTheLastTool: a trace session started through
// GetDeviceInfo's lookup (no tool owns it) goes on when one of two tools
// calls ompt_finalize_tool, and is stopped (its buffer handed back) when
// the last one does.
func TestUnownedTraceEndsWithTheLastTool(t *testing.T) {
	reset(t, nil)
	a, b := &recorder{plain: true}, &recorder{plain: true}
	ompt.RegisterTool("a", a.start)
	ompt.RegisterTool("b", b.start)
	Start(fakeRuntime{1})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	h, l, _ := GetDeviceInfo(0)
	var owned atomic.Int32
	req := func(int) []byte { return make([]byte, 4096) }
	done := func(_ int, _ []byte, _, _ uint64, own bool) {
		if own {
			owned.Add(1)
		}
	}
	l("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
	require.Equal(t, 1, l("ompt_start_trace").(ompt.StartTraceFunc)(h, req, done), "start_trace")
	region(ompt.KindTarget, 0, 1) // a buffer is taken
	require.Equal(t, 1, l("ompt_flush_trace").(ompt.FlushTraceFunc)(h), "flush_trace")
	a.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	assert.Zero(t, owned.Load(), "after the first of two tools finalized, the unowned session handed its buffer back; want it still tracing")
	assert.Equal(t, 1, l("ompt_flush_trace").(ompt.FlushTraceFunc)(h), "flush_trace after the first of two tools finalized: the unowned session was stopped")
	b.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	assert.Equal(t, int32(1), owned.Load(), "buffers the unowned session handed back after the last tool finalized (stopped)")
	assert.Zero(t, l("ompt_stop_trace").(ompt.StopTraceFunc)(h), "stop_trace after the last tool finalized: the unowned session was still on")
}

// TestDevicesFinalizedBeforeToolFinalizers: at the runtime's Finalize
// every device is finalized before the tools' finalizers run: a
// finalizer that reads a device's clock gets 0 (ompt_get_device_time on
// a finalized device), and a trace it would start is refused.
func TestDevicesFinalizedBeforeToolFinalizers(t *testing.T) {
	reset(t, nil)
	var h *ompt.DeviceHandle
	var l ompt.LookupFunc
	var now uint64 = 1
	started := -1
	ompt.RegisterTool("late-reader", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{
			Initialize: func(lk ompt.LookupFunc, _ int, _ *ompt.Data) int {
				lk("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(
					func(_ int, _ string, dh *ompt.DeviceHandle, dl ompt.LookupFunc, _ string) { h, l = dh, dl }))
				return 1
			},
			Finalize: func(*ompt.Data) {
				now = l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)(h)
				started = l("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return make([]byte, 4096) }, func(int, []byte, uint64, uint64, bool) {})
			},
		}
	})
	Start(fakeRuntime{1})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	require.NotNil(t, h, "no device_initialize")
	require.NotZero(t, l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)(h), "get_device_time on a live device")
	Finalize()
	assert.Zero(t, now, "get_device_time in the tool's finalizer (the device is finalized first)")
	assert.Zero(t, started, "start_trace in the tool's finalizer (the device is finalized first)")
}

// TestFoundToolsHaveSlotsOfTheirOwn: a Go tool and two tools a Finder
// found (as target/internal/cabi finds C tools) each write their own value into
// thread_data at thread_begin and into target_data at a construct's
// begin: each finds its own values later, none sees another's.
func TestFoundToolsHaveSlotsOfTheirOwn(t *testing.T) {
	reset(t, nil)
	var bad []string
	var mu sync.Mutex
	mk := func(name string, mine uint64) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			threadData := l("ompt_get_thread_data").(ompt.GetThreadDataFunc)
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(
				func(_ int, d *ompt.Data) { d.Value = mine }))
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetEMI, ompt.TargetEMICallback(
				func(_ ompt.TargetKind, e ompt.Endpoint, _ int, _, _, td *ompt.Data, _ uintptr) {
					mu.Lock()
					defer mu.Unlock()
					if e == ompt.ScopeBegin {
						if td.Value != 0 {
							bad = append(bad, fmt.Sprintf("%s: target_data %#x at begin, want 0", name, td.Value))
						}
						td.Value = mine
					} else if td.Value != mine {
						bad = append(bad, fmt.Sprintf("%s: target_data %#x at end, want its own %#x", name, td.Value, mine))
					}
					if d := threadData(); d == nil || d.Value != mine {
						bad = append(bad, fmt.Sprintf("%s: get_thread_data in a target callback: %+v, want its own %#x from thread_begin", name, d, mine))
					}
				}))
			return 1
		}}
	}
	ompt.RegisterTool("go", func(int, string) *ompt.StartResult { return mk("go", 0x60) })
	RegisterFinder("finder", func(int, string, func(string)) []Found {
		return []Found{{Name: "found-1", Result: mk("found-1", 0xf1)}, {Name: "found-2", Result: mk("found-2", 0xf2)}}
	})
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	region(ompt.KindTarget, 0, 2)
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, bad, "what the tools found in their slots")
}
