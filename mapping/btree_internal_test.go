package mapping

import "testing"

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
