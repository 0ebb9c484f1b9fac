package mapping

// Behaviour a program relies on that mutation testing (issue 21,
// ci/mutate) found no test pinning: each test here fails for some small
// change to the code that the rest of the suite let through.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every Type value prints without panicking: the valid ones by their
// OpenMP name, every other one (as read from a bad program or a tool) as
// maptype(N), including the first value past the last name.
func TestTypeStringNeverPanics(t *testing.T) {
	for v := 0; v < 256; v++ {
		ty := Type(v)
		s := ty.String()
		switch {
		case v >= int(To) && v <= int(FromDelete):
			assert.Equal(t, typeNames[v], s, "Type(%d).String(): want its name", v)
			assert.False(t, strings.HasPrefix(s, "maptype"), "Type(%d).String() = %q, want its name", v, s)
		default:
			assert.Equal(t, fmt.Sprintf("maptype(%d)", v), s, "Type(%d).String()", v)
		}
	}
}

// CheckEnter, CheckExit and CheckUpdate (the initial device's validation)
// reject exactly what Enter, Exit and Update reject for bad input, with
// the same message, and accept what they accept.
func TestCheckMatchesTable(t *testing.T) {
	mem := make([]byte, 256)
	a, b := mem[0:64], mem[64:128]
	cases := []struct {
		name  string
		items []Item
	}{
		{"good", []Item{{Host: a, Type: To}, {Host: b, Type: From}}},
		{"empty", []Item{{Host: a, Type: To}, {Host: nil, Type: To, Name: "nothing"}}},
		{"bad type", []Item{{Host: a, Type: Type(8)}}},
		{"release", []Item{{Host: a, Type: Release}}},
		{"alloc", []Item{{Host: a, Type: Alloc}}},
		{"tofrom", []Item{{Host: a, Type: ToFrom}}},
		{"overlap", []Item{{Host: a, Type: To, Name: "a"}, {Host: mem[63:65], Type: To, Name: "edge"}}},
		{"adjacent", []Item{{Host: mem[0:64], Type: To}, {Host: mem[64:65], Type: To}}},
	}
	for _, c := range cases {
		for _, k := range []Kind{Structured, Dynamic} {
			// Enter on an empty table: only validation can fail it.
			f := newFake()
			want := New(dev).Enter(f, c.items, k, nil)
			got := CheckEnter(dev, k, c.items)
			assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "%s: CheckEnter(%v) against Enter", c.name, k)
			// Exit: map the items first when they are valid, so that only
			// validation can fail it.
			tab := New(dev)
			var enterItems []Item
			for _, it := range c.items {
				if len(it.Host) > 0 {
					enterItems = append(enterItems, Item{Host: it.Host, Type: Alloc})
				}
			}
			if tab.Enter(f, enterItems, k, nil) != nil {
				enterItems = nil
			}
			want = tab.Exit(f, c.items, k)
			got = CheckExit(dev, k, c.items)
			if enterItems != nil {
				assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "%s: CheckExit(%v) against Exit", c.name, k)
			}
		}
		want := New(dev).Update(newFake(), c.items)
		assert.Equal(t, fmt.Sprint(want), fmt.Sprint(CheckUpdate(dev, c.items)), "%s: CheckUpdate against Update", c.name)
	}
	// Sanity of the cases themselves: each kind of bad input is refused.
	assert.Error(t, CheckEnter(dev, Dynamic, cases[0].items), "enter data must refuse map(from:)")
	assert.NoError(t, CheckEnter(dev, Structured, cases[0].items), "a target region must accept map(from:)")
	mustErr(t, CheckEnter(dev, Structured, cases[1].items), device.CodeInvalidArgument, "list item 1 (nothing) has an empty host range")
	mustErr(t, CheckExit(dev, Dynamic, cases[2].items), device.CodeInvalidArgument, "does not accept map type maptype(8)")
	mustErr(t, CheckUpdate(dev, cases[3].items), device.CodeInvalidArgument, "accepted: to, from")
	mustErr(t, CheckEnter(dev, Structured, cases[6].items), device.CodeInvalidArgument, "overlaps")
	require.NoError(t, CheckEnter(dev, Structured, cases[7].items))
	require.NoError(t, CheckExit(dev, Structured, cases[7].items))
	require.NoError(t, CheckUpdate(dev, cases[7].items))
	mustErr(t, CheckEnter(dev, Kind(3), cases[0].items), device.CodeInvalidArgument, "kind 3 is not valid")
	mustErr(t, CheckExit(dev, Kind(0), cases[0].items), device.CodeInvalidArgument, "kind 0 is not valid")
}

// List items of one construct that touch but do not share a byte are not
// overlapping, in any order and however many there are (the check sorts
// long lists); one shared byte anywhere is an overlap that names both.
func TestAdjacentItemsAreDisjoint(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 1))
	for _, n := range []int{2, 3, 16, 17, 40} {
		mem := make([]byte, 8*n+8)
		items := make([]Item, n)
		for i := range items {
			items[i] = Item{Host: mem[8*i : 8*i+8], Type: ToFrom, Name: fmt.Sprint("x", i)}
		}
		for round := 0; round < 5; round++ {
			r.Shuffle(n, func(i, j int) { items[i], items[j] = items[j], items[i] })
			f, tab := newFake(), New(dev)
			require.NoError(t, tab.Enter(f, items, Structured, nil), "%d adjacent items", n)
			require.NoError(t, tab.Exit(f, items, Structured))
			checkConsistent(t, tab, f)

			// Widen one item by a byte into its neighbour on either side.
			i := r.IntN(n)
			bad := slices.Clone(items)
			lo, hi := int(addr(bad[i].Host)-addr(mem)), int(addr(bad[i].Host)-addr(mem))+8
			if round%2 == 0 && lo > 0 {
				lo--
			} else if hi < 8*n {
				hi++
			} else {
				lo--
			}
			bad[i].Host = mem[lo:hi]
			err := New(dev).Enter(f, bad, Structured, nil)
			mustErr(t, err, device.CodeInvalidArgument, "overlaps", "("+bad[i].Name+")")
			require.Error(t, CheckEnter(dev, Structured, bad), "%d items: CheckEnter accepted an overlap", n)
		}
	}
}

// An address one past the end of a mapped buffer is not in it.
func TestDeviceExtentEnd(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 100)
	ptrs := make([]device.DevicePtr, 1)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Dynamic, ptrs))
	n, ok := tab.DeviceExtent(ptrs[0] + 99)
	assert.Equal(t, 1, n, "last byte: bytes to the end")
	assert.True(t, ok, "last byte found")
	n, ok = tab.DeviceExtent(ptrs[0] + 100)
	assert.False(t, ok, "one past the end: %d bytes found", n)
	_, ok = tab.DeviceExtent(ptrs[0] - 1)
	assert.False(t, ok, "one before the start found")
}

// A failed target enter data changes no count: an item already present
// keeps its dynamic count, so one exit data still unmaps it.
func TestFailedEnterDataKeepsCounts(t *testing.T) {
	for _, fail := range []string{"alloc", "copyin", "always copyin"} {
		t.Run(fail, func(t *testing.T) {
			f, tab := newFake(), New(dev)
			mem := make([]byte, 300)
			p, q, x := mem[0:100], mem[100:200], mem[200:300]
			require.NoError(t, tab.Enter(f, []Item{{Host: p, Type: To}, {Host: q, Type: To}}, Dynamic, nil))
			require.NoError(t, tab.Enter(f, []Item{{Host: p, Type: Alloc}}, Structured, nil))
			before := sortedEntries(tab)
			items := []Item{{Host: p, Type: To}, {Host: q, Type: To, Always: true}, {Host: x, Type: To}}
			switch fail {
			case "alloc":
				f.failAt = f.calls + 2 // copyin q (always), then alloc x
			case "copyin":
				f.failAt = f.calls + 3
			case "always copyin":
				f.failAt = f.calls + 1
			}
			require.ErrorIs(t, tab.Enter(f, items, Dynamic, nil), errInjected)
			require.Equal(t, before, sortedEntries(tab), "entries after a failed enter data")
			checkConsistent(t, tab, f)
			f.failAt = 0
			require.NoError(t, tab.Exit(f, []Item{{Host: q, Type: From}}, Dynamic))
			require.False(t, tab.IsPresent(q), "q is still present after its one exit data")
			require.NoError(t, tab.Exit(f, []Item{{Host: p, Type: Release}}, Dynamic))
			e := entryAt(t, tab, p)
			assert.Equal(t, 0, e.Dynamic, "p after its one exit data: %v", e)
			assert.Equal(t, 1, e.Structured, "p after its one exit data: %v", e)
		})
	}
}

// A structured enter that fails on its last item undoes exactly what it
// did: items before it lose the count they gained, and an item already
// present that the call had not reached yet is untouched.
func TestFailedEnterUndoesOnlyItsItems(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 300)
	p, x, q := mem[0:100], mem[100:200], mem[200:300]
	require.NoError(t, tab.Enter(f, []Item{{Host: p, Type: To}, {Host: q, Type: To}}, Dynamic, nil))
	require.NoError(t, tab.Enter(f, []Item{{Host: q, Type: Alloc}}, Structured, nil))
	before := sortedEntries(tab)
	f.failAt = f.calls + 1 // the alloc of x
	err := tab.Enter(f, []Item{{Host: p, Type: To}, {Host: x, Type: To}, {Host: q, Type: To}}, Structured, nil)
	require.ErrorIs(t, err, errInjected)
	assert.Equal(t, before, sortedEntries(tab), "entries")
}

// A target exit data whose copy back fails, or whose free fails twice,
// returns the error and leaves the item mapped with the counts it had
// before the call, so that the program can retry the same exit; the other
// items of the construct are still unmapped.
func TestFailedExitDataRestoresCounts(t *testing.T) {
	for _, c := range []struct {
		name  string
		ty    Type
		count int // dynamic count before the exit
		ops   func(f *fakeOps) Ops
	}{
		{"copy back fails", From, 1, func(f *fakeOps) Ops { f.failAt = f.calls + 1; return f }},
		{"free fails twice", From, 1, func(f *fakeOps) Ops { return failFree{f} }},
		{"delete, free fails twice", Delete, 2, func(f *fakeOps) Ops { return failFree{f} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, tab := newFake(), New(dev)
			x := fill(make([]byte, 64), 1)
			for range c.count {
				require.NoError(t, tab.Enter(f, []Item{{Host: x, Type: To}}, Dynamic, nil))
			}
			before := sortedEntries(tab)
			items := []Item{{Host: x, Type: c.ty, Name: "x"}}
			err := tab.Exit(c.ops(f), items, Dynamic)
			require.Error(t, err, "want the failure")
			require.ErrorContains(t, err, "(x)", "the failure names x")
			require.ErrorContains(t, err, "stays present", "the failure says the mapping stays present")
			require.Equal(t, before, sortedEntries(tab), "entries after the failed exit, want as before")
			checkConsistent(t, tab, f)
			f.failAt = 0
			require.NoError(t, tab.Exit(f, items, Dynamic))
			require.False(t, tab.IsPresent(x), "the retried exit did not unmap")
			checkConsistent(t, tab, f)
		})
	}
}

// target update from whose copy fails reports it.
func TestUpdateFromFailure(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 64)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Dynamic, nil))
	f.take()
	f.failAt = f.calls + 1
	err := tab.Update(f, []Item{{Host: a, Type: From, Name: "a"}})
	assert.ErrorIs(t, err, errInjected, "want the failed copy from the device")
	assert.ErrorContains(t, err, "from [", "want the failed copy from the device")
}

// Leaving a target region at the end of a target data region whose item
// was also mapped by enter data: the structured count goes from 1 to 0,
// never below, and the entry stays for its dynamic reference.
func TestStructuredExitNeverBelowZero(t *testing.T) {
	f, tab := newFake(), New(dev)
	x := make([]byte, 64)
	require.NoError(t, tab.Enter(f, []Item{{Host: x, Type: To}}, Dynamic, nil))
	// A structured exit of an item no structured map holds (a program
	// error the table tolerates): nothing changes.
	require.NoError(t, tab.Exit(f, []Item{{Host: x, Type: From}}, Structured))
	e := entryAt(t, tab, x)
	assert.Equal(t, 0, e.Structured, "entry %v", e)
	assert.Equal(t, 1, e.Dynamic, "entry %v", e)
	require.NoError(t, tab.Enter(f, []Item{{Host: x, Type: To}}, Structured, nil))
	require.NoError(t, tab.Exit(f, []Item{{Host: x, Type: From}}, Structured))
	e = entryAt(t, tab, x)
	assert.Equal(t, 0, e.Structured, "entry %v", e)
	assert.Equal(t, 1, e.Dynamic, "entry %v", e)
	require.NoError(t, tab.Exit(f, []Item{{Host: x, Type: From}}, Dynamic))
	require.Equal(t, 0, tab.Len(), "entry left after its last reference")
	checkConsistent(t, tab, f)
}

// Deleting from a table of a thousand entries, in random order, removes
// exactly the entry asked for, at every depth of the tree.
func TestManyEntriesRemoveAnyOrder(t *testing.T) {
	const n = 1000
	f, tab := newFake(), New(dev)
	mem := make([]byte, 8*n)
	for i := 0; i < n; i++ {
		require.NoError(t, tab.Enter(f, []Item{{Host: mem[8*i : 8*i+8], Type: Alloc}}, Dynamic, nil))
	}
	r := rand.New(rand.NewPCG(1000, 21))
	order := r.Perm(n)
	present := make([]bool, n)
	for i := range present {
		present[i] = true
	}
	for k, i := range order {
		require.NoError(t, tab.Exit(f, []Item{{Host: mem[8*i : 8*i+8], Type: Release}}, Dynamic))
		present[i] = false
		if k%97 == 0 || k > n-40 {
			for j := 0; j < n; j++ {
				require.Equal(t, present[j], tab.IsPresent(mem[8*j:8*j+8]), "after %d removals: entry %d present", k+1, j)
			}
			require.Equal(t, n-k-1, tab.Len(), "Len after %d removals", k+1)
		}
	}
	checkConsistent(t, tab, f)
}

// A steady state of constructs that each map and unmap many new items
// (their entries split and merge the table's tree nodes) allocates nothing
// once the pools are warm: nodes and entries are recycled, not leaked to
// the collector and not dropped from the pools' counts.
func TestSteadyStateChurnNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	tab, _ := newBenchTable(1000)
	ops := &nopOps{}
	mem := make([]byte, 16*100)
	items := make([]Item, 100)
	for i := range items {
		items[i] = Item{Host: mem[16*i : 16*i+16], Type: ToFrom}
	}
	ptrs := make([]device.DevicePtr, len(items))
	cycle := func() {
		require.NoError(t, tab.Enter(ops, items, Structured, ptrs))
		require.NoError(t, tab.Exit(ops, items, Structured))
	}
	for range 3 {
		cycle() // warm the pools
	}
	assert.Zero(t, testing.AllocsPerRun(50, cycle), "Enter+Exit of 100 new items: allocations per run")
	assert.Equal(t, 1000, tab.Len(), "entries")
}
