// Package mapping is the present table of one device: which host ranges are
// mapped, where their device copies live, and the reference counts that
// decide when data moves and when device memory is freed, with the data
// mapping semantics of OpenMP 5.2 (the map clause, target enter data, target
// exit data, target update, omp_target_associate_ptr).
//
// The runtime (package target) owns one Table per device and calls it with
// an Ops that performs the device side (allocation, copies, and the OMPT
// events around them). The table does the bookkeeping only: it decides, in
// the order the standard gives, which device operations a construct needs,
// asks Ops for them, and keeps the table consistent when one fails.
//
// Rules, as in OpenMP 5.2:
//
//   - A list item is a non-empty host byte range. It is present when it lies
//     inside one entry; a sub-range translates to the same offset inside that
//     entry's device buffer. A range that overlaps an entry without lying
//     inside it is an error naming both ranges. List items of one construct
//     must not overlap each other.
//   - Each entry has a structured reference count (target, target data) and
//     a dynamic one (target enter data, target exit data); it is removed, and
//     its device buffer freed, when both reach zero.
//   - On entry, a new entry is allocated and, for to and tofrom, copied to
//     the device; a present one only has its count incremented (and is copied
//     again if the always modifier is given). The present modifier makes an
//     absent item an error.
//   - On exit, the count is decremented (delete sets the dynamic count to
//     zero). For from and tofrom, the item is copied back when the counts
//     reach zero, or always with the always modifier. Exit of an item that is
//     not present is an error.
//   - An associated entry (Associate) has an infinite dynamic count: map
//     clauses never drop it and the table never frees its buffer.
package mapping

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/device"
)

// Type is a map type of a map clause, or a motion type (To, From) of a
// target update.
type Type uint8

// Map types.
const (
	To Type = iota + 1
	From
	ToFrom
	Alloc
	Release
	Delete
	// FromDelete is one list item named in a from (or tofrom) clause and
	// a delete clause of one target exit data construct: it is copied
	// back, as the from clause asks (delete makes its count zero), and
	// then deleted, as LLVM's runtime does with the two clauses.
	FromDelete
)

var typeNames = [...]string{"", "to", "from", "tofrom", "alloc", "release", "delete", "from+delete"}

// String returns the map type as OpenMP spells it: "to", "tofrom".
func (t Type) String() string {
	if t > 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("maptype(%d)", int(t))
}

func (t Type) copiesIn() bool  { return t == To || t == ToFrom }
func (t Type) copiesOut() bool { return t == From || t == ToFrom || t == FromDelete }

// Item is one list item of a map clause (or of a motion clause for Update).
// The table keeps Host, and so the host memory, alive while the item's entry
// is mapped; the caller must not resize it, and must not write it while a
// copy of it is in flight.
type Item struct {
	Host    []byte // the list item's host memory; must be non-empty
	Type    Type
	Always  bool   // the always modifier
	Present bool   // the present modifier
	Name    string // optional label used in errors ("a", "x[2:10]"); may be ""
}

// Kind says which reference count a construct uses.
type Kind uint8

// Reference count kinds.
const (
	Structured Kind = iota + 1 // target, target data
	Dynamic                    // target enter data, target exit data
)

// String returns "structured" or "dynamic".
func (k Kind) String() string {
	switch k {
	case Structured:
		return "structured"
	case Dynamic:
		return "dynamic"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Ops performs the device side of mapping; the runtime implements it (device
// calls plus OMPT events). The table calls it with its lock held, so an Ops
// must not call back into the same Table (that deadlocks); it is called from
// whichever goroutine called the Table.
type Ops interface {
	// Alloc allocates size (len(it.Host)) bytes of device memory for the
	// new entry of it. A zero pointer with a nil error is treated as a
	// failure.
	Alloc(it *Item, size int) (device.DevicePtr, error)
	// Free frees a buffer made by Alloc, of size bytes, that mapped host.
	Free(p device.DevicePtr, size int, host []byte) error
	// CopyIn copies src to device memory at dst (which may lie inside a
	// buffer, for a sub-range). It must finish reading src before it
	// returns or must keep src alive itself.
	CopyIn(dst device.DevicePtr, src []byte) error
	// CopyOut copies device memory at src into dst. The data must be in
	// dst when it returns: Exit may free the buffer right after.
	CopyOut(dst []byte, src device.DevicePtr) error

	// Fence returns an event that completes when every operation this
	// Ops has enqueued so far has completed, or nil when they all have
	// already (nothing to wait for). The table keeps it on the entries
	// those operations wrote or read, for other Ops to wait on.
	Fence() device.Event
	// After makes this Ops's later device operations (its copies, frees
	// and kernel launches) wait for ev, an event another Ops's Fence
	// returned. With fill set, ev completes the copy still filling an
	// entry this Ops uses: if that work failed, the device copy is not
	// what the program mapped, and this Ops's use of it fails too.
	// Without, ev completes work of another construct still using an
	// entry this Ops copies out or frees: only the order matters, and a
	// failure there is that construct's own. It must not block: the table
	// calls it with its lock held.
	After(ev device.Event, fill bool)
}

// user is the completion of one Ops's work on an entry.
type user struct {
	ops Ops
	ev  device.Event
}

// entry is one mapped host range [start, end) and its device copy.
type entry struct {
	start, end uintptr
	host       []byte // keeps the host memory alive while mapped
	dev        device.DevicePtr
	structured int
	dynamic    int  // ignored (infinite) when assoc
	assoc      bool // made by Associate: never freed by the table

	// Ordering between constructs that share the entry on different
	// queues. fill is the completion of the last write of the device
	// copy (by filler), which every other user of the entry waits for;
	// users are the completions of constructs that released their
	// reference while their work on the entry may still be running, which
	// a copy out or a free waits for. One per Ops at most (an Ops's
	// queue is in order, so its newest fence covers its older ones).
	fill   device.Event
	filler Ops
	users  []user

	// Exit's bookkeeping for one call.
	saved      bool
	failed     bool
	waited     bool // waitFor was called for it
	oldS, oldD int
	next       *entry // free list
}

func (e *entry) size() int { return int(e.end - e.start) }

// zero reports whether both counts are zero, so the entry is to be removed.
func (e *entry) zero() bool { return !e.assoc && e.structured == 0 && e.dynamic == 0 }

// Entry describes one entry of a Table, for diagnostics (GOMPT_INFO).
type Entry struct {
	Host       uintptr          // start of the host range
	Size       int              // bytes
	Device     device.DevicePtr // start of the device buffer
	Structured int              // structured reference count
	Dynamic    int              // dynamic reference count; infinite when Associated
	Associated bool             // made by Associate; never freed by the table
}

// String formats the entry as
// "[0x1000,0x2000) -> 0x7f00 (4096 bytes) structured 1 dynamic 0".
func (e Entry) String() string {
	d := fmt.Sprint(e.Dynamic)
	if e.Associated {
		d = "inf (associated)"
	}
	return fmt.Sprintf("%s -> %v (%d bytes) structured %d dynamic %s",
		RangeString(e.Host, e.Size), e.Device, e.Size, e.Structured, d)
}

const maxFreeEntries = 256

// Table is the present table of one device. All methods are safe for
// concurrent use; Enter, Exit, Update, Associate and Disassociate hold the
// table's lock while they call Ops, so device operations of one table are
// serialised and an Ops must not call back into the table.
type Table struct {
	dev string

	mu   sync.RWMutex
	tree tree

	// Scratch of one call, reused under mu so steady state does not allocate.
	found []*entry
	state []uint8
	spans []span
	free  *entry
	nfree int
}

// New returns an empty table for the device named deviceID ("host:0"), the
// name used in error messages.
func New(deviceID string) *Table { return &Table{dev: deviceID} }

// Len returns the number of entries.
func (t *Table) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.tree.len
}

// Entries returns a snapshot of the entries in host address order.
func (t *Table) Entries() []Entry {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Entry, 0, t.tree.len)
	t.tree.walk(func(e *entry) bool {
		out = append(out, Entry{Host: e.start, Size: e.size(), Device: e.dev,
			Structured: e.structured, Dynamic: e.dynamic, Associated: e.assoc})
		return true
	})
	return out
}

// DeviceExtent returns the bytes from device address p to the end of the
// mapped buffer that holds it, and whether one does. It walks the entries
// under the read lock and stops at the first that holds p (no snapshot).
func (t *Table) DeviceExtent(p device.DevicePtr) (int, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n, ok := 0, false
	t.tree.walk(func(e *entry) bool {
		if p >= e.dev && p < e.dev+device.DevicePtr(e.size()) {
			n, ok = e.size()-int(p-e.dev), true
			return false
		}
		return true
	})
	return n, ok
}

// Span returns the host address range [start, end) of b, as the table
// keys it: start is the address of b's first element, also for an empty b
// (a zero-length section has an address, as in OpenMP: b[i:i] starts where
// b[i] is; an empty slice with no capacity left, such as b[len(b):], points
// where Go leaves it, not past the end); 0 for a nil slice. The runtime
// uses it wherever it needs a slice's addresses.
func Span(b []byte) (start, end uintptr) {
	a := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a, a + uintptr(len(b))
}

// RangeString formats the host range [a, a+n) as the table's messages do:
// "[0x1000,0x2000)".
func RangeString(a uintptr, n int) string {
	return fmt.Sprintf("[%#x,%#x)", a, a+uintptr(n))
}

func (e *entry) String() string { return RangeString(e.start, e.size()) }

// waitFor makes ops wait for the work of other Ops on e: the copy that
// filled it and, when all is set, the work of constructs that released
// it while it may still run (a copy out or a free must wait for their
// kernels). Checking an entry with nothing pending is two loads.
func (e *entry) waitFor(ops Ops, all bool) {
	if e.fill != nil && e.filler != ops {
		ops.After(e.fill, true)
	}
	if all {
		for _, u := range e.users {
			if u.ops != ops {
				ops.After(u.ev, false)
			}
		}
	}
}

// filled records that ops wrote e's device copy, complete at ev (nil:
// complete already).
func (e *entry) filled(ops Ops, ev device.Event) {
	e.fill, e.filler = ev, ops
	if ev == nil {
		e.filler = nil
	}
}

// release records that ops stopped using e, its work complete at ev (nil:
// complete already), replacing ops's earlier record.
func (e *entry) release(ops Ops, ev device.Event) {
	for i := range e.users {
		if e.users[i].ops != ops {
			continue
		}
		if ev != nil {
			e.users[i].ev = ev
			return
		}
		last := len(e.users) - 1
		e.users[i] = e.users[last]
		e.users[last] = user{}
		e.users = e.users[:last]
		return
	}
	if ev != nil {
		e.users = append(e.users, user{ops, ev})
	}
}

// fence calls ops.Fence once per table call; have says whether *ev holds
// its result already.
func fence(ops Ops, ev *device.Event, have *bool) device.Event {
	if !*have {
		*ev, *have = ops.Fence(), true
	}
	return *ev
}

// lookup finds the entry that holds [a, end): in is that entry, or nil;
// over is an entry that overlaps the range without holding it, or nil.
func (t *Table) lookup(a, end uintptr) (in, over *entry) {
	le, gt := t.tree.around(a)
	if le != nil && le.end > a {
		if end <= le.end {
			return le, nil
		}
		return nil, le
	}
	if gt != nil && gt.start < end {
		return nil, gt
	}
	return nil, nil
}

func (t *Table) newEntry(host []byte, p device.DevicePtr) *entry {
	e := t.free
	if e != nil {
		t.free = e.next
		e.next = nil
		t.nfree--
	} else {
		e = new(entry)
	}
	e.start, e.end = Span(host)
	e.host = host
	e.dev = p
	return e
}

func (t *Table) putEntry(e *entry) {
	users := e.users[:0]
	clear(e.users)
	*e = entry{users: users}
	if t.nfree < maxFreeEntries {
		e.next = t.free
		t.free = e
		t.nfree++
	}
}

// construct describes what a call maps for: its name in messages and the
// map types it accepts.
type construct struct {
	prefix    string // prepended to messages: "target enter data: "
	name      string // "target enter data"
	verb      string // "map", or "" for motion clauses (the type is the verb)
	accept    []Type
	mustExist bool // absent items are an error (exit)
}

var (
	enterStructured = construct{name: "target / target data (map on entry)", verb: "map",
		accept: []Type{To, From, ToFrom, Alloc}}
	exitStructured = construct{name: "target / target data (map on exit)", verb: "map",
		accept: []Type{To, From, ToFrom, Alloc}, mustExist: true}
	enterDynamic = construct{prefix: "target enter data: ", name: "target enter data", verb: "map",
		accept: []Type{To, Alloc}}
	exitDynamic = construct{prefix: "target exit data: ", name: "target exit data", verb: "map",
		accept: []Type{From, Release, Delete, FromDelete}, mustExist: true}
	update = construct{prefix: "target update: ", name: "target update",
		accept: []Type{To, From}}
)

func (c *construct) accepts(ty Type) bool { return slices.Contains(c.accept, ty) }

func (c *construct) acceptList() string {
	s := make([]string, len(c.accept))
	for i, ty := range c.accept {
		s[i] = ty.String()
	}
	return strings.Join(s, ", ")
}

// label names item it in messages: "map [0x1000,0x2000) (a)".
func (c *construct) label(it *Item) string {
	a, _ := Span(it.Host)
	v := c.verb
	if v == "" {
		v = it.Type.String()
	}
	s := v + " " + RangeString(a, len(it.Host))
	if it.Name != "" {
		s += " (" + it.Name + ")"
	}
	return s
}

func (t *Table) errf(code device.Code, format string, args ...any) error {
	// The message names the device itself, so the Error carries no Device
	// or Op prefix: "invalid argument: map [...) extends past ... on host:0".
	return device.Errorf("", "", code, format, args...)
}

// check validates items for construct c without looking at the entries:
// each non-empty, of a map type c accepts, and no two sharing storage.
func (t *Table) check(c *construct, items []Item) error {
	for i := range items {
		it := &items[i]
		if len(it.Host) == 0 {
			name := ""
			if it.Name != "" {
				name = " (" + it.Name + ")"
			}
			return t.errf(device.CodeInvalidArgument,
				"%slist item %d%s has an empty host range (nil or zero length) on %s; a list item needs at least one byte",
				c.prefix, i, name, t.dev)
		}
		if !c.accepts(it.Type) {
			return t.errf(device.CodeInvalidArgument,
				"%s%s: %s does not accept map type %v; accepted: %s",
				c.prefix, c.label(it), c.name, it.Type, c.acceptList())
		}
	}
	return t.checkDisjoint(c, items)
}

// CheckEnter, CheckExit and CheckUpdate validate items as Enter, Exit and
// Update would on a device named dev, with the same errors, for a device
// that maps nothing (the initial device): bad input is reported there too.
func CheckEnter(dev string, k Kind, items []Item) error {
	c, err := enterConstruct(k)
	if err != nil {
		return err
	}
	return New(dev).check(c, items)
}

// CheckExit: see CheckEnter.
func CheckExit(dev string, k Kind, items []Item) error {
	c, err := exitConstruct(k)
	if err != nil {
		return err
	}
	return New(dev).check(c, items)
}

// CheckUpdate: see CheckEnter.
func CheckUpdate(dev string, items []Item) error { return New(dev).check(&update, items) }

// resolve validates items for construct c and fills t.found with each
// item's present entry (nil when absent). It makes no change and calls no
// Ops; on error t.found is cleared.
func (t *Table) resolve(c *construct, items []Item) error {
	if cap(t.found) < len(items) {
		t.found = make([]*entry, len(items))
		t.state = make([]uint8, len(items))
	}
	t.found = t.found[:len(items)]
	t.state = t.state[:len(items)]
	if err := t.check(c, items); err != nil {
		return err
	}
	for i := range items {
		it := &items[i]
		a, end := Span(it.Host)
		in, over := t.lookup(a, end)
		if over != nil {
			clear(t.found)
			return t.errf(device.CodeInvalidArgument, "%s%s extends past present mapping %v on %s",
				c.prefix, c.label(it), over, t.dev)
		}
		if in == nil {
			if c.mustExist {
				clear(t.found)
				return t.errf(device.CodeNotFound,
					"%s%s (map type %v) is not present on %s: it was never mapped, or was already unmapped",
					c.prefix, c.label(it), it.Type, t.dev)
			}
			if it.Present {
				clear(t.found)
				return t.errf(device.CodeNotFound,
					"%s%s has the present modifier but is not present on %s", c.prefix, c.label(it), t.dev)
			}
		}
		t.found[i] = in
	}
	return nil
}

type span struct {
	a, end uintptr
	i      int
}

// checkDisjoint reports two list items of one construct that share storage.
func (t *Table) checkDisjoint(c *construct, items []Item) error {
	n := len(items)
	if n < 2 {
		return nil
	}
	if n <= 16 {
		for i := 1; i < n; i++ {
			ai, ei := Span(items[i].Host)
			for j := 0; j < i; j++ {
				aj, ej := Span(items[j].Host)
				if ai < ej && aj < ei {
					return t.overlapErr(c, items, j, i)
				}
			}
		}
		return nil
	}
	t.spans = t.spans[:0]
	for i := range items {
		a, end := Span(items[i].Host)
		t.spans = append(t.spans, span{a, end, i})
	}
	slices.SortFunc(t.spans, func(x, y span) int {
		switch {
		case x.a < y.a:
			return -1
		case x.a > y.a:
			return 1
		}
		return x.i - y.i
	})
	far := t.spans[0] // the span reaching furthest so far
	for _, s := range t.spans[1:] {
		if s.a < far.end {
			return t.overlapErr(c, items, min(far.i, s.i), max(far.i, s.i))
		}
		if s.end > far.end {
			far = s
		}
	}
	return nil
}

func (t *Table) overlapErr(c *construct, items []Item, i, j int) error {
	return t.errf(device.CodeInvalidArgument,
		"%s%s overlaps %s in the same construct on %s; list items of one construct must not share storage",
		c.prefix, c.label(&items[i]), c.label(&items[j]), t.dev)
}

func enterConstruct(k Kind) (*construct, error) {
	switch k {
	case Structured:
		return &enterStructured, nil
	case Dynamic:
		return &enterDynamic, nil
	}
	return nil, device.Errorf("", "", device.CodeInvalidArgument,
		"mapping: reference count kind %d is not valid; use Structured (target, target data) or Dynamic (enter/exit data)", int(k))
}

func exitConstruct(k Kind) (*construct, error) {
	switch k {
	case Structured:
		return &exitStructured, nil
	case Dynamic:
		return &exitDynamic, nil
	}
	return enterConstruct(k)
}

const (
	stNone   uint8 = iota // nothing changed by this call
	stNew                 // entry created by this call
	stBumped              // count k incremented by this call

	stWrote uint8 = 4 // bit: this call copied to the entry's device copy
)

// Enter maps items at the start of a construct: Structured for target and
// target data, Dynamic for target enter data. It validates every item
// first (non-empty, a map type the construct accepts, no two items sharing
// storage, no item extending past a present entry, the present modifier),
// and calls no Ops if one is bad. Then, in list order: an absent item gets
// a new entry (ops.Alloc, then ops.CopyIn for to and tofrom); a present one
// has its count of kind k incremented (an associated entry's dynamic count
// stays infinite) and gets ops.CopyIn if always is given with to or tofrom.
//
// ptrs, if not nil, must have len(items) elements and receives each item's
// device address (an offset into the enclosing buffer for a sub-range).
//
// Enter is atomic for the table: when it returns an error, entries it
// created have been freed with ops.Free and removed and counts it
// incremented are restored; data it copied to present entries stays copied,
// and ptrs is unspecified. Safe for concurrent use; Ops are called with the
// table's lock held.
func (t *Table) Enter(ops Ops, items []Item, k Kind, ptrs []device.DevicePtr) error {
	c, err := enterConstruct(k)
	if err != nil {
		return err
	}
	if ptrs != nil && len(ptrs) != len(items) {
		return t.errf(device.CodeInvalidArgument,
			"%smap: %d list items but %d device pointer slots; pass len(items) slots or nil", c.prefix, len(items), len(ptrs))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.resolve(c, items); err != nil {
		return err
	}
	for i := range items {
		it := &items[i]
		e := t.found[i]
		t.state[i] = stNone
		if e != nil {
			if k == Structured {
				e.structured++
				t.state[i] = stBumped
			} else if !e.assoc {
				e.dynamic++
				t.state[i] = stBumped
			}
			// Present, maybe still being filled by another construct.
			always := it.Always && it.Type.copiesIn()
			e.waitFor(ops, always)
			if always {
				a, _ := Span(it.Host)
				t.state[i] |= stWrote
				if err := ops.CopyIn(e.dev+device.DevicePtr(a-e.start), it.Host); err != nil {
					return t.undoEnter(ops, items, k, i+1, fmt.Errorf("%s%s: copy to device: %w", c.prefix, c.label(it), err))
				}
			}
		} else {
			p, err := ops.Alloc(it, len(it.Host))
			if err == nil && p == 0 {
				err = t.errf(device.CodeOutOfResources, "allocation returned a nil device pointer")
			}
			if err != nil {
				return t.undoEnter(ops, items, k, i, fmt.Errorf("%s%s: alloc %d bytes: %w", c.prefix, c.label(it), len(it.Host), err))
			}
			e = t.newEntry(it.Host, p)
			if k == Structured {
				e.structured = 1
			} else {
				e.dynamic = 1
			}
			t.tree.insert(e)
			t.found[i] = e
			t.state[i] = stNew
			if it.Type.copiesIn() {
				t.state[i] |= stWrote
				if err := ops.CopyIn(p, it.Host); err != nil {
					return t.undoEnter(ops, items, k, i+1, fmt.Errorf("%s%s: copy to device: %w", c.prefix, c.label(it), err))
				}
			}
		}
		if ptrs != nil {
			a, _ := Span(it.Host)
			ptrs[i] = e.dev + device.DevicePtr(a-e.start)
		}
	}
	t.markFilled(ops, len(items))
	clear(t.found)
	return nil
}

// markFilled gives the entries of the first n items that this call copied
// to the completion of those copies, for other constructs to wait on.
func (t *Table) markFilled(ops Ops, n int) {
	var ev device.Event
	have := false
	for i := range n {
		if t.state[i]&stWrote != 0 {
			t.found[i].filled(ops, fence(ops, &ev, &have))
		}
	}
}

// undoEnter reverts the first n items of a failed Enter, last first, and
// returns cause with any error of freeing joined to it.
func (t *Table) undoEnter(ops Ops, items []Item, k Kind, n int, cause error) error {
	errs := []error{cause}
	// Data copied to entries that stay present stays copied: others wait
	// for it as for any fill.
	for j := range n {
		if t.state[j] == stBumped|stWrote {
			t.markFilled(ops, n)
			break
		}
	}
	for j := n - 1; j >= 0; j-- {
		e := t.found[j]
		switch t.state[j] &^ stWrote {
		case stNew:
			t.tree.delete(e.start)
			if err := ops.Free(e.dev, e.size(), e.host); err != nil {
				errs = append(errs, fmt.Errorf("undoing map of %v: free %v: %w", e, e.dev, err))
			}
			t.putEntry(e)
		case stBumped:
			if k == Structured {
				e.structured--
			} else {
				e.dynamic--
			}
		}
	}
	clear(t.found)
	if len(errs) == 1 {
		return cause
	}
	return errors.Join(errs...)
}

// Exit unmaps items at the end of a construct: Structured for target and
// target data, Dynamic for target exit data. It validates every item first
// (as Enter; an item that is not present is an error naming its range) and
// calls no Ops if one is bad. Then:
//
//  1. Each item decrements its entry's count of kind k if positive (delete
//     sets the dynamic count to zero; an associated entry's dynamic count
//     stays infinite).
//  2. In reverse list order, each from or tofrom item whose entry's
//     counts are now both zero, or that has the always modifier, is copied
//     back (ops.CopyOut of the item's own range).
//  3. In reverse list order, each entry whose counts are both zero is
//     freed (ops.Free, once per entry, at its last item in the list) and
//     removed.
//
// Reverse order is LLVM's (its targetDataEnd walks the list backwards and
// frees in the same order afterwards): items leave in the opposite order
// they entered, and tools that compare event sequences see the same one.
//
// A failed Free is retried once. For Dynamic (exit data, which the program
// can retry), a failed CopyOut or a Free that failed twice leaves that entry
// in place with its counts as before the call. For Structured (the end of a
// target or target data construct, which nothing can retry), the entry's
// reference is released all the same, so no buffer is stranded: the error
// says the copy was lost, or that the buffer may be. Other items are still
// processed, and the errors are returned joined.
// Safe for concurrent use; Ops are called with the table's lock held.
func (t *Table) Exit(ops Ops, items []Item, k Kind) error {
	c, err := exitConstruct(k)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.resolve(c, items); err != nil {
		return err
	}
	for i := range items {
		e := t.found[i]
		if !e.saved {
			e.saved, e.oldS, e.oldD = true, e.structured, e.dynamic
		}
		switch {
		case items[i].Type == Delete || items[i].Type == FromDelete:
			if !e.assoc {
				e.dynamic = 0
			}
		case k == Structured:
			if e.structured > 0 {
				e.structured--
			}
		case !e.assoc && e.dynamic > 0:
			e.dynamic--
		}
	}
	var errs []error
	var ev device.Event
	have := false
	for i := len(items) - 1; i >= 0; i-- {
		it, e := &items[i], t.found[i]
		if it.Type.copiesOut() && (it.Always || e.zero()) {
			a, _ := Span(it.Host)
			if !e.waited {
				e.waitFor(ops, true)
				e.waited = true
			}
			if err := ops.CopyOut(it.Host, e.dev+device.DevicePtr(a-e.start)); err != nil {
				if k == Structured {
					// The construct has ended: nothing can retry the copy,
					// so its reference goes anyway, and with it the buffer.
					errs = append(errs, fmt.Errorf("%s%s: copy from device (the mapping is released): %w", c.prefix, c.label(it), err))
					continue
				}
				e.failed = true
				errs = append(errs, fmt.Errorf("%s%s: copy from device (the mapping stays present): %w", c.prefix, c.label(it), err))
			}
		}
	}
	for i := len(items) - 1; i >= 0; i-- {
		e := t.found[i]
		if !e.saved {
			continue // handled by a later item of the list
		}
		e.saved = false
		waited := e.waited
		e.waited = false
		if e.failed {
			e.failed = false
			e.structured, e.dynamic = e.oldS, e.oldD
			continue
		}
		if !e.zero() {
			// Others still use it: whoever frees it waits for this
			// construct's work on it first.
			e.release(ops, fence(ops, &ev, &have))
			continue
		}
		if !waited {
			e.waitFor(ops, true)
		}
		if err := ops.Free(e.dev, e.size(), e.host); err != nil {
			// One retry: a transient failure must not strand the buffer.
			if err2 := ops.Free(e.dev, e.size(), e.host); err2 != nil {
				if k == Dynamic {
					e.structured, e.dynamic = e.oldS, e.oldD
					errs = append(errs, fmt.Errorf("%s%s: free %v (the mapping stays present): %w", c.prefix, c.label(&items[i]), e.dev, err2))
					continue
				}
				errs = append(errs, fmt.Errorf("%s%s: free %v failed twice; the mapping is released and the buffer may be lost: %w", c.prefix, c.label(&items[i]), e.dev, err2))
			}
		}
		t.tree.delete(e.start)
		t.putEntry(e)
	}
	clear(t.found)
	return errors.Join(errs...)
}

// Update performs the data motion of target update: an item of type To is
// copied to the device (ops.CopyIn), one of type From back to the host
// (ops.CopyOut), each only its own range of the enclosing entry. Items that
// are not present are skipped, unless they have the present modifier (an
// error). All items are validated before any copy; the first failed copy
// stops the update and is returned. Counts do not change. Safe for
// concurrent use; Ops are called with the table's lock held.
func (t *Table) Update(ops Ops, items []Item) error {
	c := &update
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.resolve(c, items); err != nil {
		return err
	}
	defer clear(t.found)
	n := 0
	for i := range items {
		it, e := &items[i], t.found[i]
		t.state[i] = stNone
		n = i + 1
		if e == nil {
			continue
		}
		a, _ := Span(it.Host)
		p := e.dev + device.DevicePtr(a-e.start)
		e.waitFor(ops, true)
		if it.Type == To {
			t.state[i] = stWrote
			if err := ops.CopyIn(p, it.Host); err != nil {
				t.markFilled(ops, n)
				return fmt.Errorf("%s%s: copy to device: %w", c.prefix, c.label(it), err)
			}
		} else if err := ops.CopyOut(it.Host, p); err != nil {
			t.markFilled(ops, n)
			return fmt.Errorf("%s%s: copy from device: %w", c.prefix, c.label(it), err)
		}
	}
	t.markFilled(ops, n)
	return nil
}

// Translate returns the device address of host, which must lie inside one
// present entry: the entry's buffer plus host's offset in it. An empty
// range is CodeInvalidArgument; an absent one CodeNotFound; one that
// extends past a present entry CodeInvalidArgument naming both ranges. Safe
// for concurrent use; it does not allocate when it succeeds.
func (t *Table) Translate(host []byte) (device.DevicePtr, error) {
	if len(host) == 0 {
		return 0, t.errf(device.CodeInvalidArgument, "translate: empty host range (nil or zero length) on %s", t.dev)
	}
	a, end := Span(host)
	t.mu.RLock()
	in, over := t.lookup(a, end)
	var p device.DevicePtr
	if in != nil {
		p = in.dev + device.DevicePtr(a-in.start)
	}
	t.mu.RUnlock()
	switch {
	case in != nil:
		return p, nil
	case over != nil:
		return 0, t.errf(device.CodeInvalidArgument, "translate %s extends past present mapping %v on %s",
			RangeString(a, len(host)), over, t.dev)
	}
	return 0, t.errf(device.CodeNotFound, "translate %s: not present on %s", RangeString(a, len(host)), t.dev)
}

// IsPresent reports whether host (non-empty) lies inside one present entry,
// as omp_target_is_present does for the range. Safe for concurrent use.
func (t *Table) IsPresent(host []byte) bool {
	if len(host) == 0 {
		return false
	}
	a, end := Span(host)
	t.mu.RLock()
	in, _ := t.lookup(a, end)
	t.mu.RUnlock()
	return in != nil
}

// Associate implements omp_target_associate_ptr: it makes host present,
// backed by the caller's device memory at p (at least len(host) bytes). The
// entry's dynamic count is infinite: map clauses bump and drop its
// structured count only, never remove it, and the table never frees p.
// Associating the same range with the same p again is a no-op; any other
// overlap with a present entry is an error naming both ranges. Safe for
// concurrent use; it calls no Ops.
func (t *Table) Associate(host []byte, p device.DevicePtr) error {
	if len(host) == 0 {
		return t.errf(device.CodeInvalidArgument, "associate: empty host range (nil or zero length) on %s", t.dev)
	}
	a, end := Span(host)
	if p == 0 {
		return t.errf(device.CodeInvalidArgument, "associate %s: nil device pointer on %s", RangeString(a, len(host)), t.dev)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	in, over := t.lookup(a, end)
	if in != nil && in.assoc && in.start == a && in.end == end && in.dev == p {
		return nil
	}
	if in == nil {
		in = over
	}
	if in != nil {
		what := "present mapping"
		if in.assoc {
			what = "associated range"
		}
		return t.errf(device.CodeInvalidArgument, "associate %s with %v overlaps %s %v (device %v) on %s; disassociate or unmap it first",
			RangeString(a, len(host)), p, what, in, in.dev, t.dev)
	}
	e := t.newEntry(host, p)
	e.assoc = true
	t.tree.insert(e)
	return nil
}

// Disassociate implements omp_target_disassociate_ptr: it removes the
// association made by Associate whose host range starts at host's start
// (host may be the associated range or a prefix of it). It does not free
// the device memory. Errors: nothing associated there (CodeNotFound); a
// range mapped by a map clause rather than associated, or one still in use
// by a structured map (target data region) (CodeInvalidArgument). Safe for
// concurrent use; it calls no Ops.
func (t *Table) Disassociate(host []byte) error {
	if len(host) == 0 {
		return t.errf(device.CodeInvalidArgument, "disassociate: empty host range (nil or zero length) on %s", t.dev)
	}
	a, end := Span(host)
	t.mu.Lock()
	defer t.mu.Unlock()
	in, over := t.lookup(a, end)
	if in == nil || in.start != a {
		if in == nil {
			in = over
		}
		if in != nil {
			return t.errf(device.CodeInvalidArgument, "disassociate %s: does not start an associated range; %v is present on %s",
				RangeString(a, len(host)), in, t.dev)
		}
		return t.errf(device.CodeNotFound, "disassociate %s: nothing is associated there on %s", RangeString(a, len(host)), t.dev)
	}
	if !in.assoc {
		return t.errf(device.CodeInvalidArgument,
			"disassociate %s: %v was mapped by a map clause (structured %d, dynamic %d), not associated with omp_target_associate_ptr, on %s",
			RangeString(a, len(host)), in, in.structured, in.dynamic, t.dev)
	}
	if in.structured > 0 {
		return t.errf(device.CodeInvalidArgument,
			"disassociate %s: still in use by %d structured map(s) (target or target data) on %s; end those regions first",
			RangeString(a, len(host)), in.structured, t.dev)
	}
	t.tree.delete(in.start)
	t.putEntry(in)
	return nil
}
