package target

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ordFailedQueue takes a queue of the host runtime's device 0 (given back
// at the test's end) and fails a kernel on it, on the queue's goroutine
// (queued behind a 1 MiB copy, not inline: if the copy is done before
// Launch looks, it tries again), recording an event after it.
func ordFailedQueue(t *testing.T) (c *construct, ev device.Event) {
	t.Helper()
	r := hostRuntime(t)
	d := r.devs[0]
	f, err := d.load(panics)
	require.NoError(t, err)
	buf, err := d.d.Alloc(1 << 20)
	require.NoError(t, err)
	t.Cleanup(func() { d.d.Free(buf.Ptr) })
	c, err = d.take()
	require.NoError(t, err)
	t.Cleanup(func() { d.give(c) }) // its queue failed: give releases it
	queued := false
	for try := 0; try < 20 && !queued; try++ {
		require.NoError(t, c.q.CopyIn(buf.Ptr, make([]byte, 1<<20)))
		queued = c.q.Launch(f, device.Shape{Size: [3]int{1}, Teams: 1}, []device.Arg{{Bits: 1}}) == nil
	}
	require.True(t, queued, "no launch was queued behind a 1 MiB copy in 20 tries")
	ev, err = c.q.Record()
	require.NoError(t, err)
	return c, ev
}

// ordPublishSeesFailure publishes a nowait task's end of device work on c
// and asserts its dependents are released with the failure: the release's
// error or its event's.
func ordPublishSeesFailure(t *testing.T, c *construct) {
	t.Helper()
	tk := &Task{done: make(chan struct{})}
	tk.ds.early = true
	tk.publish(c, nil)
	require.True(t, tk.ds.released, "publish released the task's dependents")
	seen := tk.ds.relErr
	if seen == nil && tk.ds.fence != nil {
		seen = tk.ds.fence.Wait()
	}
	assert.ErrorContains(t, seen, "panicked", "the failure a dependent sees: the release's error or its event's")
}

// A nowait construct releases its dependents as soon as its device work is
// enqueued (publish), with an event for that work. If the work has already
// completed and failed by then (the queue is idle, the failure not yet
// synced), the dependents still see the failure: before, the idle queue
// gave no event and no error, so a dependent of a kernel that failed on the
// device ran and succeeded (TestDependOnKernelFailingOnDevice failed now
// and then: "dependent 2 ... got nil").
func TestPublishAfterFailedWorkCompletedReleasesTheFailure(t *testing.T) {
	c, ev := ordFailedQueue(t)
	// Wait until the queue has done it all (as a slow enqueuing goroutine
	// would find it), without a Sync, which would take the failure.
	require.Error(t, ev.Wait(), "the queue's work failed")
	ordPublishSeesFailure(t, c)
}

// The same when the construct's queue is the one the failed predecessor
// used: a construct whose end synced the failure away gives its queue back
// for reuse, and the next construct on it, which depends on the failed
// work's event, waits for it "in order". Its dependents must still see the
// failure: a chain failed kernel → dependent → its dependent (on the
// reused queue) → the next ran as if nothing had failed.
func TestPublishOnReusedQueueAfterItsFailureReleasesTheFailure(t *testing.T) {
	c, ev := ordFailedQueue(t)
	require.Error(t, c.q.Sync(), "the earlier construct's end: its sync returns the failure")
	// The next construct on the queue depends on the failed work's event.
	c.deps = append(c.deps, dep{ev: ev, depend: true})
	require.NoError(t, c.awaitDevice())
	ordPublishSeesFailure(t, c)
	assert.ErrorIs(t, c.checkDeps(), ErrDependence, "the construct's own error at its end")
}
