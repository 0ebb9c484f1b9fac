package omptrt

import (
	"runtime"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withHeldBound puts the held-thread bound in force (held.go: as once
// the tools have seen heldLimit threads) until the test ends.
func withHeldBound(t *testing.T) {
	require.Zero(t, len(heldTokens), "tokens taken before the test")
	limitHolds.Store(true)
	t.Cleanup(func() { limitHolds.Store(false) })
}

// TestHeldThreadTokenComesBackAfterGoexit: a construct or device memory
// routine that took a held-thread token and whose goroutine a callback
// ends with runtime.Goexit gives the token back: in thread_begin and
// implicit_task begin (dispatched while the construct takes its thread),
// and in target begin. Every token lost made the bound one smaller for
// good; with heldLimit lost, every construct waited forever. (The token
// was set on the scope after its thread was held, so the first two
// lost it.)
func TestHeldThreadTokenComesBackAfterGoexit(t *testing.T) {
	for _, c := range []struct {
		name    string
		ev      ompt.Callback
		routine bool
	}{
		{"thread_begin of a construct", ompt.CallbackThreadBegin, false},
		{"implicit_task begin of a construct", ompt.CallbackImplicitTask, false},
		{"thread_begin of a device memory routine", ompt.CallbackThreadBegin, true},
		{"target begin", ompt.CallbackTargetEMI, false},
	} {
		reset(t, nil)
		ompt.RegisterTool("exiter", func(int, string) *ompt.StartResult {
			return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
				set := l("ompt_set_callback").(ompt.SetCallbackFunc)
				exit := func() { runtime.Goexit() }
				switch c.ev {
				case ompt.CallbackThreadBegin:
					set(c.ev, ompt.ThreadBeginCallback(func(int, *ompt.Data) { exit() }))
				case ompt.CallbackImplicitTask:
					set(c.ev, ompt.ImplicitTaskCallback(func(ompt.Endpoint, *ompt.Data, *ompt.Data, uint32, uint32, int) { exit() }))
				case ompt.CallbackTargetEMI:
					set(c.ev, ompt.TargetEMICallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, *ompt.Data, *ompt.Data, uintptr) { exit() }))
				}
				// the routine needs a callback of its own to be listened to
				set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ompt.Endpoint, *ompt.Data, *ompt.Data, *uint64, ompt.DataOpKind, uintptr, int, uintptr, int, uint64, uintptr) {
				}))
				return 1
			}}
		})
		Start(fakeRuntime{1})
		withHeldBound(t)
		ended := make(chan bool)
		go func() {
			finished := false
			defer func() { ended <- finished }()
			var s *Target
			if c.routine {
				s = RoutineBegin(0x10)
			} else {
				s = TargetBegin(ompt.KindTarget, 0, 0x10)
			}
			s.End()
			finished = true
		}()
		require.False(t, <-ended, "%s: the goroutine went on after the Goexit", c.name)
		assert.Zero(t, len(heldTokens), "%s: tokens still taken after the goroutine ended", c.name)
		limitHolds.Store(false)
	}
}
