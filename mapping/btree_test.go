package mapping

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// check verifies the B-tree invariants: keys sorted across the whole tree,
// every non-root node holds degree-1..maxKeys keys, all leaves at one depth,
// entries match their keys, unused slots are cleared, and len is right.
func (tr *tree) check(t *testing.T) []uintptr {
	t.Helper()
	var keys []uintptr
	leafDepth := -1
	var visit func(x *node, depth int, root bool)
	visit = func(x *node, depth int, root bool) {
		// Every node and slot of a large tree is checked, often: the
		// conditions are tested first, and testify only reports.
		if !root && x.n < degree-1 {
			require.Failf(t, "node too small", "node at depth %d has %d keys, want %d..%d", depth, x.n, degree-1, maxKeys)
		}
		if !root && x.n > maxKeys {
			require.Failf(t, "node too large", "node at depth %d has %d keys, want %d..%d", depth, x.n, degree-1, maxKeys)
		}
		if root && x.n < 1 && !x.leaf { // only an empty tree's root, a leaf, holds none
			require.Failf(t, "empty root", "root has %d keys", x.n)
		}
		for i := x.n; i < maxKeys; i++ {
			if x.ents[i] != nil {
				require.Failf(t, "stale entry", "stale entry in unused slot %d of node with %d keys", i, x.n)
			}
		}
		if x.leaf {
			for _, k := range x.kids {
				if k != nil {
					require.Fail(t, "leaf has a child")
				}
			}
			if leafDepth == -1 {
				leafDepth = depth
			} else if leafDepth != depth {
				require.Failf(t, "leaves at different depths", "leaves at depths %d and %d", leafDepth, depth)
			}
		} else {
			for i := x.n + 1; i <= maxKeys; i++ {
				if x.kids[i] != nil {
					require.Failf(t, "stale child", "stale child in slot %d of node with %d keys", i, x.n)
				}
			}
		}
		for i := 0; i < x.n; i++ {
			if !x.leaf {
				visit(x.kids[i], depth+1, false)
			}
			if x.ents[i] == nil {
				require.Failf(t, "key without entry", "key %#x has no entry", x.keys[i])
			}
			if x.ents[i].start != x.keys[i] {
				require.Failf(t, "key and entry differ", "key %#x has entry %v", x.keys[i], x.ents[i])
			}
			keys = append(keys, x.keys[i])
		}
		if !x.leaf {
			visit(x.kids[x.n], depth+1, false)
		}
	}
	if tr.root != nil {
		visit(tr.root, 0, true)
	}
	require.True(t, slices.IsSorted(keys), "keys out of order")
	require.Equal(t, tr.len, len(keys), "the tree's keys against its len")
	return keys
}

func TestTreeRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var tr tree
	model := map[uintptr]bool{}
	const space = 5000
	for step := 0; step < 60000; step++ {
		k := uintptr(rng.Intn(space)+1) * 16
		if model[k] {
			tr.delete(k)
			delete(model, k)
		} else {
			tr.insert(&entry{start: k, end: k + 16})
			model[k] = true
		}
		if step%997 == 0 || step > 59900 {
			keys := tr.check(t)
			want := make([]uintptr, 0, len(model))
			for k := range model {
				want = append(want, k)
			}
			slices.Sort(want)
			require.Equal(t, want, keys, "step %d: tree keys against the model", step)
			// around agrees with a sorted search for probes at, between and beyond keys.
			for p := 0; p < 200; p++ {
				a := uintptr(rng.Intn(space*16 + 64))
				i, _ := slices.BinarySearch(want, a+1) // first key > a
				var wantLE, wantGT uintptr
				if i > 0 {
					wantLE = want[i-1]
				}
				if i < len(want) {
					wantGT = want[i]
				}
				le, gt := tr.around(a)
				var gotLE, gotGT uintptr
				if le != nil {
					gotLE = le.start
				}
				if gt != nil {
					gotGT = gt.start
				}
				require.Equal(t, wantLE, gotLE, "around(%#x): the key at or below", a)
				require.Equal(t, wantGT, gotGT, "around(%#x): the key above", a)
			}
		}
	}
	// Drain completely: the tree must end empty, its root an empty leaf
	// (kept for the next insert), with no entry left in it.
	for k := range model {
		tr.delete(k)
	}
	if assert.NotNil(t, tr.root, "root of the drained tree") {
		assert.True(t, tr.root.leaf, "the drained tree's root is a leaf")
		assert.Zero(t, tr.root.n, "keys in the drained tree's root")
		assert.Equal(t, [maxKeys]*entry{}, tr.root.ents, "entries left in the drained tree's root")
	}
	assert.Zero(t, tr.len, "len of the drained tree")
}

func TestTreeSequential(t *testing.T) {
	// Ascending inserts then ascending deletes: the worst case for splits
	// and for borrowing from one side only.
	var tr tree
	const n = 20000
	for i := 1; i <= n; i++ {
		tr.insert(&entry{start: uintptr(i) * 8})
	}
	require.Equal(t, n, len(tr.check(t)), "keys after inserts")
	for i := 1; i <= n; i++ {
		tr.delete(uintptr(i) * 8)
		if i%1000 == 0 {
			require.Equal(t, n-i, len(tr.check(t)), "keys after %d deletes", i)
		}
	}
	for i := n; i >= 1; i-- {
		tr.insert(&entry{start: uintptr(i) * 8})
	}
	for i := n; i >= 1; i-- {
		tr.delete(uintptr(i) * 8)
	}
	assert.Empty(t, tr.check(t), "keys after deletes")
	assert.Zero(t, tr.len, "len after deletes")
}

func TestTreeDeleteMissing(t *testing.T) {
	var tr tree
	tr.delete(64) // empty tree: no panic, no change
	for i := 1; i <= 100; i++ {
		tr.insert(&entry{start: uintptr(i) * 16})
	}
	tr.delete(24) // not a key
	assert.Equal(t, 100, len(tr.check(t)), "keys after deleting a missing key")
}
