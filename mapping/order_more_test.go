package mapping

import (
	"slices"
	"testing"

	"github.com/gompt/gompt/device"
)

// A construct that uses a shared entry twice leaves only its newest
// record: a later free waits for its newest work, not its older.
func TestReleaseKeepsNewestFence(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x := fill(make([]byte, 64), 1)
	items := []Item{{Host: x, Type: To}}
	mustOK(t, tab.Enter(a, items, Dynamic, nil))
	for range 2 {
		mustOK(t, tab.Enter(b, items, Structured, nil))
		b.busy = true
		mustOK(t, tab.Exit(b, items, Structured))
	}
	f.take()
	c := &queueOps{fakeOps: f, name: "C"}
	mustOK(t, tab.Exit(c, []Item{{Host: x, Type: From}}, Dynamic))
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
	mustOK(t, tab.Enter(a, items, Dynamic, nil))
	for _, q := range []*queueOps{b, d} {
		mustOK(t, tab.Enter(q, items, Structured, nil))
		q.busy = true
		mustOK(t, tab.Exit(q, items, Structured))
	}
	mustOK(t, tab.Enter(b, items, Structured, nil))
	b.busy = false
	mustOK(t, tab.Exit(b, items, Structured)) // B idle: its record goes
	f.take()
	c := &queueOps{fakeOps: f, name: "C"}
	mustOK(t, tab.Exit(c, []Item{{Host: x, Type: From}}, Dynamic))
	f.expect(t, "C after fill A.fence1", "C after D.fence1", "copyout 0x100000 64", "free 0x100000 64")
}

// One table call takes one fence, however many entries it releases.
func TestOneFencePerCall(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x, y := fill(make([]byte, 64), 1), fill(make([]byte, 64), 2)
	items := []Item{{Host: x, Type: To}, {Host: y, Type: To}}
	mustOK(t, tab.Enter(a, items, Dynamic, nil))
	mustOK(t, tab.Enter(b, items, Structured, nil))
	f.take()
	b.busy = true
	mustOK(t, tab.Exit(b, items, Structured))
	f.expect(t, "fence B.fence1")
}

// RangeString spells a half-open host range by its two ends.
func TestRangeString(t *testing.T) {
	if got := RangeString(0x1000, 0x1000); got != "[0x1000,0x2000)" {
		t.Errorf("RangeString(0x1000, 4096) = %s", got)
	}
}

// A failed target enter data that names an associated range leaves the
// association alone: its memory is the program's, never freed by the
// table, and it stays present.
func TestFailedEnterDataKeepsAssociation(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 400)
	x, x2, q, y := mem[0:100], mem[100:200], mem[200:300], mem[300:400]
	// New entries first (the table's scratch for this call's items).
	mustOK(t, tab.Enter(f, []Item{{Host: x, Type: To}, {Host: x2, Type: To}}, Dynamic, nil))
	qp, err := f.Alloc(&Item{Host: q}, len(q))
	mustOK(t, err)
	mustOK(t, tab.Associate(q, qp))
	before := sortedEntries(tab)
	f.take()
	f.failAt = f.calls + 1 // the alloc of y
	err = tab.Enter(f, []Item{{Host: q, Type: To}, {Host: y, Type: To}}, Dynamic, nil)
	if err == nil {
		t.Fatal("no error from a failed alloc")
	}
	f.expect(t, "alloc 100 failed")
	if got := sortedEntries(tab); !slices.Equal(got, before) {
		t.Fatalf("entries after the failed enter data\n%v\nwant\n%v", got, before)
	}
}

// A construct whose always copy into a present entry went ahead, and
// which then failed on a later item, leaves that copy as the entry's
// fill: the next user waits for it.
func TestFailedEnterKeepsAlwaysCopyAsFill(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x, y := fill(make([]byte, 64), 1), make([]byte, 64)
	mustOK(t, tab.Enter(a, []Item{{Host: x, Type: To}}, Dynamic, nil))
	f.take()
	f.failAt = f.calls + 2 // B's copy into x goes, the alloc of y fails
	err := tab.Enter(b, []Item{{Host: x, Type: To, Always: true}, {Host: y, Type: To}}, Structured, nil)
	if err == nil {
		t.Fatal("no error")
	}
	f.expect(t, "B after fill A.fence1", "copyin 0x100000 64", "alloc 64 failed", "fence B.fence1")
	f.failAt = 0
	c := &queueOps{fakeOps: f, name: "C"}
	mustOK(t, tab.Exit(c, []Item{{Host: x, Type: From}}, Dynamic))
	f.expect(t, "C after fill B.fence1", "copyout 0x100000 64", "free 0x100000 64")
}

// An exit data that fails restores the counts the entry had just before
// it, not those before an earlier, successful exit.
func TestFailedExitRestoresLatestCounts(t *testing.T) {
	f, tab := newFake(), New(dev)
	x := fill(make([]byte, 64), 1)
	for range 3 {
		mustOK(t, tab.Enter(f, []Item{{Host: x, Type: To}}, Dynamic, nil))
	}
	mustOK(t, tab.Exit(f, []Item{{Host: x, Type: Release}}, Dynamic)) // 3 -> 2
	before := sortedEntries(tab)
	f.failAt = f.calls + 1
	if err := tab.Exit(f, []Item{{Host: x, Type: From, Always: true}}, Dynamic); err == nil {
		t.Fatal("no error from a failed copy")
	}
	if got := sortedEntries(tab); !slices.Equal(got, before) {
		t.Fatalf("entries after the failed exit\n%v\nwant\n%v", got, before)
	}
}

// Every exit that copies back or frees a shared entry waits for the other
// constructs' work on it, also after an earlier exit of the same entry
// waited already.
func TestEveryExitWaitsForOthers(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x := fill(make([]byte, 64), 1)
	mustOK(t, tab.Enter(a, []Item{{Host: x, Type: To}}, Dynamic, nil))
	mustOK(t, tab.Enter(a, []Item{{Host: x, Type: To}}, Dynamic, nil))
	c := &queueOps{fakeOps: f, name: "C"}
	mustOK(t, tab.Exit(c, []Item{{Host: x, Type: From, Always: true}}, Dynamic)) // 2 -> 1, copies back
	mustOK(t, tab.Enter(b, []Item{{Host: x, Type: To}}, Structured, nil))
	b.busy = true
	mustOK(t, tab.Exit(b, []Item{{Host: x, Type: To}}, Structured))
	f.take()
	mustOK(t, tab.Exit(c, []Item{{Host: x, Type: From}}, Dynamic))
	f.expect(t, "C after fill A.fence1", "C after B.fence1", "copyout 0x100000 64", "free 0x100000 64")
}

// target update to writes present entries: the next user of each waits
// for that copy, also when a later item's copy failed.
func TestUpdateToBecomesFill(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x, y := fill(make([]byte, 64), 1), fill(make([]byte, 64), 2)
	mustOK(t, tab.Enter(a, []Item{{Host: x, Type: To}, {Host: y, Type: To}}, Dynamic, nil))
	a.busy = false
	f.take()
	f.failAt = f.calls + 2 // x's copy goes, y's fails
	if err := tab.Update(b, []Item{{Host: x, Type: To}, {Host: y, Type: To}}); err == nil {
		t.Fatal("no error from a failed copy")
	}
	f.expect(t, "B after fill A.fence1", "copyin 0x100000 64", "B after fill A.fence1", "copyin 0x101000 64 failed", "fence B.fence1")
	f.failAt = 0
	mustOK(t, tab.Update(b, []Item{{Host: y, Type: To}}))
	f.expect(t, "copyin 0x101000 64", "fence B.fence2") // y's fill is B's own already
	c := &queueOps{fakeOps: f, name: "C"}
	mustOK(t, tab.Exit(c, []Item{{Host: x, Type: From}, {Host: y, Type: From}}, Dynamic))
	// exits go in reverse list order (LLVM's targetDataEnd), copies before frees
	f.expect(t, "C after fill B.fence2", "copyout 0x101000 64", "C after fill B.fence1", "copyout 0x100000 64",
		"free 0x101000 64", "free 0x100000 64")
}

// An update with no items does nothing and succeeds.
func TestEmptyUpdate(t *testing.T) {
	f, tab := newFake(), New(dev)
	x := make([]byte, 8)
	mustOK(t, tab.Enter(f, []Item{{Host: x, Type: Alloc}}, Dynamic, nil)) // scratch of one item
	f.take()
	mustOK(t, tab.Update(f, nil))
	f.expect(t)
}

// Translate answers 0 (omp_get_mapped_ptr's NULL) whenever it fails.
func TestTranslateFailsWithZero(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 64)
	mustOK(t, tab.Enter(f, []Item{{Host: mem[16:32], Type: Alloc}}, Dynamic, nil))
	for _, h := range [][]byte{nil, mem[0:8], mem[8:24]} {
		if p, err := tab.Translate(h); err == nil || p != 0 {
			t.Errorf("Translate(%s) = %v, %v; want 0 and an error", rng(h), p, err)
		}
	}
}

// Disassociate of a range that begins before an association and runs into
// it names that association.
func TestDisassociateIntoAnAssociation(t *testing.T) {
	tab := New(dev)
	mem := make([]byte, 64)
	mustOK(t, tab.Associate(mem[16:32], 0x5000))
	mustErr(t, tab.Disassociate(mem[8:24]), device.CodeInvalidArgument, "does not start an associated range", rng(mem[16:32]))
}

// An update whose copy back fails after a copy to the device still makes
// that copy the entry's fill.
func TestUpdateFromFailureKeepsEarlierFill(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := &queueOps{fakeOps: f, name: "A"}, &queueOps{fakeOps: f, name: "B"}
	x, y := fill(make([]byte, 64), 1), fill(make([]byte, 64), 2)
	mustOK(t, tab.Enter(a, []Item{{Host: x, Type: To}, {Host: y, Type: To}}, Dynamic, nil))
	f.take()
	f.failAt = f.calls + 2 // x's copy in goes, y's copy out fails
	if err := tab.Update(b, []Item{{Host: x, Type: To}, {Host: y, Type: From}}); err == nil {
		t.Fatal("no error from a failed copy")
	}
	f.expect(t, "B after fill A.fence1", "copyin 0x100000 64", "B after fill A.fence1", "copyout 0x101000 64 failed", "fence B.fence1")
}
