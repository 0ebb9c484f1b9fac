package mapping

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A construct that uses a shared entry twice leaves only its newest
// record: a later free waits for its newest work, not its older.
func TestReleaseKeepsNewestFence(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x := fill(make([]byte, 64), 1)
	items := []Item{{Host: x, Type: To}}
	require.NoError(t, tab.Enter(a, items, Dynamic, nil))
	for range 2 {
		require.NoError(t, tab.Enter(b, items, Structured, nil))
		b.busy = true
		require.NoError(t, tab.Exit(b, items, Structured))
	}
	f.take()
	c := &queueOps{fakeOps: f, name: "C"}
	require.NoError(t, tab.Exit(c, []Item{{Host: x, Type: From}}, Dynamic))
	f.expect(t, "C after fill A.fence1", "C after B.fence2", "copyout 0x100000 64", "free 0x100000 64")
}

// Of two constructs still using a shared entry, the one that releases it
// with an idle queue drops its record and the other's stays.
func TestIdleReleaseKeepsOthers(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := &queueOps{fakeOps: f, name: "A"}
	b, d := &queueOps{fakeOps: f, name: "B"}, &queueOps{fakeOps: f, name: "D"}
	x := fill(make([]byte, 64), 1)
	items := []Item{{Host: x, Type: To}}
	require.NoError(t, tab.Enter(a, items, Dynamic, nil))
	for _, q := range []*queueOps{b, d} {
		require.NoError(t, tab.Enter(q, items, Structured, nil))
		q.busy = true
		require.NoError(t, tab.Exit(q, items, Structured))
	}
	require.NoError(t, tab.Enter(b, items, Structured, nil))
	b.busy = false
	require.NoError(t, tab.Exit(b, items, Structured)) // B idle: its record goes
	f.take()
	c := &queueOps{fakeOps: f, name: "C"}
	require.NoError(t, tab.Exit(c, []Item{{Host: x, Type: From}}, Dynamic))
	f.expect(t, "C after fill A.fence1", "C after D.fence1", "copyout 0x100000 64", "free 0x100000 64")
}

// One table call takes one fence, however many entries it releases.
func TestOneFencePerCall(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x, y := fill(make([]byte, 64), 1), fill(make([]byte, 64), 2)
	items := []Item{{Host: x, Type: To}, {Host: y, Type: To}}
	require.NoError(t, tab.Enter(a, items, Dynamic, nil))
	require.NoError(t, tab.Enter(b, items, Structured, nil))
	f.take()
	b.busy = true
	require.NoError(t, tab.Exit(b, items, Structured))
	f.expect(t, "fence B.fence1")
}

// RangeString spells a half-open host range by its two ends.
func TestRangeString(t *testing.T) {
	assert.Equal(t, "[0x1000,0x2000)", RangeString(0x1000, 0x1000), "RangeString(0x1000, 4096)")
}

// A failed target enter data that names an associated range leaves the
// association alone: its memory is the program's, never freed by the
// table, and it stays present.
func TestFailedEnterDataKeepsAssociation(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 400)
	x, x2, q, y := mem[0:100], mem[100:200], mem[200:300], mem[300:400]
	// New entries first (the table's scratch for this call's items).
	require.NoError(t, tab.Enter(f, []Item{{Host: x, Type: To}, {Host: x2, Type: To}}, Dynamic, nil))
	qp, err := f.Alloc(&Item{Host: q}, len(q))
	require.NoError(t, err)
	require.NoError(t, tab.Associate(q, qp))
	before := sortedEntries(tab)
	f.take()
	f.failAt = f.calls + 1 // the alloc of y
	err = tab.Enter(f, []Item{{Host: q, Type: To}, {Host: y, Type: To}}, Dynamic, nil)
	require.Error(t, err, "a failed alloc")
	f.expect(t, "alloc 100 failed")
	assert.Equal(t, before, sortedEntries(tab), "entries after the failed enter data")
}

// A construct whose always copy into a present entry went ahead, and
// which then failed on a later item, leaves that copy as the entry's
// fill: the next user waits for it.
func TestFailedEnterKeepsAlwaysCopyAsFill(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x, y := fill(make([]byte, 64), 1), make([]byte, 64)
	require.NoError(t, tab.Enter(a, []Item{{Host: x, Type: To}}, Dynamic, nil))
	f.take()
	f.failAt = f.calls + 2 // B's copy into x goes, the alloc of y fails
	err := tab.Enter(b, []Item{{Host: x, Type: To, Always: true}, {Host: y, Type: To}}, Structured, nil)
	require.Error(t, err, "a failed alloc")
	f.expect(t, "B after fill A.fence1", "copyin 0x100000 64", "alloc 64 failed", "fence B.fence1")
	f.failAt = 0
	c := &queueOps{fakeOps: f, name: "C"}
	require.NoError(t, tab.Exit(c, []Item{{Host: x, Type: From}}, Dynamic))
	f.expect(t, "C after fill B.fence1", "copyout 0x100000 64", "free 0x100000 64")
}

// An exit data that fails restores the counts the entry had just before
// it, not those before an earlier, successful exit.
func TestFailedExitRestoresLatestCounts(t *testing.T) {
	f, tab := newFake(), New(dev)
	x := fill(make([]byte, 64), 1)
	for range 3 {
		require.NoError(t, tab.Enter(f, []Item{{Host: x, Type: To}}, Dynamic, nil))
	}
	require.NoError(t, tab.Exit(f, []Item{{Host: x, Type: Release}}, Dynamic)) // 3 -> 2
	before := sortedEntries(tab)
	f.failAt = f.calls + 1
	require.Error(t, tab.Exit(f, []Item{{Host: x, Type: From, Always: true}}, Dynamic), "a failed copy")
	assert.Equal(t, before, sortedEntries(tab), "entries after the failed exit")
}

// Every exit that copies back or frees a shared entry waits for the other
// constructs' work on it, also after an earlier exit of the same entry
// waited already.
func TestEveryExitWaitsForOthers(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x := fill(make([]byte, 64), 1)
	require.NoError(t, tab.Enter(a, []Item{{Host: x, Type: To}}, Dynamic, nil))
	require.NoError(t, tab.Enter(a, []Item{{Host: x, Type: To}}, Dynamic, nil))
	c := &queueOps{fakeOps: f, name: "C"}
	require.NoError(t, tab.Exit(c, []Item{{Host: x, Type: From, Always: true}}, Dynamic)) // 2 -> 1, copies back
	require.NoError(t, tab.Enter(b, []Item{{Host: x, Type: To}}, Structured, nil))
	b.busy = true
	require.NoError(t, tab.Exit(b, []Item{{Host: x, Type: To}}, Structured))
	f.take()
	require.NoError(t, tab.Exit(c, []Item{{Host: x, Type: From}}, Dynamic))
	f.expect(t, "C after fill A.fence1", "C after B.fence1", "copyout 0x100000 64", "free 0x100000 64")
}

// target update to writes present entries: the next user of each waits
// for that copy, also when a later item's copy failed.
func TestUpdateToBecomesFill(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x, y := fill(make([]byte, 64), 1), fill(make([]byte, 64), 2)
	require.NoError(t, tab.Enter(a, []Item{{Host: x, Type: To}, {Host: y, Type: To}}, Dynamic, nil))
	a.busy = false
	f.take()
	f.failAt = f.calls + 2 // x's copy goes, y's fails
	require.Error(t, tab.Update(b, []Item{{Host: x, Type: To}, {Host: y, Type: To}}), "a failed copy")
	f.expect(t, "B after fill A.fence1", "copyin 0x100000 64", "B after fill A.fence1", "copyin 0x101000 64 failed", "fence B.fence1")
	f.failAt = 0
	require.NoError(t, tab.Update(b, []Item{{Host: y, Type: To}}))
	f.expect(t, "copyin 0x101000 64", "fence B.fence2") // y's fill is B's own already
	c := &queueOps{fakeOps: f, name: "C"}
	require.NoError(t, tab.Exit(c, []Item{{Host: x, Type: From}, {Host: y, Type: From}}, Dynamic))
	// exits go in reverse list order (LLVM's targetDataEnd), copies before frees
	f.expect(t, "C after fill B.fence2", "copyout 0x101000 64", "C after fill B.fence1", "copyout 0x100000 64",
		"free 0x101000 64", "free 0x100000 64")
}

// An update with no items does nothing and succeeds.
func TestEmptyUpdate(t *testing.T) {
	f, tab := newFake(), New(dev)
	x := make([]byte, 8)
	require.NoError(t, tab.Enter(f, []Item{{Host: x, Type: Alloc}}, Dynamic, nil)) // scratch of one item
	f.take()
	require.NoError(t, tab.Update(f, nil))
	f.expect(t)
}

// Translate answers 0 (omp_get_mapped_ptr's NULL) whenever it fails.
func TestTranslateFailsWithZero(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 64)
	require.NoError(t, tab.Enter(f, []Item{{Host: mem[16:32], Type: Alloc}}, Dynamic, nil))
	for _, h := range [][]byte{nil, mem[0:8], mem[8:24]} {
		p, err := tab.Translate(h)
		assert.Error(t, err, "Translate(%s)", rng(h))
		assert.Zero(t, p, "Translate(%s)", rng(h))
	}
}

// Disassociate of a range that begins before an association and runs into
// it names that association.
func TestDisassociateIntoAnAssociation(t *testing.T) {
	tab := New(dev)
	mem := make([]byte, 64)
	require.NoError(t, tab.Associate(mem[16:32], 0x5000))
	mustErr(t, tab.Disassociate(mem[8:24]), device.CodeInvalidArgument, "does not start an associated range", rng(mem[16:32]))
}

// An update whose copy back fails after a copy to the device still makes
// that copy the entry's fill.
func TestUpdateFromFailureKeepsEarlierFill(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x, y := fill(make([]byte, 64), 1), fill(make([]byte, 64), 2)
	require.NoError(t, tab.Enter(a, []Item{{Host: x, Type: To}, {Host: y, Type: To}}, Dynamic, nil))
	f.take()
	f.failAt = f.calls + 2 // x's copy in goes, y's copy out fails
	require.Error(t, tab.Update(b, []Item{{Host: x, Type: To}, {Host: y, Type: From}}), "a failed copy")
	f.expect(t, "B after fill A.fence1", "copyin 0x100000 64", "B after fill A.fence1", "copyout 0x101000 64 failed", "fence B.fence1")
}
