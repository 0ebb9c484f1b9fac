package omptrt

import (
	"runtime"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Go tool's callback that calls runtime.Goexit (t.FailNow in a test's
// tool does) ends the goroutine inside its construct, which no recover
// stops. The tool is detached, named on stderr; constructs on other
// goroutines go on for the other tools; and finalization returns rather
// than waiting for the end of the abandoned construct. Before, Finalize
// (and so target.Shutdown) waited forever.
func TestCallbackGoexitDetachesAndFinalizeReturns(t *testing.T) {
	for _, where := range []ompt.Endpoint{ompt.ScopeBegin, ompt.ScopeEnd} {
		warn := reset(t, nil)
		var watched []ompt.Endpoint
		ompt.RegisterTool("exiter", func(int, string) *ompt.StartResult {
			return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
				set := l("ompt_set_callback").(ompt.SetCallbackFunc)
				set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _, _, _ *ompt.Data, _ uintptr) {
					if ep == where {
						runtime.Goexit()
					}
				}))
				return 1
			}}
		})
		ompt.RegisterTool("watcher", func(int, string) *ompt.StartResult {
			return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
				set := l("ompt_set_callback").(ompt.SetCallbackFunc)
				set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _, _, _ *ompt.Data, _ uintptr) {
					watched = append(watched, ep)
				}))
				return 1
			}}
		})
		Start(fakeRuntime{1})
		require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
		ended := make(chan bool)
		go func() {
			finished := false
			defer func() { ended <- finished }()
			c := TargetBegin(ompt.KindTarget, 0, 0x10)
			c.End()
			finished = true
		}()
		require.False(t, <-ended, "endpoint %v: the construct's goroutine went on after the Goexit", where)
		assert.Contains(t, warn.String(), `OMPT tool "exiter": a callback called runtime.Goexit`, "endpoint %v: stderr", where)

		c := TargetBegin(ompt.KindTarget, 0, 0x20)
		c.End()
		n := len(watched)
		assert.Equal(t, []ompt.Endpoint{ompt.ScopeBegin, ompt.ScopeEnd}, watched[n-2:], "endpoint %v: the other tool sees the next construct", where)

		done := make(chan struct{})
		go func() { Finalize(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("endpoint %v: Finalize waits for the construct whose goroutine ended inside it", where)
		}
	}
}
