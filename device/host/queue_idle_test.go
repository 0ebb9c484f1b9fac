package host

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ordQueueFailure launches testPanics on q (3 teams, team 1 panics) so
// that it fails on q's goroutine: queued behind a 1 MiB copy. If the copy
// is done before Launch looks, the launch runs inline and fails at once:
// it tries again, 20 times at most. It returns the copy's device memory,
// for the caller to free: defer d.Free(ordQueueFailure(t, d, q)) queues
// the failure at once and frees the memory at the test's end.
func ordQueueFailure(t *testing.T, d *Device, q device.Queue) device.DevicePtr {
	t.Helper()
	f, _ := d.Load(testPanics)
	a, _ := d.Alloc(1 << 20)
	queued := false
	for try := 0; try < 20 && !queued; try++ {
		require.NoError(t, q.CopyIn(a.Ptr, make([]byte, 1<<20)))
		queued = q.Launch(f, device.Shape{Size: [3]int{100}, Teams: 3}, []device.Arg{{Bits: 1}}) == nil
	}
	require.True(t, queued, "no launch was queued behind a 1 MiB copy in 20 tries")
	return a.Ptr
}

// A queue whose work failed on its goroutine is not idle (device.Idler)
// until Sync has returned that failure, even once the work is done: the
// runtime records no event for an idle queue, and a construct that
// depends on this queue's work would then not see the failure (its
// dependents of a failed kernel ran as if it had succeeded).
func TestQueueWithUnsyncedFailureIsNotIdle(t *testing.T) {
	d := newDevice(0)
	q, _ := d.NewQueue()
	defer q.Release()
	idle := q.(device.Idler)
	defer d.Free(ordQueueFailure(t, d, q))
	ev, err := q.Record()
	require.NoError(t, err)
	require.Error(t, ev.Wait(), "the event after the failed launch")
	// Everything enqueued has completed, but its failure is not delivered.
	assert.False(t, idle.Idle(), "Idle with the failed launch's error not yet returned by Sync")
	ev2, err := q.Record()
	require.NoError(t, err)
	assert.ErrorContains(t, ev2.Wait(), "panicked in team 1 of 3", "an event recorded on the completed queue that failed")
	assert.ErrorContains(t, q.Sync(), "panicked in team 1 of 3", "Sync")
	assert.True(t, idle.Idle(), "Idle after Sync returned the failure")
}

// A queue that waited (WaitEvent) for a failed event of another queue has
// that failure as its own, so it is not idle until Sync returns it.
func TestQueueAfterFailedEventIsNotIdle(t *testing.T) {
	d := newDevice(0)
	q1, _ := d.NewQueue()
	defer q1.Release()
	q2, _ := d.NewQueue()
	defer q2.Release()
	defer d.Free(ordQueueFailure(t, d, q1))
	ev1, err := q1.Record()
	require.NoError(t, err)
	ok, err := q2.(device.Waiter).WaitEvent(ev1)
	require.NoError(t, err)
	require.True(t, ok, "WaitEvent for an event of another queue of the device")
	ev2, err := q2.Record()
	require.NoError(t, err)
	require.ErrorContains(t, ev2.Wait(), "panicked in team 1 of 3", "the waiting queue's event after the wait")
	assert.False(t, q2.(device.Idler).Idle(), "Idle with the waited-for failure not yet returned by Sync")
	assert.ErrorContains(t, q2.Sync(), "panicked in team 1 of 3", "Sync of the waiting queue")
	assert.True(t, q2.(device.Idler).Idle(), "Idle after Sync")
	assert.Error(t, q1.Sync(), "Sync of the failed queue")
}

// WaitEvent for an event of the queue itself whose failure a Sync has
// already returned (the queue was used again after it): the failure is
// the queue's again, for its next Sync and the events recorded after, as
// device.Waiter says, so work ordered after it on this queue is not taken
// for having succeeded.
func TestWaitForOwnFailedEventAfterSync(t *testing.T) {
	d := newDevice(0)
	q, _ := d.NewQueue()
	defer q.Release()
	defer d.Free(ordQueueFailure(t, d, q))
	ev, err := q.Record()
	require.NoError(t, err)
	require.ErrorContains(t, q.Sync(), "panicked in team 1 of 3", "Sync after the failed launch")
	require.ErrorContains(t, ev.Wait(), "panicked in team 1 of 3", "the event after the failed launch")
	ok, err := q.(device.Waiter).WaitEvent(ev)
	require.NoError(t, err)
	require.True(t, ok, "WaitEvent for an event of the queue itself")
	assert.False(t, q.(device.Idler).Idle(), "Idle after waiting for its own failed event")
	ev2, err := q.Record()
	require.NoError(t, err)
	assert.ErrorContains(t, ev2.Wait(), "panicked in team 1 of 3", "an event recorded after the wait")
	assert.ErrorContains(t, q.Sync(), "panicked in team 1 of 3", "Sync after the wait")
	assert.NoError(t, q.Sync(), "second Sync: cleared")

	// An event of the queue that completed without failure adds none.
	ev3, err := q.Record()
	require.NoError(t, err)
	require.NoError(t, ev3.Wait())
	ok, err = q.(device.Waiter).WaitEvent(ev3)
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, q.(device.Idler).Idle(), "Idle after waiting for its own event that did not fail")
	assert.NoError(t, q.Sync(), "Sync after waiting for its own event that did not fail")
}
