package mapping

import (
	"slices"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.GreaterOrEqual(t, depth(), 4, "levels of a tree of %d keys; the test needs 4", n)
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
		require.Equal(t, left, len(keys), "round %d: keys", round)
		require.False(t, slices.Contains(keys, k), "round %d: deleted key %#x still there", round, k)
	}
}

// TestShrinkReleasesMemory: a table that grew large and then emptied
// keeps only a bounded pool of nodes and entries for reuse; the rest is
// left to the garbage collector.
func TestShrinkReleasesMemory(t *testing.T) {
	tab, mem := newBenchTable(20000)
	for off := 0; off < len(mem); off += benchEntrySize {
		require.NoError(t, tab.Disassociate(mem[off:off+benchEntrySize]))
	}
	require.Equal(t, 0, tab.Len(), "entries left")
	nodes := 0
	for x := tab.tree.free; x != nil; x = x.kids[0] {
		nodes++
	}
	entries := 0
	for e := tab.free; e != nil; e = e.next {
		entries++
	}
	// After emptying a table of 20000 entries, some nodes and entries
	// are kept for reuse, but no more than the pools' bounds.
	assert.NotZero(t, nodes, "nodes kept for reuse")
	assert.LessOrEqual(t, nodes, maxFreeNodes, "nodes kept for reuse")
	assert.NotZero(t, entries, "entries kept for reuse")
	assert.LessOrEqual(t, entries, maxFreeEntries, "entries kept for reuse")
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
		require.False(t, r.leaf, "%s: tree of %d keys: the root is a leaf", c.name, c.n)
		require.True(t, c.full(r), "%s: tree of %d keys: root %d keys, leaves %d ... %d", c.name, c.n, r.n, r.kids[0].n, r.kids[r.n].n)
		k := c.pickKey(r)
		tr.delete(k)
		keys := tr.check(t)
		require.Equal(t, c.n-1, len(keys), "%s: keys after deleting %#x from %d", c.name, k, c.n)
		require.False(t, slices.Contains(keys, k), "%s: deleted key %#x still there", c.name, k)
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
	require.NoError(t, tab.Associate(mem[0:64], p+32)) // device [p+32, p+96)
	for i := 1; i < n-1; i++ {
		require.NoError(t, tab.Associate(mem[64*i:64*i+64], device.DevicePtr(0x1000000+0x100*i)))
	}
	require.NoError(t, tab.Associate(mem[64*(n-1):], p)) // device [p, p+64)
	got, ok := tab.DeviceExtent(p + 40)
	assert.True(t, ok, "DeviceExtent(p+40) found")
	assert.Equal(t, 56, got, "DeviceExtent(p+40): bytes, from the first entry in host order")
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
		require.NoError(t, tab.Enter(ops, items, Structured, nil))
		require.NoError(t, tab.Exit(ops, items, Structured))
	}
	for range 3 {
		cycle()
	}
	assert.Zero(t, testing.AllocsPerRun(50, cycle), "filling and emptying a table: allocations per run")
}
