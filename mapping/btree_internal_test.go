package mapping

import (
	"slices"
	"testing"

	"github.com/gompt/gompt/device"
)

// TestTreeDeleteInternalKeys deletes, over and over, keys held by the
// root and by the nodes just below it of a tree four levels deep (an
// internal key is replaced by its predecessor from a leaf two or three
// levels down), checking every invariant and every remaining key after
// each delete.
func TestTreeDeleteInternalKeys(t *testing.T) {
	var tr tree
	const n = 40000
	for i := 1; i <= n; i++ {
		tr.insert(&entry{start: uintptr(i) * 8})
	}
	depth := func() int {
		d := 0
		for x := tr.root; x != nil; x = x.kids[0] {
			d++
		}
		return d
	}
	if depth() < 4 {
		t.Fatalf("tree of %d keys is %d levels deep; the test needs 4", n, depth())
	}
	left := n
	for round := 0; tr.root != nil && !tr.root.leaf && round < 300; round++ {
		// Alternate between the root's keys and those of its children.
		x := tr.root
		if round%2 == 1 && !x.kids[0].leaf {
			x = x.kids[round%(x.n+1)]
		}
		k := x.keys[round%x.n]
		tr.delete(k)
		left--
		keys := tr.check(t)
		if len(keys) != left {
			t.Fatalf("round %d: %d keys, want %d", round, len(keys), left)
		}
		for _, kk := range keys {
			if kk == k {
				t.Fatalf("round %d: deleted key %#x still there", round, k)
			}
		}
	}
}

// TestShrinkReleasesMemory: a table that grew large and then emptied
// keeps only a bounded pool of nodes and entries for reuse; the rest is
// left to the garbage collector.
func TestShrinkReleasesMemory(t *testing.T) {
	tab, mem := newBenchTable(20000)
	for off := 0; off < len(mem); off += benchEntrySize {
		mustOK(t, tab.Disassociate(mem[off:off+benchEntrySize]))
	}
	if tab.Len() != 0 {
		t.Fatalf("%d entries left", tab.Len())
	}
	nodes := 0
	for x := tab.tree.free; x != nil; x = x.kids[0] {
		nodes++
	}
	entries := 0
	for e := tab.free; e != nil; e = e.next {
		entries++
	}
	if nodes == 0 || nodes > maxFreeNodes || entries == 0 || entries > maxFreeEntries {
		t.Fatalf("after emptying a table of 20000 entries: %d nodes and %d entries kept for reuse; want 1 to %d and 1 to %d",
			nodes, entries, maxFreeNodes, maxFreeEntries)
	}
}

// TestTreeDeleteBesideFullNodes deletes from a minimal leaf whose parent
// (the root) is full, so that the merge shifts a full node's keys, and
// from one whose right sibling is full, so that the rotation takes from
// a full node.
func TestTreeDeleteBesideFullNodes(t *testing.T) {
	// Ascending inserts leave every leaf but the last at degree-1 keys:
	// the first split comes with key maxKeys+1, and one more with every
	// degree keys after it.
	build := func(n int) *tree {
		tr := &tree{}
		for i := 1; i <= n; i++ {
			tr.insert(&entry{start: uintptr(i) * 8})
		}
		return tr
	}
	for _, c := range []struct {
		name    string
		n       int
		full    func(r *node) bool
		pickKey func(r *node) uintptr
	}{
		{"merge under a full root", maxKeys + 1 + (maxKeys-1)*degree,
			func(r *node) bool { return r.n == maxKeys && r.kids[0].n == degree-1 && r.kids[1].n == degree-1 },
			func(r *node) uintptr { return r.kids[0].keys[3] }},
		{"rotate from a full right leaf", maxKeys + 1 + 5*degree + degree - 1,
			func(r *node) bool {
				return r.kids[r.n].n == maxKeys && r.kids[r.n-1].n == degree-1 && r.kids[r.n-2].n == degree-1
			},
			func(r *node) uintptr { return r.kids[r.n-1].keys[3] }},
	} {
		tr := build(c.n)
		r := tr.root
		if r.leaf || !c.full(r) {
			t.Fatalf("%s: tree of %d keys: root %d keys, leaves %d ... %d", c.name, c.n, r.n, r.kids[0].n, r.kids[r.n].n)
		}
		k := c.pickKey(r)
		tr.delete(k)
		keys := tr.check(t)
		if len(keys) != c.n-1 || slices.Contains(keys, k) {
			t.Fatalf("%s: %d keys after deleting %#x from %d", c.name, len(keys), k, c.n)
		}
	}
}

// TestDeviceExtentFirstEntry: where associations share device memory (two
// host ranges associated with overlapping parts of one buffer), DeviceExtent
// answers from the entry with the lowest host address, as documented.
func TestDeviceExtentFirstEntry(t *testing.T) {
	tab := New(dev)
	const n, p = 700, 0x40000 // 700 entries: three levels
	mem := make([]byte, 64*n)
	// The first and the last range (in host order, so in different
	// nodes of the table) hold device address p+40; others lie elsewhere.
	mustOK(t, tab.Associate(mem[0:64], p+32)) // device [p+32, p+96)
	for i := 1; i < n-1; i++ {
		mustOK(t, tab.Associate(mem[64*i:64*i+64], device.DevicePtr(0x1000000+0x100*i)))
	}
	mustOK(t, tab.Associate(mem[64*(n-1):], p)) // device [p, p+64)
	if got, ok := tab.DeviceExtent(p + 40); !ok || got != 56 {
		t.Fatalf("DeviceExtent(p+40) = %d, %v; want 56 bytes, from the first entry in host order", got, ok)
	}
}

// TestEmptyingChurnNoAlloc: a table that fills and empties again and
// again (its tree grows a level and collapses back each time) allocates
// nothing once warm.
func TestEmptyingChurnNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	tab := New(dev)
	ops := &nopOps{}
	mem := make([]byte, 16*100)
	items := make([]Item, 100)
	for i := range items {
		items[i] = Item{Host: mem[16*i : 16*i+16], Type: ToFrom}
	}
	cycle := func() {
		if err := tab.Enter(ops, items, Structured, nil); err != nil {
			t.Fatal(err)
		}
		if err := tab.Exit(ops, items, Structured); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		cycle()
	}
	if n := testing.AllocsPerRun(50, cycle); n != 0 {
		t.Errorf("filling and emptying a table: %v allocations per run, want 0", n)
	}
}
