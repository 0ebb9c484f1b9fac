package mapping

import (
	"math/rand"
	"slices"
	"testing"
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
		if !root && (x.n < degree-1 || x.n > maxKeys) {
			t.Fatalf("node at depth %d has %d keys, want %d..%d", depth, x.n, degree-1, maxKeys)
		}
		if root && x.n < 1 {
			t.Fatalf("root has %d keys", x.n)
		}
		for i := x.n; i < maxKeys; i++ {
			if x.ents[i] != nil {
				t.Fatalf("stale entry in unused slot %d of node with %d keys", i, x.n)
			}
		}
		if x.leaf {
			for _, k := range x.kids {
				if k != nil {
					t.Fatal("leaf has a child")
				}
			}
			if leafDepth == -1 {
				leafDepth = depth
			} else if leafDepth != depth {
				t.Fatalf("leaves at depths %d and %d", leafDepth, depth)
			}
		} else {
			for i := x.n + 1; i <= maxKeys; i++ {
				if x.kids[i] != nil {
					t.Fatalf("stale child in slot %d of node with %d keys", i, x.n)
				}
			}
		}
		for i := 0; i < x.n; i++ {
			if !x.leaf {
				visit(x.kids[i], depth+1, false)
			}
			if x.ents[i] == nil || x.ents[i].start != x.keys[i] {
				t.Fatalf("key %#x has entry %v", x.keys[i], x.ents[i])
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
	if !slices.IsSorted(keys) {
		t.Fatal("keys out of order")
	}
	if len(keys) != tr.len {
		t.Fatalf("tree has %d keys, len says %d", len(keys), tr.len)
	}
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
			if !slices.Equal(keys, want) {
				t.Fatalf("step %d: tree keys differ from model (%d vs %d keys)", step, len(keys), len(want))
			}
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
				if gotLE != wantLE || gotGT != wantGT {
					t.Fatalf("around(%#x) = %#x, %#x; want %#x, %#x", a, gotLE, gotGT, wantLE, wantGT)
				}
			}
		}
	}
	// Drain completely: the tree must end empty, with a nil root.
	for k := range model {
		tr.delete(k)
	}
	if tr.root != nil || tr.len != 0 {
		t.Fatalf("drained tree: root %v, len %d", tr.root, tr.len)
	}
}

func TestTreeSequential(t *testing.T) {
	// Ascending inserts then ascending deletes: the worst case for splits
	// and for borrowing from one side only.
	var tr tree
	const n = 20000
	for i := 1; i <= n; i++ {
		tr.insert(&entry{start: uintptr(i) * 8})
	}
	if got := len(tr.check(t)); got != n {
		t.Fatalf("%d keys after inserts, want %d", got, n)
	}
	for i := 1; i <= n; i++ {
		tr.delete(uintptr(i) * 8)
		if i%1000 == 0 {
			if got := len(tr.check(t)); got != n-i {
				t.Fatalf("%d keys after %d deletes, want %d", got, i, n-i)
			}
		}
	}
	for i := n; i >= 1; i-- {
		tr.insert(&entry{start: uintptr(i) * 8})
	}
	for i := n; i >= 1; i-- {
		tr.delete(uintptr(i) * 8)
	}
	if tr.root != nil || tr.len != 0 {
		t.Fatalf("tree not empty after deletes: len %d", tr.len)
	}
}

func TestTreeDeleteMissing(t *testing.T) {
	var tr tree
	tr.delete(64) // empty tree: no panic, no change
	for i := 1; i <= 100; i++ {
		tr.insert(&entry{start: uintptr(i) * 16})
	}
	tr.delete(24) // not a key
	if got := len(tr.check(t)); got != 100 {
		t.Fatalf("%d keys after deleting a missing key, want 100", got)
	}
}
