package mapping

import (
	"fmt"
	"sync"

	"github.com/gompt/gompt/device"
)

// entry is one mapped host range [start, end) and its device copy.
type entry struct {
	start, end uintptr
	host       []byte // keeps the host memory alive while mapped
	dev        device.DevicePtr
	structured int
	dynamic    int  // ignored (infinite) when assoc
	assoc      bool // made by Associate: never freed by the table
	alias      bool // the program's memory itself (Aliaser): no copies

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
	Aliased    bool             // the program's memory itself (Aliaser): no copies
}

// String formats the entry as
// "[0x1000,0x2000) -> 0x7f00 (4096 bytes) structured 1 dynamic 0".
func (e Entry) String() string {
	d := fmt.Sprint(e.Dynamic)
	if e.Associated {
		d = "inf (associated)"
	}
	s := fmt.Sprintf("%s -> %v (%d bytes) structured %d dynamic %s",
		RangeString(e.Host, e.Size), e.Device, e.Size, e.Structured, d)
	if e.Aliased {
		s += " (the program's memory)"
	}
	return s
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
			Structured: e.structured, Dynamic: e.dynamic, Associated: e.assoc, Aliased: e.alias})
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

func (e *entry) String() string { return RangeString(e.start, e.size()) }

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

func (t *Table) errf(code device.Code, format string, args ...any) error {
	// The message names the device itself, so the Error carries no Device
	// or Op prefix: "invalid argument: map [...) extends past ... on host:0".
	return device.Errorf("", "", code, format, args...)
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
