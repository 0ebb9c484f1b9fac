package mapping

import (
	"errors"
	"fmt"

	"github.com/gompt/gompt/device"
)

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
			always := it.Always && it.Type.copiesIn() && !e.alias
			e.waitFor(ops, always)
			if always {
				a, _ := Span(it.Host)
				t.state[i] |= stWrote
				if err := ops.CopyIn(e.dev+device.DevicePtr(a-e.start), it.Host); err != nil {
					return t.undoEnter(ops, items, k, i+1, fmt.Errorf("%s%s: copy to device: %w", c.prefix, c.label(it), err))
				}
			}
		} else {
			p, alias, err := alloc(ops, it)
			if err == nil && p == 0 {
				err = t.errf(device.CodeOutOfResources, "allocation returned a nil device pointer")
			}
			if err != nil {
				return t.undoEnter(ops, items, k, i, fmt.Errorf("%s%s: alloc %d bytes: %w", c.prefix, c.label(it), len(it.Host), err))
			}
			e = t.newEntry(it.Host, p)
			e.alias = alias
			if k == Structured {
				e.structured = 1
			} else {
				e.dynamic = 1
			}
			t.tree.insert(e)
			t.found[i] = e
			t.state[i] = stNew
			if it.Type.copiesIn() && !alias {
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
			if err := free(ops, e); err != nil {
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
