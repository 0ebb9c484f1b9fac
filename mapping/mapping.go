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
//   - Where the Ops is an Aliaser (unified shared memory, opt-in), a new
//     entry may be the program's memory itself: counted as any other,
//     but no data moves for it.
//
// Files, by concern: mapping.go (list items, map types, reference count
// kinds, host ranges), ops.go (the Ops contract, its optional Aliaser,
// and the order between Ops that the entries keep), table.go (the table, its entries and their
// lookup, Translate and IsPresent), check.go (the checks of list items
// before any change), enter.go (Enter and its undoing), exit.go (Exit),
// update.go (Update), associate.go (Associate and Disassociate), btree.go
// (the tree that orders the entries by host address).
package mapping

import (
	"fmt"
	"unsafe"
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
