package omptrt

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
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
		t.Error("ompt_finalize_tool returned while a construct on another goroutine was in progress")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-ended
	<-finished
	got := a.got()
	if len(got) == 0 || got[len(got)-1] != "finalize" {
		t.Errorf("tool a's events: %q; want the construct's begin, then finalize last, after the construct ended", got)
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
	if err := DeviceInitialize(0, "tick", newTick(0)); err != nil {
		t.Fatal(err)
	}
	h, l, _ := GetDeviceInfo(0)
	var owned atomic.Int32
	req := func(int) []byte { return make([]byte, 4096) }
	done := func(_ int, _ []byte, _, _ uint64, own bool) {
		if own {
			owned.Add(1)
		}
	}
	l("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
	if l("ompt_start_trace").(ompt.StartTraceFunc)(h, req, done) != 1 {
		t.Fatal("start_trace failed")
	}
	region(ompt.KindTarget, 0, 1) // a buffer is taken
	if l("ompt_flush_trace").(ompt.FlushTraceFunc)(h) != 1 {
		t.Fatal("flush_trace failed")
	}
	a.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	if n := owned.Load(); n != 0 {
		t.Errorf("after the first of two tools finalized, the unowned session handed its buffer back (%d); want it still tracing", n)
	}
	if l("ompt_flush_trace").(ompt.FlushTraceFunc)(h) != 1 {
		t.Error("flush_trace after the first of two tools finalized: the unowned session was stopped")
	}
	b.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	if n := owned.Load(); n != 1 {
		t.Errorf("after the last tool finalized, the unowned session handed back %d buffers, want 1 (stopped)", n)
	}
	if l("ompt_stop_trace").(ompt.StopTraceFunc)(h) != 0 {
		t.Error("stop_trace after the last tool finalized = 1: the unowned session was still on")
	}
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
	if err := DeviceInitialize(0, "tick", newTick(0)); err != nil {
		t.Fatal(err)
	}
	if h == nil || l("ompt_get_device_time").(ompt.GetDeviceTimeFunc)(h) == 0 {
		t.Fatal("no device_initialize, or get_device_time 0 on a live device")
	}
	Finalize()
	if now != 0 || started != 0 {
		t.Errorf("in the tool's finalizer: get_device_time = %d, start_trace = %d; want 0 and 0 (the device is finalized first)", now, started)
	}
}

// TestFoundToolsHaveSlotsOfTheirOwn: a Go tool and two tools a Finder
// found (as ompt/cabi finds C tools) each write their own value into
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
	for _, b := range bad {
		t.Error(b)
	}
}
