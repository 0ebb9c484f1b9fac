package omptrt

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFinalizeWaitsForAFinalizeToolFromABufferCallback: a tool that calls
// ompt_finalize_tool from its buffer_complete callback is finalized on
// another goroutine (the delivery goroutine cannot wait for itself);
// Finalize still returns only after that tool's finalizer has returned.
func TestFinalizeWaitsForAFinalizeToolFromABufferCallback(t *testing.T) {
	reset(t, nil)
	var lookup ompt.LookupFunc
	var flush ompt.FlushTraceFunc
	var h0 *ompt.DeviceHandle
	var finished, finalizeTool atomic.Int32
	var once sync.Once
	ompt.RegisterTool("quits", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{
			Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
				lookup = l
				l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(
					func(dev int, _ string, h *ompt.DeviceHandle, dl ompt.LookupFunc, _ string) {
						h0, flush = h, dl("ompt_flush_trace").(ompt.FlushTraceFunc)
						dl("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
						dl("ompt_start_trace").(ompt.StartTraceFunc)(h,
							func(int) []byte { return make([]byte, 1<<16) },
							func(int, []byte, uint64, uint64, bool) {
								once.Do(func() {
									finalizeTool.Add(1)
									lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
								})
							})
					}))
				return 1
			},
			Finalize: func(*ompt.Data) {
				time.Sleep(50 * time.Millisecond)
				finished.Add(1)
			},
		}
	})
	Start(fakeRuntime{1})
	clk := newTick(0)
	require.NoError(t, DeviceInitialize(0, "tick", clk))
	tracedRegion(0, 1, clk, false)
	require.Equal(t, 1, flush(h0), "flush")
	require.Equal(t, int32(1), finalizeTool.Load(), "ompt_finalize_tool calls from buffer_complete")
	Finalize()
	assert.Equal(t, int32(1), finished.Load(), "finalizer calls when Finalize returned")
}

// TestRegisterFinderTwice: registering a second tool search under a name
// already registered panics, naming it.
func TestRegisterFinderTwice(t *testing.T) {
	reset(t, nil)
	f := func(int, string, func(string)) []Found { return nil }
	RegisterFinder("search", f)
	RegisterFinder("another", f)
	assert.PanicsWithValue(t, "ompt: RegisterFinder called twice for search", func() { RegisterFinder("search", f) })
}

// TestEnumerateMutexImplsEnds: gompt has no OpenMP locks:
// ompt_enumerate_mutex_impls answers "no more" (0, "", false) at once.
func TestEnumerateMutexImplsEnds(t *testing.T) {
	r := &recorder{}
	withTool(t, r, 1)
	enum := r.lookup("ompt_enumerate_mutex_impls").(ompt.EnumerateMutexImplsFunc)
	for _, cur := range []int{0, 1} {
		impl, name, ok := enum(cur)
		assert.False(t, ok, "enumerate_mutex_impls(%d)", cur)
		assert.Zero(t, impl, "enumerate_mutex_impls(%d)'s next impl", cur)
		assert.Empty(t, name, "enumerate_mutex_impls(%d)'s name", cur)
	}
}
