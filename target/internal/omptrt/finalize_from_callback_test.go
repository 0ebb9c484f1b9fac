package omptrt

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/internal/testkit/watchdog"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFinalizeToolFromACallbackOthersWaitOn: a tool calls
// ompt_finalize_tool from a data-op callback of construct A while A
// holds what construct B, begun on another goroutine, waits for (the
// runtime holds a device's present table around a map's data ops, and
// B maps on the same device). The finalize cannot wait for B to end, as
// B waits for A: it returns, and the tool's finalizer runs once B has
// ended, after every callback of the tool, and B's events after the
// finalize reach the tool no more. Before, the finalize waited for B
// and the program hung.
func TestFinalizeToolFromACallbackOthersWaitOn(t *testing.T) {
	reset(t, nil)
	var (
		table    sync.Mutex // the device's present table, as target holds it
		inA      = make(chan struct{})
		bBegun   = make(chan struct{})
		returned atomic.Bool // ompt_finalize_tool has returned
		early    atomic.Bool // the finalizer ran before it had
		lookup   ompt.LookupFunc
		mu       sync.Mutex
		events   []string
		finished atomic.Bool
		quit     sync.Once
	)
	note := func(ev string) {
		mu.Lock()
		defer mu.Unlock()
		if finished.Load() {
			ev = "AFTER FINALIZE: " + ev
		}
		events = append(events, ev)
	}
	ompt.RegisterTool("quitter", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{
			Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
				lookup = l
				set := l("ompt_set_callback").(ompt.SetCallbackFunc)
				set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _, _, _ *ompt.Data, code uintptr) {
					note(epName(ep) + " target " + codeName(code))
				}))
				set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, _, _ *ompt.Data, _ *uint64, _ ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, code uintptr) {
					note(epName(ep) + " data_op " + codeName(code))
					if code == 0xa && ep == ompt.ScopeBegin {
						close(inA)
						<-bBegun // B is in progress, and about to wait for the table
						time.Sleep(20 * time.Millisecond)
						quit.Do(func() {
							stop := watchdog.Start(10*time.Second, "ompt_finalize_tool from A's callback is still waiting after 10 s")
							lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
							stop()
							returned.Store(true)
						})
					}
				}))
				return 1
			},
			Finalize: func(*ompt.Data) {
				early.Store(!returned.Load())
				note("finalize")
				finished.Store(true)
			},
		}
	})
	Start(fakeRuntime{1})
	var wg sync.WaitGroup
	wg.Go(func() { // A
		table.Lock()
		a := TargetBegin(ompt.KindTarget, 0, 0xa)
		a.DataOpBegin(ompt.DataOpAlloc, 0x1000, ompt.InitialDevice, 0, 0, 64)
		a.DataOpEnd(0xd000)
		table.Unlock()
		a.End()
	})
	wg.Go(func() { // B
		<-inA
		b := TargetBegin(ompt.KindTarget, 0, 0xb)
		close(bBegun)
		table.Lock() // until A's callback has returned
		b.DataOpBegin(ompt.DataOpAlloc, 0x2000, ompt.InitialDevice, 0, 0, 64)
		b.DataOpEnd(0xe000)
		table.Unlock()
		b.End()
	})
	require.True(t, finishes(t, 15*time.Second, "constructs A and B", wg.Wait), "the constructs hang")
	require.True(t, finishes(t, 5*time.Second, "Finalize", Finalize))
	mu.Lock()
	defer mu.Unlock()
	assert.True(t, returned.Load(), "ompt_finalize_tool returned")
	assert.False(t, early.Load(), "the finalizer ran before ompt_finalize_tool returned, so before B had ended")
	assert.Equal(t, "finalize", events[len(events)-1], "the last event: the finalizer (all: %q)", events)
	for _, ev := range events {
		assert.NotContains(t, ev, "AFTER FINALIZE", "events: %q", events)
	}
	assert.Contains(t, events, "begin target b", "B's begin came before the finalize")
	assert.NotContains(t, events, "begin data_op b", "B's data op came after the finalize: %q", events)
	assert.NotContains(t, events, "end target b", "B's end came after the finalize: %q", events)
}

func epName(ep ompt.Endpoint) string {
	if ep == ompt.ScopeBegin {
		return "begin"
	}
	return "end"
}

func codeName(code uintptr) string {
	switch code {
	case 0xa:
		return "a"
	case 0xb:
		return "b"
	}
	return "?"
}
