// Package finalizetest runs the runtime under a tool that calls
// ompt_finalize_tool from a data-op callback while a construct on another
// goroutine maps on the same device: its own test binary, since a tool
// attaches once per process.
package finalizetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/internal/testkit/watchdog"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	lookup   ompt.LookupFunc
	quit     sync.Once
	inA      = make(chan struct{})
	returned atomic.Bool // ompt_finalize_tool returned
	early    atomic.Bool // the finalizer ran before it had
	final    atomic.Bool // the finalizer ran
	after    atomic.Int32
	ran      atomic.Bool
)

func init() {
	ompt.RegisterTool("quitter", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{
			Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
				lookup = l
				set := l("ompt_set_callback").(ompt.SetCallbackFunc)
				set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, _, _ *ompt.Data, _ *uint64, _ ompt.DataOpKind, _ uintptr, _ int, _ uintptr, dev int, _ uint64, _ uintptr) {
					if final.Load() {
						after.Add(1)
					}
					if ep != ompt.ScopeBegin || dev == target.InitialDeviceNum() {
						return
					}
					quit.Do(func() {
						close(inA)
						// construct B begins meanwhile and waits for the
						// device's present table, which this construct holds
						time.Sleep(100 * time.Millisecond)
						stop := watchdog.Start(10*time.Second, "ompt_finalize_tool from a data-op callback is still waiting after 10 s")
						lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
						stop()
						returned.Store(true)
					})
				}))
				return 1
			},
			Finalize: func(*ompt.Data) {
				early.Store(!returned.Load())
				final.Store(true)
			},
		}
	})
}

// TestFinalizeToolFromADataOpWhileAnotherConstructMaps: the finalize
// returns, the finalizer runs once the other construct has ended, after
// ompt_finalize_tool returned, and no callback follows it. Before, the
// finalize waited for the other construct, which waited for the table:
// the program hung.
func TestFinalizeToolFromADataOpWhileAnotherConstructMaps(t *testing.T) {
	if ran.Swap(true) {
		t.Skip("the runtime ended with the first run (Shutdown): one run per process")
	}
	if target.NumDevices() == 0 {
		t.Skip("no offload device")
	}
	a, b := make([]float64, 1000), make([]float64, 1000)
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, target.EnterData(0, target.To(a)), "A's enter data") })
	wg.Go(func() {
		<-inA
		assert.NoError(t, target.EnterData(0, target.To(b)), "B's enter data")
	})
	wg.Wait()
	require.NoError(t, target.ExitData(0, target.Release(a), target.Release(b)))
	require.NoError(t, target.Shutdown())
	assert.True(t, returned.Load(), "ompt_finalize_tool returned")
	assert.True(t, final.Load(), "the finalizer ran")
	assert.False(t, early.Load(), "the finalizer ran before ompt_finalize_tool returned, so before B had ended")
	assert.Zero(t, after.Load(), "callbacks after the finalizer")
}
