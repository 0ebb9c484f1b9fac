package mapping

// Behaviour a program relies on that mutation testing (issue 21,
// ci/mutate) found no test pinning: each test here fails for some small
// change to the code that the rest of the suite let through.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
)

// Every Type value prints without panicking: the valid ones by their
// OpenMP name, every other one (as read from a bad program or a tool) as
// maptype(N), including the first value past the last name.
func TestTypeStringNeverPanics(t *testing.T) {
	for v := 0; v < 256; v++ {
		ty := Type(v)
		s := ty.String()
		switch {
		case v >= int(To) && v <= int(Delete):
			if s != typeNames[v] || strings.HasPrefix(s, "maptype") {
				t.Errorf("Type(%d).String() = %q, want its name", v, s)
			}
		case s != fmt.Sprintf("maptype(%d)", v):
			t.Errorf("Type(%d).String() = %q, want maptype(%d)", v, s, v)
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
		{"bad type", []Item{{Host: a, Type: Type(7)}}},
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
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: CheckEnter(%v) = %v; Enter says %v", c.name, k, got, want)
			}
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
			if enterItems != nil && fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: CheckExit(%v) = %v; Exit says %v", c.name, k, got, want)
			}
		}
		want := New(dev).Update(newFake(), c.items)
		if got := CheckUpdate(dev, c.items); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: CheckUpdate = %v; Update says %v", c.name, got, want)
		}
	}
	// Sanity of the cases themselves: each kind of bad input is refused.
	if CheckEnter(dev, Dynamic, cases[0].items) == nil || CheckEnter(dev, Structured, cases[0].items) != nil {
		t.Error("enter data must refuse map(from:), a target region accept it")
	}
	mustErr(t, CheckEnter(dev, Structured, cases[1].items), device.CodeInvalidArgument, "list item 1 (nothing) has an empty host range")
	mustErr(t, CheckExit(dev, Dynamic, cases[2].items), device.CodeInvalidArgument, "does not accept map type maptype(7)")
	mustErr(t, CheckUpdate(dev, cases[3].items), device.CodeInvalidArgument, "accepted: to, from")
	mustErr(t, CheckEnter(dev, Structured, cases[6].items), device.CodeInvalidArgument, "overlaps")
	mustOK(t, CheckEnter(dev, Structured, cases[7].items))
	mustOK(t, CheckExit(dev, Structured, cases[7].items))
	mustOK(t, CheckUpdate(dev, cases[7].items))
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
			if err := tab.Enter(f, items, Structured, nil); err != nil {
				t.Fatalf("%d adjacent items: %v", n, err)
			}
			mustOK(t, tab.Exit(f, items, Structured))
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
			if CheckEnter(dev, Structured, bad) == nil {
				t.Fatalf("%d items: CheckEnter accepted an overlap", n)
			}
		}
	}
}

// An address one past the end of a mapped buffer is not in it.
func TestDeviceExtentEnd(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 100)
	ptrs := make([]device.DevicePtr, 1)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Dynamic, ptrs))
	if n, ok := tab.DeviceExtent(ptrs[0] + 99); n != 1 || !ok {
		t.Errorf("last byte: %d, %v", n, ok)
	}
	if n, ok := tab.DeviceExtent(ptrs[0] + 100); ok {
		t.Errorf("one past the end: %d bytes found", n)
	}
	if _, ok := tab.DeviceExtent(ptrs[0] - 1); ok {
		t.Error("one before the start found")
	}
}

// A failed target enter data changes no count: an item already present
// keeps its dynamic count, so one exit data still unmaps it.
func TestFailedEnterDataKeepsCounts(t *testing.T) {
	for _, fail := range []string{"alloc", "copyin", "always copyin"} {
		t.Run(fail, func(t *testing.T) {
			f, tab := newFake(), New(dev)
			mem := make([]byte, 300)
			p, q, x := mem[0:100], mem[100:200], mem[200:300]
			mustOK(t, tab.Enter(f, []Item{{Host: p, Type: To}, {Host: q, Type: To}}, Dynamic, nil))
			mustOK(t, tab.Enter(f, []Item{{Host: p, Type: Alloc}}, Structured, nil))
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
			if err := tab.Enter(f, items, Dynamic, nil); !errors.Is(err, errInjected) {
				t.Fatalf("error %v", err)
			}
			if got := sortedEntries(tab); !slices.Equal(got, before) {
				t.Fatalf("entries after a failed enter data\n%v\nwant\n%v", got, before)
			}
			checkConsistent(t, tab, f)
			f.failAt = 0
			mustOK(t, tab.Exit(f, []Item{{Host: q, Type: From}}, Dynamic))
			if tab.IsPresent(q) {
				t.Fatal("q is still present after its one exit data")
			}
			mustOK(t, tab.Exit(f, []Item{{Host: p, Type: Release}}, Dynamic))
			if e := entryAt(t, tab, p); e.Dynamic != 0 || e.Structured != 1 {
				t.Fatalf("p after its one exit data: %v", e)
			}
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
	mustOK(t, tab.Enter(f, []Item{{Host: p, Type: To}, {Host: q, Type: To}}, Dynamic, nil))
	mustOK(t, tab.Enter(f, []Item{{Host: q, Type: Alloc}}, Structured, nil))
	before := sortedEntries(tab)
	f.failAt = f.calls + 1 // the alloc of x
	err := tab.Enter(f, []Item{{Host: p, Type: To}, {Host: x, Type: To}, {Host: q, Type: To}}, Structured, nil)
	if !errors.Is(err, errInjected) {
		t.Fatalf("error %v", err)
	}
	if got := sortedEntries(tab); !slices.Equal(got, before) {
		t.Fatalf("entries\n%v\nwant\n%v", got, before)
	}
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
				mustOK(t, tab.Enter(f, []Item{{Host: x, Type: To}}, Dynamic, nil))
			}
			before := sortedEntries(tab)
			items := []Item{{Host: x, Type: c.ty, Name: "x"}}
			err := tab.Exit(c.ops(f), items, Dynamic)
			if err == nil || !strings.Contains(err.Error(), "(x)") || !strings.Contains(err.Error(), "stays present") {
				t.Fatalf("error %v; want the failure, naming x and saying the mapping stays present", err)
			}
			if got := sortedEntries(tab); !slices.Equal(got, before) {
				t.Fatalf("entries after the failed exit\n%v\nwant as before\n%v", got, before)
			}
			checkConsistent(t, tab, f)
			f.failAt = 0
			mustOK(t, tab.Exit(f, items, Dynamic))
			if tab.IsPresent(x) {
				t.Fatal("the retried exit did not unmap")
			}
			checkConsistent(t, tab, f)
		})
	}
}

// target update from whose copy fails reports it.
func TestUpdateFromFailure(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 64)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Dynamic, nil))
	f.take()
	f.failAt = f.calls + 1
	err := tab.Update(f, []Item{{Host: a, Type: From, Name: "a"}})
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "from [") {
		t.Fatalf("error %v; want the failed copy from the device", err)
	}
}

// Leaving a target region at the end of a target data region whose item
// was also mapped by enter data: the structured count goes from 1 to 0,
// never below, and the entry stays for its dynamic reference.
func TestStructuredExitNeverBelowZero(t *testing.T) {
	f, tab := newFake(), New(dev)
	x := make([]byte, 64)
	mustOK(t, tab.Enter(f, []Item{{Host: x, Type: To}}, Dynamic, nil))
	// A structured exit of an item no structured map holds (a program
	// error the table tolerates): nothing changes.
	mustOK(t, tab.Exit(f, []Item{{Host: x, Type: From}}, Structured))
	if e := entryAt(t, tab, x); e.Structured != 0 || e.Dynamic != 1 {
		t.Fatalf("entry %v", e)
	}
	mustOK(t, tab.Enter(f, []Item{{Host: x, Type: To}}, Structured, nil))
	mustOK(t, tab.Exit(f, []Item{{Host: x, Type: From}}, Structured))
	if e := entryAt(t, tab, x); e.Structured != 0 || e.Dynamic != 1 {
		t.Fatalf("entry %v", e)
	}
	mustOK(t, tab.Exit(f, []Item{{Host: x, Type: From}}, Dynamic))
	if tab.Len() != 0 {
		t.Fatal("entry left after its last reference")
	}
	checkConsistent(t, tab, f)
}

// Deleting from a table of a thousand entries, in random order, removes
// exactly the entry asked for, at every depth of the tree.
func TestManyEntriesRemoveAnyOrder(t *testing.T) {
	const n = 1000
	f, tab := newFake(), New(dev)
	mem := make([]byte, 8*n)
	for i := 0; i < n; i++ {
		mustOK(t, tab.Enter(f, []Item{{Host: mem[8*i : 8*i+8], Type: Alloc}}, Dynamic, nil))
	}
	r := rand.New(rand.NewPCG(1000, 21))
	order := r.Perm(n)
	present := make([]bool, n)
	for i := range present {
		present[i] = true
	}
	for k, i := range order {
		mustOK(t, tab.Exit(f, []Item{{Host: mem[8*i : 8*i+8], Type: Release}}, Dynamic))
		present[i] = false
		if k%97 == 0 || k > n-40 {
			for j := 0; j < n; j++ {
				if tab.IsPresent(mem[8*j:8*j+8]) != present[j] {
					t.Fatalf("after %d removals: entry %d present %v, want %v", k+1, j, !present[j], present[j])
				}
			}
			if tab.Len() != n-k-1 {
				t.Fatalf("Len %d after %d removals", tab.Len(), k+1)
			}
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
		if err := tab.Enter(ops, items, Structured, ptrs); err != nil {
			t.Fatal(err)
		}
		if err := tab.Exit(ops, items, Structured); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		cycle() // warm the pools
	}
	if n := testing.AllocsPerRun(50, cycle); n != 0 {
		t.Errorf("Enter+Exit of 100 new items: %v allocations per run, want 0", n)
	}
	if tab.Len() != 1000 {
		t.Fatalf("len %d", tab.Len())
	}
}
