package mapping

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/gompt/gompt/device"
	"unsafe"
)

const dev = "test:0"

func fill(b []byte, v byte) []byte {
	for i := range b {
		b[i] = v + byte(i)
	}
	return b
}

func mustErr(t *testing.T, err error, code device.Code, substr ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %v", code)
	}
	if got := device.CodeOf(err); got != code {
		t.Fatalf("error code %v, want %v: %v", got, code, err)
	}
	for _, s := range substr {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not contain %q", err, s)
		}
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func entriesOf(t *testing.T, tab *Table) string {
	t.Helper()
	var s []string
	for _, e := range tab.Entries() {
		s = append(s, e.String())
	}
	return strings.Join(s, "\n")
}

func TestTypeAndKindNames(t *testing.T) {
	want := map[Type]string{To: "to", From: "from", ToFrom: "tofrom", Alloc: "alloc",
		Release: "release", Delete: "delete", 0: "maptype(0)", 9: "maptype(9)"}
	for ty, s := range want {
		if ty.String() != s {
			t.Errorf("Type(%d).String() = %q, want %q", ty, ty.String(), s)
		}
	}
	if Structured.String() != "structured" || Dynamic.String() != "dynamic" || Kind(7).String() != "kind(7)" {
		t.Errorf("kind names: %v %v %v", Structured, Dynamic, Kind(7))
	}
}

// TestToFromRoundTrip: a new tofrom item is allocated and copied in; the
// device result is copied back and freed on exit.
func TestToFromRoundTrip(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := fill(make([]byte, 4096), 1)
	items := []Item{{Host: a, Type: ToFrom, Name: "a"}}
	ptrs := make([]device.DevicePtr, 1)
	mustOK(t, tab.Enter(f, items, Structured, ptrs))
	f.expect(t, "alloc 4096 -> 0x100000", "copyin 0x100000 4096")
	if ptrs[0] != 0x100000 {
		t.Fatalf("ptr %v, want 0x100000", ptrs[0])
	}
	if tab.Len() != 1 || !tab.IsPresent(a) {
		t.Fatalf("after enter: len %d, present %v", tab.Len(), tab.IsPresent(a))
	}
	d, _ := f.mem(0x100000, 4096)
	if d[7] != 8 {
		t.Fatalf("device byte 7 = %d, want 8 (copied in)", d[7])
	}
	fill(d, 100) // the kernel's result
	mustOK(t, tab.Exit(f, items, Structured))
	f.expect(t, "copyout 0x100000 4096", "free 0x100000 4096")
	if a[0] != 100 || a[4095] != (100+4095)%256 {
		t.Fatalf("host not updated from device: a[0]=%d", a[0])
	}
	if tab.Len() != 0 || tab.IsPresent(a) {
		t.Fatalf("after exit: len %d", tab.Len())
	}
	checkConsistent(t, tab, f)
}

func TestMapTypes(t *testing.T) {
	cases := []struct {
		ty        Type
		enter     []string
		exit      []string
		kindEnter Kind
		kindExit  Kind
	}{
		{To, []string{"alloc 64 -> 0x100000", "copyin 0x100000 64"}, []string{"free 0x100000 64"}, Structured, Structured},
		{From, []string{"alloc 64 -> 0x100000"}, []string{"copyout 0x100000 64", "free 0x100000 64"}, Structured, Structured},
		{Alloc, []string{"alloc 64 -> 0x100000"}, []string{"free 0x100000 64"}, Structured, Structured},
		{ToFrom, []string{"alloc 64 -> 0x100000", "copyin 0x100000 64"}, []string{"copyout 0x100000 64", "free 0x100000 64"}, Structured, Structured},
	}
	for _, c := range cases {
		t.Run(c.ty.String(), func(t *testing.T) {
			f, tab := newFake(), New(dev)
			items := []Item{{Host: make([]byte, 64), Type: c.ty}}
			mustOK(t, tab.Enter(f, items, c.kindEnter, nil))
			f.expect(t, c.enter...)
			mustOK(t, tab.Exit(f, items, c.kindExit))
			f.expect(t, c.exit...)
			checkConsistent(t, tab, f)
		})
	}
	// Dynamic: enter data to/alloc, exit data from/release/delete.
	for _, c := range []struct {
		in, out Type
		enter   []string
		exit    []string
	}{
		{To, From, []string{"alloc 64 -> 0x100000", "copyin 0x100000 64"}, []string{"copyout 0x100000 64", "free 0x100000 64"}},
		{Alloc, From, []string{"alloc 64 -> 0x100000"}, []string{"copyout 0x100000 64", "free 0x100000 64"}},
		{To, Release, []string{"alloc 64 -> 0x100000", "copyin 0x100000 64"}, []string{"free 0x100000 64"}},
		{To, Delete, []string{"alloc 64 -> 0x100000", "copyin 0x100000 64"}, []string{"free 0x100000 64"}},
	} {
		t.Run("enter data "+c.in.String()+"/exit data "+c.out.String(), func(t *testing.T) {
			f, tab := newFake(), New(dev)
			h := make([]byte, 64)
			mustOK(t, tab.Enter(f, []Item{{Host: h, Type: c.in}}, Dynamic, nil))
			f.expect(t, c.enter...)
			mustOK(t, tab.Exit(f, []Item{{Host: h, Type: c.out}}, Dynamic))
			f.expect(t, c.exit...)
			if tab.Len() != 0 {
				t.Fatalf("len %d after exit", tab.Len())
			}
		})
	}
}

// TestPresentBumpsCount: a target region inside a target data region finds
// its items present: no allocation or copy, and the copy back happens only
// when the outer region ends.
func TestPresentBumpsCount(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 256)
	data := []Item{{Host: a, Type: ToFrom}}
	mustOK(t, tab.Enter(f, data, Structured, nil))
	f.expect(t, "alloc 256 -> 0x100000", "copyin 0x100000 256")

	region := []Item{{Host: a, Type: ToFrom}}
	ptrs := make([]device.DevicePtr, 1)
	mustOK(t, tab.Enter(f, region, Structured, ptrs))
	f.expect(t) // present: only the count moves
	if ptrs[0] != 0x100000 {
		t.Fatalf("ptr %v", ptrs[0])
	}
	if e := tab.Entries()[0]; e.Structured != 2 || e.Dynamic != 0 {
		t.Fatalf("counts %v, want structured 2", e)
	}
	mustOK(t, tab.Exit(f, region, Structured))
	f.expect(t) // count 2 -> 1: no copy back, no free
	mustOK(t, tab.Exit(f, data, Structured))
	f.expect(t, "copyout 0x100000 256", "free 0x100000 256")
}

func TestAlways(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 128)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.take()
	// always to on a present item copies again; always on alloc does not.
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: ToFrom, Always: true}}, Structured, nil))
	f.expect(t, "copyin 0x100000 128")
	// always from copies out though the count does not reach zero.
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: ToFrom, Always: true}}, Structured))
	f.expect(t, "copyout 0x100000 128")
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: Alloc, Always: true}}, Structured, nil))
	f.expect(t)
	// without always, from on a count that stays positive copies nothing.
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Structured))
	f.expect(t)
	// always on a new item copies once, not twice.
	b := make([]byte, 32)
	mustOK(t, tab.Enter(f, []Item{{Host: b, Type: To, Always: true}}, Structured, nil))
	f.expect(t, "alloc 32 -> 0x101000", "copyin 0x101000 32")
	// always from at the last reference copies once.
	mustOK(t, tab.Exit(f, []Item{{Host: b, Type: From, Always: true}}, Structured))
	f.expect(t, "copyout 0x101000 32", "free 0x101000 32")
	checkConsistent(t, tab, f)
}

// TestStructuredAndDynamicCounts: the two counts are separate; the entry goes
// when both are zero, and only exit of that last reference copies back.
func TestStructuredAndDynamicCounts(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 64)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: ToFrom}}, Structured, nil))
	f.expect(t, "alloc 64 -> 0x100000", "copyin 0x100000 64")
	if e := tab.Entries()[0]; e.Structured != 1 || e.Dynamic != 1 {
		t.Fatalf("counts %v", e)
	}
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: ToFrom}}, Structured))
	f.expect(t) // dynamic count still 1
	if e := tab.Entries()[0]; e.Structured != 0 || e.Dynamic != 1 {
		t.Fatalf("counts %v", e)
	}
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Dynamic))
	f.expect(t, "copyout 0x100000 64", "free 0x100000 64")

	// The other order: the structured reference is the last.
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Structured, nil))
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.take()
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Dynamic))
	f.expect(t)
	// exit data from when the dynamic count is already zero: nothing to
	// decrement, nothing copied, not an error (the item is present).
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Dynamic))
	f.expect(t)
	if e := tab.Entries()[0]; e.Structured != 1 || e.Dynamic != 0 {
		t.Fatalf("counts %v", e)
	}
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Structured))
	f.expect(t, "copyout 0x101000 64", "free 0x101000 64")
	checkConsistent(t, tab, f)
}

func TestReleaseAndDelete(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 64)
	for i := 0; i < 3; i++ {
		mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	}
	f.take()
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: Release}}, Dynamic))
	f.expect(t)
	if e := tab.Entries()[0]; e.Dynamic != 2 {
		t.Fatalf("release: %v", e)
	}
	// delete zeroes the dynamic count at once, but a structured reference
	// keeps the entry.
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Structured, nil))
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: Delete}}, Dynamic))
	f.expect(t)
	if e := tab.Entries()[0]; e.Dynamic != 0 || e.Structured != 1 {
		t.Fatalf("delete with a structured reference: %v", e)
	}
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: Alloc}}, Structured))
	f.expect(t, "free 0x100000 64")

	// delete from a dynamic count of 3: one exit frees without copying.
	for i := 0; i < 3; i++ {
		mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	}
	f.take()
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: Delete}}, Dynamic))
	f.expect(t, "free 0x101000 64")
	checkConsistent(t, tab, f)
}

// TestSubRange: a sub-slice of a mapped range is present, translates to its
// offset, and moves only its own bytes.
func TestSubRange(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := fill(make([]byte, 1000), 0)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To, Name: "a"}}, Dynamic, nil))
	f.take()
	sub := a[100:300]
	ptrs := make([]device.DevicePtr, 2)
	other := make([]byte, 8)
	mustOK(t, tab.Enter(f, []Item{{Host: sub, Type: ToFrom, Always: true}, {Host: other, Type: Alloc}}, Structured, ptrs))
	f.expect(t, "copyin 0x100064 200", "alloc 8 -> 0x101000")
	if ptrs[0] != 0x100000+100 || ptrs[1] != 0x101000 {
		t.Fatalf("ptrs %v", ptrs)
	}
	if p, err := tab.Translate(a[250:251]); err != nil || p != 0x100000+250 {
		t.Fatalf("Translate = %v, %v", p, err)
	}
	if e := entryAt(t, tab, a); e.Structured != 1 || e.Dynamic != 1 || e.Size != 1000 {
		t.Fatalf("enclosing entry %v", e)
	}
	d, _ := f.mem(0x100000, 1000)
	fill(d, 50)
	mustOK(t, tab.Update(f, []Item{{Host: a[10:20], Type: From}}))
	f.expect(t, "copyout 0x10000a 10")
	if a[10] != 60 || a[9] != 9 || a[20] != 20 {
		t.Fatalf("update from moved the wrong bytes: a[9..10,20] = %d %d %d", a[9], a[10], a[20])
	}
	// exit of the whole of the structured map: the entry stays (dynamic 1),
	// always from copies only the sub-range back.
	mustOK(t, tab.Exit(f, []Item{{Host: sub, Type: ToFrom, Always: true}, {Host: other, Type: Alloc}}, Structured))
	f.expect(t, "copyout 0x100064 200", "free 0x101000 8")
	if a[100] != 150 || a[99] != 99 || a[300] != 44 {
		t.Fatalf("always from moved the wrong bytes: %d %d %d", a[99], a[100], a[300])
	}
	// The last reference dropped by a sub-range: it copies that sub-range,
	// then frees the whole buffer.
	mustOK(t, tab.Exit(f, []Item{{Host: a[0:4], Type: From}}, Dynamic))
	f.expect(t, "copyout 0x100000 4", "free 0x100000 1000")
	checkConsistent(t, tab, f)
}

// TestTwoItemsOneEntry: two disjoint sub-ranges of one entry dropping its last
// references in one exit are both copied back (in reverse list order, as
// LLVM's exit) before the buffer is freed once.
func TestTwoItemsOneEntry(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 100)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Dynamic, nil))
	mustOK(t, tab.Enter(f, []Item{{Host: a[:10], Type: To}}, Dynamic, nil))
	f.take()
	d, _ := f.mem(0x100000, 100)
	fill(d, 1)
	mustOK(t, tab.Exit(f, []Item{{Host: a[:10], Type: From}, {Host: a[50:60], Type: From}}, Dynamic))
	f.expect(t, "copyout 0x100032 10", "copyout 0x100000 10", "free 0x100000 100")
	if a[0] != 1 || a[50] != 51 || a[20] != 0 {
		t.Fatalf("copied back %d %d %d", a[0], a[50], a[20])
	}
	checkConsistent(t, tab, f)
}

func TestExtendsPast(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 4096)
	a := mem[1024:2048]
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.take()
	before := entriesOf(t, tab)
	cases := []struct {
		name string
		host []byte
	}{
		{"tail", mem[1500:2500]},
		{"head", mem[512:1100]},
		{"superset", mem[0:4096]},
		{"same start, longer", mem[1024:2049]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := fmt.Sprintf("map %s extends past present mapping %s on test:0", rng(c.host), rng(a))
			mustErr(t, tab.Enter(f, []Item{{Host: c.host, Type: ToFrom}}, Structured, nil), device.CodeInvalidArgument, want)
			mustErr(t, tab.Exit(f, []Item{{Host: c.host, Type: From}}, Structured), device.CodeInvalidArgument, want)
			mustErr(t, tab.Enter(f, []Item{{Host: c.host, Type: To}}, Dynamic, nil), device.CodeInvalidArgument,
				"target enter data: "+want)
			mustErr(t, tab.Update(f, []Item{{Host: c.host, Type: To}}), device.CodeInvalidArgument,
				fmt.Sprintf("target update: to %s extends past present mapping %s on test:0", rng(c.host), rng(a)))
			_, err := tab.Translate(c.host)
			mustErr(t, err, device.CodeInvalidArgument,
				fmt.Sprintf("translate %s extends past present mapping %s on test:0", rng(c.host), rng(a)))
			if tab.IsPresent(c.host) {
				t.Fatal("IsPresent of a range extending past an entry")
			}
			f.expect(t)
			if got := entriesOf(t, tab); got != before {
				t.Fatalf("table changed:\n%s\nwas\n%s", got, before)
			}
		})
	}
	// The exact form a user sees, with a name.
	err := tab.Enter(f, []Item{{Host: mem[1500:2500], Type: ToFrom, Name: "x[1500:2500]"}}, Structured, nil)
	want := fmt.Sprintf("invalid argument: map %s (x[1500:2500]) extends past present mapping %s on test:0", rng(mem[1500:2500]), rng(a))
	if err == nil || err.Error() != want {
		t.Fatalf("error %q\nwant   %q", err, want)
	}
	// Adjacent ranges do not overlap.
	mustOK(t, tab.Enter(f, []Item{{Host: mem[0:1024], Type: Alloc}, {Host: mem[2048:4096], Type: Alloc}}, Structured, nil))
	if tab.Len() != 3 {
		t.Fatalf("len %d", tab.Len())
	}
}

func TestOverlapWithinConstruct(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 1000)
	err := tab.Enter(f, []Item{{Host: mem[0:100], Type: To, Name: "a"}, {Host: mem[500:600], Type: To},
		{Host: mem[50:150], Type: From, Name: "b"}}, Structured, nil)
	mustErr(t, err, device.CodeInvalidArgument,
		fmt.Sprintf("map %s (a) overlaps map %s (b) in the same construct on test:0", rng(mem[0:100]), rng(mem[50:150])))
	// The same item twice is an overlap too.
	mustErr(t, tab.Exit(f, []Item{{Host: mem[0:10], Type: From}, {Host: mem[0:10], Type: Release}}, Dynamic),
		device.CodeInvalidArgument, "overlaps")
	mustErr(t, tab.Update(f, []Item{{Host: mem[0:10], Type: To}, {Host: mem[5:6], Type: From}}),
		device.CodeInvalidArgument, "target update: to", "overlaps from")
	// Many items (the sorted path): items 3 and 37 overlap.
	var items []Item
	for i := 0; i < 40; i++ {
		items = append(items, Item{Host: mem[i*20 : i*20+10], Type: Alloc, Name: fmt.Sprint("i", i)})
	}
	items[37].Host = mem[65:70] // inside item 3's [60,70)
	mustErr(t, tab.Enter(f, items, Structured, nil), device.CodeInvalidArgument,
		fmt.Sprintf("map %s (i3) overlaps map %s (i37)", rng(mem[60:70]), rng(mem[65:70])))
	items[37].Host = mem[0:1000] // over everything: the first pair in list order
	mustErr(t, tab.Enter(f, items, Structured, nil), device.CodeInvalidArgument, "(i0) overlaps", "(i37)")
	items[37].Host = mem[37*20 : 37*20+10]
	f.expect(t)
	if tab.Len() != 0 {
		t.Fatalf("table changed by rejected constructs: %d entries", tab.Len())
	}
	mustOK(t, tab.Enter(f, items, Structured, nil))
	if tab.Len() != 40 || f.live() != 40 {
		t.Fatalf("40 disjoint items: %d entries, %d buffers", tab.Len(), f.live())
	}
	mustOK(t, tab.Exit(f, items, Structured))
	checkConsistent(t, tab, f)
	if tab.Len() != 0 {
		t.Fatalf("%d entries left", tab.Len())
	}
}

func TestPresentModifier(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := make([]byte, 16), make([]byte, 16)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.take()
	before := entriesOf(t, tab)
	err := tab.Enter(f, []Item{{Host: a, Type: ToFrom, Present: true}, {Host: b, Type: To, Present: true, Name: "b"}}, Structured, nil)
	mustErr(t, err, device.CodeNotFound, fmt.Sprintf("map %s (b) has the present modifier but is not present on test:0", rng(b)))
	mustErr(t, tab.Update(f, []Item{{Host: b, Type: From, Present: true}}), device.CodeNotFound, "present modifier")
	f.expect(t)
	if got := entriesOf(t, tab); got != before {
		t.Fatalf("table changed: %s", got)
	}
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: ToFrom, Present: true}}, Structured, nil))
	f.expect(t)
}

func TestExitNotMapped(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := make([]byte, 16), make([]byte, 16)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.take()
	for _, c := range []struct {
		ty Type
		k  Kind
	}{{Release, Dynamic}, {Delete, Dynamic}, {From, Dynamic}, {ToFrom, Structured}} {
		err := tab.Exit(f, []Item{{Host: a, Type: c.ty}, {Host: b, Type: c.ty, Name: "b"}}, c.k)
		mustErr(t, err, device.CodeNotFound, fmt.Sprintf("map %s (b) (map type %v) is not present on test:0", rng(b), c.ty))
	}
	f.expect(t) // validated first: a was not released either
	if e := tab.Entries()[0]; e.Dynamic != 1 {
		t.Fatalf("a's count changed: %v", e)
	}
}

func TestBadItems(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 16)
	var empty []byte
	for _, c := range []struct {
		name string
		run  func() error
		want []string
	}{
		{"nil host", func() error {
			return tab.Enter(f, []Item{{Host: a, Type: To}, {Host: nil, Type: To, Name: "p"}}, Structured, nil)
		},
			[]string{"list item 1 (p) has an empty host range"}},
		{"empty host", func() error { return tab.Enter(f, []Item{{Host: a[:0], Type: To}}, Dynamic, nil) },
			[]string{"target enter data: list item 0 has an empty host range"}},
		{"empty exit", func() error { return tab.Exit(f, []Item{{Host: empty, Type: From}}, Dynamic) }, []string{"empty host range"}},
		{"empty update", func() error { return tab.Update(f, []Item{{Host: empty, Type: To}}) }, []string{"empty host range"}},
		{"enter data from", func() error { return tab.Enter(f, []Item{{Host: a, Type: From}}, Dynamic, nil) },
			[]string{"target enter data does not accept map type from; accepted: to, alloc"}},
		{"enter data tofrom", func() error { return tab.Enter(f, []Item{{Host: a, Type: ToFrom}}, Dynamic, nil) },
			[]string{"accepted: to, alloc"}},
		{"enter data release", func() error { return tab.Enter(f, []Item{{Host: a, Type: Release}}, Dynamic, nil) },
			[]string{"accepted: to, alloc"}},
		{"target release", func() error { return tab.Enter(f, []Item{{Host: a, Type: Release}}, Structured, nil) },
			[]string{"does not accept map type release; accepted: to, from, tofrom, alloc"}},
		{"target delete", func() error { return tab.Enter(f, []Item{{Host: a, Type: Delete}}, Structured, nil) },
			[]string{"accepted: to, from, tofrom, alloc"}},
		{"exit data to", func() error { return tab.Exit(f, []Item{{Host: a, Type: To}}, Dynamic) },
			[]string{"target exit data does not accept map type to; accepted: from, release, delete"}},
		{"exit data alloc", func() error { return tab.Exit(f, []Item{{Host: a, Type: Alloc}}, Dynamic) },
			[]string{"accepted: from, release, delete"}},
		{"target exit release", func() error { return tab.Exit(f, []Item{{Host: a, Type: Release}}, Structured) },
			[]string{"accepted: to, from, tofrom, alloc"}},
		{"update alloc", func() error { return tab.Update(f, []Item{{Host: a, Type: Alloc}}) },
			[]string{"target update does not accept map type alloc; accepted: to, from"}},
		{"zero type", func() error { return tab.Enter(f, []Item{{Host: a}}, Structured, nil) },
			[]string{"map type maptype(0)"}},
		{"bad kind enter", func() error { return tab.Enter(f, []Item{{Host: a, Type: To}}, 0, nil) },
			[]string{"kind 0 is not valid"}},
		{"bad kind exit", func() error { return tab.Exit(f, []Item{{Host: a, Type: To}}, 3) }, []string{"kind 3 is not valid"}},
		{"ptrs length", func() error {
			return tab.Enter(f, []Item{{Host: a, Type: To}}, Structured, make([]device.DevicePtr, 2))
		}, []string{"1 list items but 2 device pointer slots"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustErr(t, c.run(), device.CodeInvalidArgument, c.want...)
			f.expect(t)
			if tab.Len() != 0 {
				t.Fatalf("table changed: %d entries", tab.Len())
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := fill(make([]byte, 64), 0)
	absent, absent2 := make([]byte, 64), make([]byte, 1)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Dynamic, nil))
	f.take()
	mustOK(t, tab.Update(f, []Item{{Host: absent, Type: To}, {Host: a[8:16], Type: To}, {Host: absent2, Type: From}}))
	f.expect(t, "copyin 0x100008 8") // absent items are skipped
	d, _ := f.mem(0x100000, 64)
	if d[8] != 8 || d[7] != 0 || d[16] != 0 {
		t.Fatalf("update to moved the wrong bytes: %d %d %d", d[7], d[8], d[16])
	}
	d[0] = 99
	mustOK(t, tab.Update(f, []Item{{Host: a, Type: From}}))
	f.expect(t, "copyout 0x100000 64")
	if a[0] != 99 || a[8] != 8 {
		t.Fatalf("update from: %d %d", a[0], a[8])
	}
	if e := tab.Entries()[0]; e.Dynamic != 1 || e.Structured != 0 {
		t.Fatalf("update changed counts: %v", e)
	}
	// A failed copy stops the update.
	f.failAt = f.calls + 1
	err := tab.Update(f, []Item{{Host: a[:8], Type: To, Name: "a"}, {Host: a[8:], Type: To}})
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "target update: to") {
		t.Fatalf("error %v", err)
	}
	f.expect(t, "copyin 0x100000 8 failed")
}

func TestTranslate(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 300)
	a, b := mem[0:100], mem[200:300]
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}, {Host: b, Type: Alloc}}, Structured, nil))
	for _, c := range []struct {
		host []byte
		want device.DevicePtr
	}{{a, 0x100000}, {a[99:], 0x100000 + 99}, {b[:1], 0x101000}, {b[10:20], 0x101000 + 10}} {
		p, err := tab.Translate(c.host)
		if err != nil || p != c.want {
			t.Fatalf("Translate(%s) = %v, %v; want %v", rng(c.host), p, err, c.want)
		}
		if !tab.IsPresent(c.host) {
			t.Fatalf("IsPresent(%s) = false", rng(c.host))
		}
	}
	_, err := tab.Translate(mem[100:200])
	mustErr(t, err, device.CodeNotFound, fmt.Sprintf("translate %s: not present on test:0", rng(mem[100:200])))
	_, err = tab.Translate(mem[150:250])
	mustErr(t, err, device.CodeInvalidArgument, "extends past present mapping "+rng(b))
	_, err = tab.Translate(nil)
	mustErr(t, err, device.CodeInvalidArgument, "empty host range")
	if tab.IsPresent(mem[100:101]) || tab.IsPresent(nil) || tab.IsPresent(mem[99:101]) {
		t.Fatal("IsPresent true for an absent, empty or straddling range")
	}
	_, err = New(dev).Translate(a)
	mustErr(t, err, device.CodeNotFound)
}

func TestAssociate(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 256)
	a := mem[0:128]
	mustOK(t, tab.Associate(a, 0xd000))
	mustOK(t, tab.Associate(a, 0xd000)) // the same association again: no-op
	if tab.Len() != 1 {
		t.Fatalf("len %d", tab.Len())
	}
	e := tab.Entries()[0]
	if !e.Associated || e.Device != 0xd000 || e.Size != 128 || !strings.Contains(e.String(), "dynamic inf") {
		t.Fatalf("entry %v", e)
	}
	mustErr(t, tab.Associate(a, 0xe000), device.CodeInvalidArgument, "overlaps associated range "+rng(a))
	mustErr(t, tab.Associate(mem[64:192], 0xe000), device.CodeInvalidArgument, "overlaps associated range")
	mustErr(t, tab.Associate(mem[128:], 0), device.CodeInvalidArgument, "nil device pointer")
	mustErr(t, tab.Associate(nil, 0xe000), device.CodeInvalidArgument, "empty host range")

	// Map clauses find it present: no allocation, and with no always, no copy.
	ptrs := make([]device.DevicePtr, 1)
	mustOK(t, tab.Enter(f, []Item{{Host: a[16:32], Type: ToFrom}}, Structured, ptrs))
	if ptrs[0] != 0xd000+16 {
		t.Fatalf("ptr %v", ptrs[0])
	}
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.expect(t)
	mustErr(t, tab.Disassociate(a), device.CodeInvalidArgument, "still in use by 1 structured map")
	mustOK(t, tab.Exit(f, []Item{{Host: a[16:32], Type: ToFrom}}, Structured))
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: Delete}}, Dynamic))
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Dynamic))
	f.expect(t) // never copied back or freed by map clauses
	if tab.Len() != 1 {
		t.Fatal("map clauses removed an associated entry")
	}

	// Errors of disassociate.
	mustErr(t, tab.Disassociate(mem[128:]), device.CodeNotFound, "nothing is associated there")
	mustErr(t, tab.Disassociate(a[8:]), device.CodeInvalidArgument, "does not start an associated range")
	mustErr(t, tab.Disassociate(nil), device.CodeInvalidArgument, "empty host range")
	b := mem[128:]
	mustOK(t, tab.Enter(f, []Item{{Host: b, Type: To}}, Dynamic, nil))
	mustErr(t, tab.Disassociate(b), device.CodeInvalidArgument, "was mapped by a map clause")
	mustErr(t, tab.Associate(b, 0xe000), device.CodeInvalidArgument, "overlaps present mapping")
	mustOK(t, tab.Exit(f, []Item{{Host: b, Type: Release}}, Dynamic))
	f.take()

	mustOK(t, tab.Disassociate(a[:1])) // a prefix names the association, as a C pointer does
	f.expect(t)                        // the table does not free associated memory
	if tab.Len() != 0 || tab.IsPresent(a) {
		t.Fatal("still present after disassociate")
	}
	checkConsistent(t, tab, f)
}

func TestAssociateAlwaysFrom(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 64)
	p, _ := f.Alloc(&Item{Host: a}, 64) // memory the user owns
	f.take()
	mustOK(t, tab.Associate(a, p))
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: ToFrom, Always: true}}, Structured, nil))
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: ToFrom, Always: true}}, Structured))
	f.expect(t, "copyin 0x100000 64", "copyout 0x100000 64")
	mustOK(t, tab.Disassociate(a))
	if f.live() != 1 {
		t.Fatal("the table freed associated memory")
	}
}

func TestAllocNilPointer(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := make([]byte, 8), make([]byte, 8)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Structured, nil))
	f.take()
	f.zero = true
	mustErr(t, tab.Enter(f, []Item{{Host: b, Type: To}}, Structured, nil), device.CodeOutOfResources, "nil device pointer")
	f.expect(t, "alloc 8 -> 0")
	if tab.Len() != 1 {
		t.Fatalf("len %d", tab.Len())
	}
}

func TestEntries(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 64)
	mustOK(t, tab.Enter(f, []Item{{Host: mem[32:], Type: To}, {Host: mem[:16], Type: Alloc}}, Structured, nil))
	mustOK(t, tab.Enter(f, []Item{{Host: mem[:16], Type: To}}, Dynamic, nil))
	es := tab.Entries()
	want := []Entry{
		{Host: addr(mem), Size: 16, Device: 0x101000, Structured: 1, Dynamic: 1},
		{Host: addr(mem[32:]), Size: 32, Device: 0x100000, Structured: 1},
	}
	if len(es) != 2 || es[0] != want[0] || es[1] != want[1] {
		t.Fatalf("Entries = %v\nwant %v", es, want)
	}
	if s := es[0].String(); s != fmt.Sprintf("%s -> 0x101000 (16 bytes) structured 1 dynamic 1", rng(mem[:16])) {
		t.Fatalf("String = %q", s)
	}
}

// TestHostKeptAlive: the table keeps mapped host memory alive and lets it go
// once unmapped.
func TestHostKeptAlive(t *testing.T) {
	f, tab := newFake(), New(dev)
	mapIt := func(unmap bool) weak.Pointer[byte] {
		h := make([]byte, 64<<10)
		items := []Item{{Host: h, Type: To}}
		mustOK(t, tab.Enter(f, items, Dynamic, nil))
		if unmap {
			mustOK(t, tab.Exit(f, []Item{{Host: h, Type: Release}}, Dynamic))
		}
		return weak.Make(&h[0])
	}
	mapped := mapIt(false)
	unmapped := mapIt(true)
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	if mapped.Value() == nil {
		t.Fatal("mapped host memory was collected")
	}
	if unmapped.Value() != nil {
		t.Fatal("unmapped host memory is still reachable (the table kept it)")
	}
	runtime.KeepAlive(tab)
}

func TestErrorIsDeviceError(t *testing.T) {
	tab := New(dev)
	_, err := tab.Translate(make([]byte, 1))
	var de *device.Error
	if !errors.As(err, &de) || !errors.Is(err, device.ErrNotFound) {
		t.Fatalf("%T %v is not a *device.Error matching ErrNotFound", err, err)
	}
}

// entryAt returns the entry starting at host's start.
func entryAt(t *testing.T, tab *Table, host []byte) Entry {
	t.Helper()
	for _, e := range tab.Entries() {
		if e.Host == addr(host) {
			return e
		}
	}
	t.Fatalf("no entry at %s", rng(host))
	return Entry{}
}

// DeviceExtent finds the mapped buffer holding a device address and counts
// the bytes to its end; addresses outside every buffer are not found.
func TestDeviceExtent(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := make([]byte, 4096), make([]byte, 100)
	ptrs := make([]device.DevicePtr, 2)
	mustOK(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}, {Host: b, Type: Alloc}}, Dynamic, ptrs))
	for _, c := range []struct {
		p    device.DevicePtr
		n    int
		want bool
	}{
		{ptrs[0], 4096, true}, {ptrs[0] + 4095, 1, true}, {ptrs[1] + 10, 90, true},
		{ptrs[0] + 4096 + 0x100000, 0, false}, {0, 0, false},
	} {
		if n, ok := tab.DeviceExtent(c.p); n != c.n || ok != c.want {
			t.Errorf("DeviceExtent(%v) = %d, %v; want %d, %v", c.p, n, ok, c.n, c.want)
		}
	}
	mustOK(t, tab.Exit(f, []Item{{Host: a, Type: Delete}, {Host: b, Type: Delete}}, Dynamic))
	if _, ok := tab.DeviceExtent(ptrs[0]); ok {
		t.Error("DeviceExtent found a buffer after it was unmapped")
	}
}

// TestSpan: a slice's host range starts at its first element, also when it
// is empty (b[i:i] starts where b[i] is); a nil slice's is [0, 0).
func TestSpan(t *testing.T) {
	b := make([]byte, 8)
	base := uintptr(unsafe.Pointer(&b[0]))
	for _, c := range []struct {
		name       string
		s          []byte
		start, end uintptr
	}{
		{"nil", nil, 0, 0},
		{"whole", b, base, base + 8},
		{"middle", b[2:5], base + 2, base + 5},
		{"empty at 3", b[3:3], base + 3, base + 3},
	} {
		if s, e := Span(c.s); s != c.start || e != c.end {
			t.Errorf("Span(%s) = [%#x,%#x), want [%#x,%#x)", c.name, s, e, c.start, c.end)
		}
	}
	if s, e := Span(b[8:]); s != e || s == 0 {
		t.Errorf("Span(b[8:]) = [%#x,%#x), want an empty range at a non-nil address", s, e)
	}
}
