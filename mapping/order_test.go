package mapping

import (
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queueOps is one construct's Ops over the shared fake device, whose
// operations stay pending until the test says: Fence hands out a named
// event while the queue is busy, After logs what the construct was made
// to wait for.
type queueOps struct {
	*fakeOps
	name   string
	busy   bool // work enqueued and not known complete
	fences int
}

type namedEvent string

func (e namedEvent) Wait() error          { return nil }
func (e namedEvent) Time() (int64, error) { return 0, nil }
func (e namedEvent) String() string       { return string(e) }
func (q *queueOps) CopyIn(dst device.DevicePtr, src []byte) error {
	q.busy = true
	return q.fakeOps.CopyIn(dst, src)
}

func (q *queueOps) Fence() device.Event {
	if !q.busy {
		return nil
	}
	q.fences++
	ev := namedEvent(fmt.Sprintf("%s.fence%d", q.name, q.fences))
	q.fakeOps.log = append(q.fakeOps.log, "fence "+string(ev))
	return ev
}

func (q *queueOps) After(ev device.Event, fill bool) {
	what := "after"
	if fill {
		what = "after fill"
	}
	q.fakeOps.log = append(q.fakeOps.log, fmt.Sprintf("%s %s %v", q.name, what, ev))
}

// Two constructs on two queues share x: the second waits for the copy the
// first enqueued into the new entry; the one that exits last waits for the
// other's work (its kernel may still read x) before it frees the buffer.
func TestSharedEntryOrdering(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x := fill(make([]byte, 64), 1)
	items := []Item{{Host: x, Type: To, Name: "x"}}

	require.NoError(t, tab.Enter(a, items, Structured, nil))
	f.expect(t, "alloc 64 -> 0x100000", "copyin 0x100000 64", "fence A.fence1")
	require.NoError(t, tab.Enter(b, items, Structured, nil))
	f.expect(t, "B after fill A.fence1")

	// A's own later use of the entry needs no wait: its queue is in order.
	require.NoError(t, tab.Update(a, []Item{{Host: x, Type: From}}))
	f.expect(t, "copyout 0x100000 64")

	b.busy = true // B's kernel is still running when B releases x
	require.NoError(t, tab.Exit(b, items, Structured))
	f.expect(t, "fence B.fence1")
	require.NoError(t, tab.Exit(a, items, Structured))
	f.expect(t, "A after B.fence1", "free 0x100000 64")
	assert.Equal(t, 0, tab.Len(), "table not empty: %s", entriesOf(t, tab))
}

// An idle queue's fence is nil: nothing is recorded and nobody waits, and
// a construct that releases with an idle queue drops its older record.
func TestIdleQueueLeavesNothingToWaitFor(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x := fill(make([]byte, 64), 1)
	items := []Item{{Host: x, Type: ToFrom}}
	require.NoError(t, tab.Enter(a, []Item{{Host: x, Type: To}}, Dynamic, nil))
	f.expect(t, "alloc 64 -> 0x100000", "copyin 0x100000 64", "fence A.fence1")
	a.busy = false // A synced
	require.NoError(t, tab.Enter(b, items, Structured, nil))
	f.expect(t, "B after fill A.fence1") // the entry cannot know A synced since
	b.busy = true
	require.NoError(t, tab.Exit(b, items, Structured))
	f.expect(t, "fence B.fence1")
	require.NoError(t, tab.Enter(b, items, Structured, nil))
	f.expect(t, "B after fill A.fence1")
	b.busy = false
	require.NoError(t, tab.Exit(b, items, Structured)) // idle now: B's record goes
	f.expect(t)
	c := &queueOps{fakeOps: f, name: "C"}
	require.NoError(t, tab.Exit(c, []Item{{Host: x, Type: From}}, Dynamic))
	f.expect(t, "C after fill A.fence1", "copyout 0x100000 64", "free 0x100000 64")
}

// always with to writes a present entry: it waits for the other users'
// work (they may still read the old contents) and becomes the entry's fill.
func TestAlwaysCopyWaitsForReaders(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x := fill(make([]byte, 64), 1)
	require.NoError(t, tab.Enter(a, []Item{{Host: x, Type: To}}, Dynamic, nil))
	require.NoError(t, tab.Enter(b, []Item{{Host: x, Type: To}}, Structured, nil))
	b.busy = true
	require.NoError(t, tab.Exit(b, []Item{{Host: x, Type: To}}, Structured))
	f.take()
	c := &queueOps{fakeOps: f, name: "C"}
	require.NoError(t, tab.Enter(c, []Item{{Host: x, Type: To, Always: true}}, Structured, nil))
	f.expect(t, "C after fill A.fence1", "C after B.fence1", "copyin 0x100000 64", "fence C.fence1")
	require.NoError(t, tab.Update(a, []Item{{Host: x, Type: From}}))
	f.expect(t, "A after fill C.fence1", "A after B.fence1", "copyout 0x100000 64")
}
