package mapping

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.Error(t, err, "want an error of code %v", code)
	require.Equal(t, code, device.CodeOf(err), "error code of %v", err)
	for _, s := range substr {
		require.ErrorContains(t, err, s)
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
		Release: "release", Delete: "delete", FromDelete: "from+delete", 0: "maptype(0)", 9: "maptype(9)"}
	for ty, s := range want {
		assert.Equal(t, s, ty.String(), "Type(%d).String()", ty)
	}
	assert.Equal(t, "structured", Structured.String(), "kind name")
	assert.Equal(t, "dynamic", Dynamic.String(), "kind name")
	assert.Equal(t, "kind(7)", Kind(7).String(), "kind name")
}

// TestToFromRoundTrip: a new tofrom item is allocated and copied in; the
// device result is copied back and freed on exit.
func TestToFromRoundTrip(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := fill(make([]byte, 4096), 1)
	items := []Item{{Host: a, Type: ToFrom, Name: "a"}}
	ptrs := make([]device.DevicePtr, 1)
	require.NoError(t, tab.Enter(f, items, Structured, ptrs))
	f.expect(t, "alloc 4096 -> 0x100000", "copyin 0x100000 4096")
	assert.Equal(t, device.DevicePtr(0x100000), ptrs[0], "device pointer")
	require.Equal(t, 1, tab.Len(), "entries after enter")
	require.True(t, tab.IsPresent(a), "present after enter")
	d, _ := f.mem(0x100000, 4096)
	require.Equal(t, byte(8), d[7], "device byte 7 (copied in)")
	fill(d, 100) // the kernel's result
	require.NoError(t, tab.Exit(f, items, Structured))
	f.expect(t, "copyout 0x100000 4096", "free 0x100000 4096")
	assert.Equal(t, byte(100), a[0], "host a[0] updated from device")
	assert.Equal(t, byte((100+4095)%256), a[4095], "host a[4095] updated from device")
	assert.Equal(t, 0, tab.Len(), "entries after exit")
	assert.False(t, tab.IsPresent(a), "present after exit")
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
			require.NoError(t, tab.Enter(f, items, c.kindEnter, nil))
			f.expect(t, c.enter...)
			require.NoError(t, tab.Exit(f, items, c.kindExit))
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
		{To, FromDelete, []string{"alloc 64 -> 0x100000", "copyin 0x100000 64"}, []string{"copyout 0x100000 64", "free 0x100000 64"}},
	} {
		t.Run("enter data "+c.in.String()+"/exit data "+c.out.String(), func(t *testing.T) {
			f, tab := newFake(), New(dev)
			h := make([]byte, 64)
			require.NoError(t, tab.Enter(f, []Item{{Host: h, Type: c.in}}, Dynamic, nil))
			f.expect(t, c.enter...)
			require.NoError(t, tab.Exit(f, []Item{{Host: h, Type: c.out}}, Dynamic))
			f.expect(t, c.exit...)
			assert.Equal(t, 0, tab.Len(), "entries after exit")
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
	require.NoError(t, tab.Enter(f, data, Structured, nil))
	f.expect(t, "alloc 256 -> 0x100000", "copyin 0x100000 256")

	region := []Item{{Host: a, Type: ToFrom}}
	ptrs := make([]device.DevicePtr, 1)
	require.NoError(t, tab.Enter(f, region, Structured, ptrs))
	f.expect(t) // present: only the count moves
	assert.Equal(t, device.DevicePtr(0x100000), ptrs[0], "device pointer")
	e := tab.Entries()[0]
	assert.Equal(t, 2, e.Structured, "structured count of %v", e)
	assert.Equal(t, 0, e.Dynamic, "dynamic count of %v", e)
	require.NoError(t, tab.Exit(f, region, Structured))
	f.expect(t) // count 2 -> 1: no copy back, no free
	require.NoError(t, tab.Exit(f, data, Structured))
	f.expect(t, "copyout 0x100000 256", "free 0x100000 256")
}

func TestAlways(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 128)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.take()
	// always to on a present item copies again; always on alloc does not.
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: ToFrom, Always: true}}, Structured, nil))
	f.expect(t, "copyin 0x100000 128")
	// always from copies out though the count does not reach zero.
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: ToFrom, Always: true}}, Structured))
	f.expect(t, "copyout 0x100000 128")
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: Alloc, Always: true}}, Structured, nil))
	f.expect(t)
	// without always, from on a count that stays positive copies nothing.
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Structured))
	f.expect(t)
	// always on a new item copies once, not twice.
	b := make([]byte, 32)
	require.NoError(t, tab.Enter(f, []Item{{Host: b, Type: To, Always: true}}, Structured, nil))
	f.expect(t, "alloc 32 -> 0x101000", "copyin 0x101000 32")
	// always from at the last reference copies once.
	require.NoError(t, tab.Exit(f, []Item{{Host: b, Type: From, Always: true}}, Structured))
	f.expect(t, "copyout 0x101000 32", "free 0x101000 32")
	checkConsistent(t, tab, f)
}

// TestStructuredAndDynamicCounts: the two counts are separate; the entry goes
// when both are zero, and only exit of that last reference copies back.
func TestStructuredAndDynamicCounts(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 64)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: ToFrom}}, Structured, nil))
	f.expect(t, "alloc 64 -> 0x100000", "copyin 0x100000 64")
	e := tab.Entries()[0]
	assert.Equal(t, 1, e.Structured, "structured count of %v", e)
	assert.Equal(t, 1, e.Dynamic, "dynamic count of %v", e)
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: ToFrom}}, Structured))
	f.expect(t) // dynamic count still 1
	e = tab.Entries()[0]
	assert.Equal(t, 0, e.Structured, "structured count of %v", e)
	assert.Equal(t, 1, e.Dynamic, "dynamic count of %v", e)
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Dynamic))
	f.expect(t, "copyout 0x100000 64", "free 0x100000 64")

	// The other order: the structured reference is the last.
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Structured, nil))
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.take()
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Dynamic))
	f.expect(t)
	// exit data from when the dynamic count is already zero: nothing to
	// decrement, nothing copied, not an error (the item is present).
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Dynamic))
	f.expect(t)
	e = tab.Entries()[0]
	assert.Equal(t, 1, e.Structured, "structured count of %v", e)
	assert.Equal(t, 0, e.Dynamic, "dynamic count of %v", e)
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Structured))
	f.expect(t, "copyout 0x101000 64", "free 0x101000 64")
	checkConsistent(t, tab, f)
}

func TestReleaseAndDelete(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 64)
	for i := 0; i < 3; i++ {
		require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	}
	f.take()
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: Release}}, Dynamic))
	f.expect(t)
	e := tab.Entries()[0]
	assert.Equal(t, 2, e.Dynamic, "dynamic count after release: %v", e)
	// delete zeroes the dynamic count at once, but a structured reference
	// keeps the entry.
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Structured, nil))
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: Delete}}, Dynamic))
	f.expect(t)
	e = tab.Entries()[0]
	assert.Equal(t, 0, e.Dynamic, "dynamic count after delete with a structured reference: %v", e)
	assert.Equal(t, 1, e.Structured, "structured count after delete with a structured reference: %v", e)
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: Alloc}}, Structured))
	f.expect(t, "free 0x100000 64")

	// delete from a dynamic count of 3: one exit frees without copying.
	for i := 0; i < 3; i++ {
		require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	}
	f.take()
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: Delete}}, Dynamic))
	f.expect(t, "free 0x101000 64")
	checkConsistent(t, tab, f)
}

// TestSubRange: a sub-slice of a mapped range is present, translates to its
// offset, and moves only its own bytes.
func TestSubRange(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := fill(make([]byte, 1000), 0)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To, Name: "a"}}, Dynamic, nil))
	f.take()
	sub := a[100:300]
	ptrs := make([]device.DevicePtr, 2)
	other := make([]byte, 8)
	require.NoError(t, tab.Enter(f, []Item{{Host: sub, Type: ToFrom, Always: true}, {Host: other, Type: Alloc}}, Structured, ptrs))
	f.expect(t, "copyin 0x100064 200", "alloc 8 -> 0x101000")
	assert.Equal(t, device.DevicePtr(0x100000+100), ptrs[0], "device pointer of sub")
	assert.Equal(t, device.DevicePtr(0x101000), ptrs[1], "device pointer of other")
	p, err := tab.Translate(a[250:251])
	require.NoError(t, err, "Translate")
	assert.Equal(t, device.DevicePtr(0x100000+250), p, "Translate")
	e := entryAt(t, tab, a)
	assert.Equal(t, 1, e.Structured, "enclosing entry %v", e)
	assert.Equal(t, 1, e.Dynamic, "enclosing entry %v", e)
	assert.Equal(t, 1000, e.Size, "enclosing entry %v", e)
	d, _ := f.mem(0x100000, 1000)
	fill(d, 50)
	require.NoError(t, tab.Update(f, []Item{{Host: a[10:20], Type: From}}))
	f.expect(t, "copyout 0x10000a 10")
	assert.Equal(t, byte(60), a[10], "update from: a[10]")
	assert.Equal(t, byte(9), a[9], "update from moved a byte before its range")
	assert.Equal(t, byte(20), a[20], "update from moved a byte past its range")
	// exit of the whole of the structured map: the entry stays (dynamic 1),
	// always from copies only the sub-range back.
	require.NoError(t, tab.Exit(f, []Item{{Host: sub, Type: ToFrom, Always: true}, {Host: other, Type: Alloc}}, Structured))
	f.expect(t, "copyout 0x100064 200", "free 0x101000 8")
	assert.Equal(t, byte(150), a[100], "always from: a[100]")
	assert.Equal(t, byte(99), a[99], "always from moved a byte before its range")
	assert.Equal(t, byte(44), a[300], "always from moved a byte past its range")
	// The last reference dropped by a sub-range: it copies that sub-range,
	// then frees the whole buffer.
	require.NoError(t, tab.Exit(f, []Item{{Host: a[0:4], Type: From}}, Dynamic))
	f.expect(t, "copyout 0x100000 4", "free 0x100000 1000")
	checkConsistent(t, tab, f)
}

// TestTwoItemsOneEntry: two disjoint sub-ranges of one entry dropping its last
// references in one exit are both copied back (in reverse list order, as
// LLVM's exit) before the buffer is freed once.
func TestTwoItemsOneEntry(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 100)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Dynamic, nil))
	require.NoError(t, tab.Enter(f, []Item{{Host: a[:10], Type: To}}, Dynamic, nil))
	f.take()
	d, _ := f.mem(0x100000, 100)
	fill(d, 1)
	require.NoError(t, tab.Exit(f, []Item{{Host: a[:10], Type: From}, {Host: a[50:60], Type: From}}, Dynamic))
	f.expect(t, "copyout 0x100032 10", "copyout 0x100000 10", "free 0x100000 100")
	assert.Equal(t, byte(1), a[0], "copied back a[0]")
	assert.Equal(t, byte(51), a[50], "copied back a[50]")
	assert.Equal(t, byte(0), a[20], "a[20], in neither item, copied back")
	checkConsistent(t, tab, f)
}

func TestExtendsPast(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 4096)
	a := mem[1024:2048]
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
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
			assert.False(t, tab.IsPresent(c.host), "IsPresent of a range extending past an entry")
			f.expect(t)
			assert.Equal(t, before, entriesOf(t, tab), "the table changed")
		})
	}
	// The exact form a user sees, with a name.
	err := tab.Enter(f, []Item{{Host: mem[1500:2500], Type: ToFrom, Name: "x[1500:2500]"}}, Structured, nil)
	want := fmt.Sprintf("invalid argument: map %s (x[1500:2500]) extends past present mapping %s on test:0", rng(mem[1500:2500]), rng(a))
	require.EqualError(t, err, want)
	// Adjacent ranges do not overlap.
	require.NoError(t, tab.Enter(f, []Item{{Host: mem[0:1024], Type: Alloc}, {Host: mem[2048:4096], Type: Alloc}}, Structured, nil))
	assert.Equal(t, 3, tab.Len(), "entries")
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
	require.Equal(t, 0, tab.Len(), "entries after rejected constructs")
	require.NoError(t, tab.Enter(f, items, Structured, nil))
	require.Equal(t, 40, tab.Len(), "entries of 40 disjoint items")
	require.Equal(t, 40, f.live(), "buffers of 40 disjoint items")
	require.NoError(t, tab.Exit(f, items, Structured))
	checkConsistent(t, tab, f)
	assert.Equal(t, 0, tab.Len(), "entries left")
}

func TestPresentModifier(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := make([]byte, 16), make([]byte, 16)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.take()
	before := entriesOf(t, tab)
	err := tab.Enter(f, []Item{{Host: a, Type: ToFrom, Present: true}, {Host: b, Type: To, Present: true, Name: "b"}}, Structured, nil)
	mustErr(t, err, device.CodeNotFound, fmt.Sprintf("map %s (b) has the present modifier but is not present on test:0", rng(b)))
	mustErr(t, tab.Update(f, []Item{{Host: b, Type: From, Present: true}}), device.CodeNotFound, "present modifier")
	f.expect(t)
	require.Equal(t, before, entriesOf(t, tab), "the table changed")
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: ToFrom, Present: true}}, Structured, nil))
	f.expect(t)
}

func TestExitNotMapped(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := make([]byte, 16), make([]byte, 16)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.take()
	for _, c := range []struct {
		ty Type
		k  Kind
	}{{Release, Dynamic}, {Delete, Dynamic}, {From, Dynamic}, {ToFrom, Structured}} {
		err := tab.Exit(f, []Item{{Host: a, Type: c.ty}, {Host: b, Type: c.ty, Name: "b"}}, c.k)
		mustErr(t, err, device.CodeNotFound, fmt.Sprintf("map %s (b) (map type %v) is not present on test:0", rng(b), c.ty))
	}
	f.expect(t) // validated first: a was not released either
	e := tab.Entries()[0]
	assert.Equal(t, 1, e.Dynamic, "a's dynamic count: %v", e)
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
			assert.Equal(t, 0, tab.Len(), "entries after a refused call")
		})
	}
}

func TestUpdate(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := fill(make([]byte, 64), 0)
	absent, absent2 := make([]byte, 64), make([]byte, 1)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}}, Dynamic, nil))
	f.take()
	require.NoError(t, tab.Update(f, []Item{{Host: absent, Type: To}, {Host: a[8:16], Type: To}, {Host: absent2, Type: From}}))
	f.expect(t, "copyin 0x100008 8") // absent items are skipped
	d, _ := f.mem(0x100000, 64)
	assert.Equal(t, byte(8), d[8], "update to: device byte 8")
	assert.Equal(t, byte(0), d[7], "update to moved a byte before its range")
	assert.Equal(t, byte(0), d[16], "update to moved a byte past its range")
	d[0] = 99
	require.NoError(t, tab.Update(f, []Item{{Host: a, Type: From}}))
	f.expect(t, "copyout 0x100000 64")
	assert.Equal(t, byte(99), a[0], "update from: a[0]")
	assert.Equal(t, byte(8), a[8], "update from: a[8]")
	e := tab.Entries()[0]
	assert.Equal(t, 1, e.Dynamic, "update changed counts: %v", e)
	assert.Equal(t, 0, e.Structured, "update changed counts: %v", e)
	// A failed copy stops the update.
	f.failAt = f.calls + 1
	err := tab.Update(f, []Item{{Host: a[:8], Type: To, Name: "a"}, {Host: a[8:], Type: To}})
	require.ErrorIs(t, err, errInjected)
	require.ErrorContains(t, err, "target update: to")
	f.expect(t, "copyin 0x100000 8 failed")
}

func TestTranslate(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 300)
	a, b := mem[0:100], mem[200:300]
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}, {Host: b, Type: Alloc}}, Structured, nil))
	for _, c := range []struct {
		host []byte
		want device.DevicePtr
	}{{a, 0x100000}, {a[99:], 0x100000 + 99}, {b[:1], 0x101000}, {b[10:20], 0x101000 + 10}} {
		p, err := tab.Translate(c.host)
		require.NoError(t, err, "Translate(%s)", rng(c.host))
		assert.Equal(t, c.want, p, "Translate(%s)", rng(c.host))
		assert.True(t, tab.IsPresent(c.host), "IsPresent(%s)", rng(c.host))
	}
	_, err := tab.Translate(mem[100:200])
	mustErr(t, err, device.CodeNotFound, fmt.Sprintf("translate %s: not present on test:0", rng(mem[100:200])))
	_, err = tab.Translate(mem[150:250])
	mustErr(t, err, device.CodeInvalidArgument, "extends past present mapping "+rng(b))
	_, err = tab.Translate(nil)
	mustErr(t, err, device.CodeInvalidArgument, "empty host range")
	assert.False(t, tab.IsPresent(mem[100:101]), "IsPresent of an absent range")
	assert.False(t, tab.IsPresent(nil), "IsPresent of an empty range")
	assert.False(t, tab.IsPresent(mem[99:101]), "IsPresent of a straddling range")
	_, err = New(dev).Translate(a)
	mustErr(t, err, device.CodeNotFound)
}

func TestAssociate(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 256)
	a := mem[0:128]
	require.NoError(t, tab.Associate(a, 0xd000))
	require.NoError(t, tab.Associate(a, 0xd000)) // the same association again: no-op
	require.Equal(t, 1, tab.Len(), "entries")
	e := tab.Entries()[0]
	assert.True(t, e.Associated, "entry %v is associated", e)
	assert.Equal(t, device.DevicePtr(0xd000), e.Device, "entry %v", e)
	assert.Equal(t, 128, e.Size, "entry %v", e)
	assert.Contains(t, e.String(), "dynamic inf", "entry %v", e)
	mustErr(t, tab.Associate(a, 0xe000), device.CodeInvalidArgument, "overlaps associated range "+rng(a))
	mustErr(t, tab.Associate(mem[64:192], 0xe000), device.CodeInvalidArgument, "overlaps associated range")
	mustErr(t, tab.Associate(mem[128:], 0), device.CodeInvalidArgument, "nil device pointer")
	mustErr(t, tab.Associate(nil, 0xe000), device.CodeInvalidArgument, "empty host range")

	// Map clauses find it present: no allocation, and with no always, no copy.
	ptrs := make([]device.DevicePtr, 1)
	require.NoError(t, tab.Enter(f, []Item{{Host: a[16:32], Type: ToFrom}}, Structured, ptrs))
	assert.Equal(t, device.DevicePtr(0xd000+16), ptrs[0], "device pointer")
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Dynamic, nil))
	f.expect(t)
	mustErr(t, tab.Disassociate(a), device.CodeInvalidArgument, "still in use by 1 structured map")
	require.NoError(t, tab.Exit(f, []Item{{Host: a[16:32], Type: ToFrom}}, Structured))
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: Delete}}, Dynamic))
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: From}}, Dynamic))
	f.expect(t) // never copied back or freed by map clauses
	require.Equal(t, 1, tab.Len(), "map clauses removed an associated entry")

	// Errors of disassociate.
	mustErr(t, tab.Disassociate(mem[128:]), device.CodeNotFound, "nothing is associated there")
	mustErr(t, tab.Disassociate(a[8:]), device.CodeInvalidArgument, "does not start an associated range")
	mustErr(t, tab.Disassociate(nil), device.CodeInvalidArgument, "empty host range")
	b := mem[128:]
	require.NoError(t, tab.Enter(f, []Item{{Host: b, Type: To}}, Dynamic, nil))
	mustErr(t, tab.Disassociate(b), device.CodeInvalidArgument, "was mapped by a map clause")
	mustErr(t, tab.Associate(b, 0xe000), device.CodeInvalidArgument, "overlaps present mapping")
	require.NoError(t, tab.Exit(f, []Item{{Host: b, Type: Release}}, Dynamic))
	f.take()

	require.NoError(t, tab.Disassociate(a[:1])) // a prefix names the association, as a C pointer does
	f.expect(t)                                 // the table does not free associated memory
	assert.Equal(t, 0, tab.Len(), "entries after disassociate")
	assert.False(t, tab.IsPresent(a), "present after disassociate")
	checkConsistent(t, tab, f)
}

func TestAssociateAlwaysFrom(t *testing.T) {
	f, tab := newFake(), New(dev)
	a := make([]byte, 64)
	p, _ := f.Alloc(&Item{Host: a}, 64) // memory the user owns
	f.take()
	require.NoError(t, tab.Associate(a, p))
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: ToFrom, Always: true}}, Structured, nil))
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: ToFrom, Always: true}}, Structured))
	f.expect(t, "copyin 0x100000 64", "copyout 0x100000 64")
	require.NoError(t, tab.Disassociate(a))
	assert.Equal(t, 1, f.live(), "live buffers: the table freed associated memory")
}

func TestAllocNilPointer(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := make([]byte, 8), make([]byte, 8)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: To}}, Structured, nil))
	f.take()
	f.zero = true
	mustErr(t, tab.Enter(f, []Item{{Host: b, Type: To}}, Structured, nil), device.CodeOutOfResources, "nil device pointer")
	f.expect(t, "alloc 8 -> 0")
	assert.Equal(t, 1, tab.Len(), "entries")
}

func TestEntries(t *testing.T) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 64)
	require.NoError(t, tab.Enter(f, []Item{{Host: mem[32:], Type: To}, {Host: mem[:16], Type: Alloc}}, Structured, nil))
	require.NoError(t, tab.Enter(f, []Item{{Host: mem[:16], Type: To}}, Dynamic, nil))
	es := tab.Entries()
	want := []Entry{
		{Host: addr(mem), Size: 16, Device: 0x101000, Structured: 1, Dynamic: 1},
		{Host: addr(mem[32:]), Size: 32, Device: 0x100000, Structured: 1},
	}
	require.Equal(t, want, es, "Entries")
	assert.Equal(t, fmt.Sprintf("%s -> 0x101000 (16 bytes) structured 1 dynamic 1", rng(mem[:16])), es[0].String(), "String")
}

// TestHostKeptAlive: the table keeps mapped host memory alive and lets it go
// once unmapped.
func TestHostKeptAlive(t *testing.T) {
	f, tab := newFake(), New(dev)
	mapIt := func(unmap bool) weak.Pointer[byte] {
		h := make([]byte, 64<<10)
		items := []Item{{Host: h, Type: To}}
		require.NoError(t, tab.Enter(f, items, Dynamic, nil))
		if unmap {
			require.NoError(t, tab.Exit(f, []Item{{Host: h, Type: Release}}, Dynamic))
		}
		return weak.Make(&h[0])
	}
	mapped := mapIt(false)
	unmapped := mapIt(true)
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	assert.NotNil(t, mapped.Value(), "mapped host memory was collected")
	assert.Nil(t, unmapped.Value(), "unmapped host memory is still reachable (the table kept it)")
	runtime.KeepAlive(tab)
}

func TestErrorIsDeviceError(t *testing.T) {
	tab := New(dev)
	_, err := tab.Translate(make([]byte, 1))
	var de *device.Error
	assert.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, device.ErrNotFound)
}

// entryAt returns the entry starting at host's start.
func entryAt(t *testing.T, tab *Table, host []byte) Entry {
	t.Helper()
	for _, e := range tab.Entries() {
		if e.Host == addr(host) {
			return e
		}
	}
	require.Failf(t, "no entry", "no entry at %s", rng(host))
	return Entry{}
}

// DeviceExtent finds the mapped buffer holding a device address and counts
// the bytes to its end; addresses outside every buffer are not found.
func TestDeviceExtent(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := make([]byte, 4096), make([]byte, 100)
	ptrs := make([]device.DevicePtr, 2)
	require.NoError(t, tab.Enter(f, []Item{{Host: a, Type: Alloc}, {Host: b, Type: Alloc}}, Dynamic, ptrs))
	for _, c := range []struct {
		p    device.DevicePtr
		n    int
		want bool
	}{
		{ptrs[0], 4096, true}, {ptrs[0] + 4095, 1, true}, {ptrs[1] + 10, 90, true},
		{ptrs[0] + 4096 + 0x100000, 0, false}, {0, 0, false},
	} {
		n, ok := tab.DeviceExtent(c.p)
		assert.Equal(t, c.n, n, "DeviceExtent(%v): bytes", c.p)
		assert.Equal(t, c.want, ok, "DeviceExtent(%v): found", c.p)
	}
	require.NoError(t, tab.Exit(f, []Item{{Host: a, Type: Delete}, {Host: b, Type: Delete}}, Dynamic))
	_, ok := tab.DeviceExtent(ptrs[0])
	assert.False(t, ok, "DeviceExtent found a buffer after it was unmapped")
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
		s, e := Span(c.s)
		assert.Equal(t, c.start, s, "Span(%s): start", c.name)
		assert.Equal(t, c.end, e, "Span(%s): end", c.name)
	}
	s, e := Span(b[8:])
	assert.Equal(t, s, e, "Span(b[8:]): want an empty range")
	assert.NotZero(t, s, "Span(b[8:]): want a non-nil address")
}
