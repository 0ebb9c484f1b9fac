package mapping

import (
	"errors"
	"fmt"

	"github.com/gompt/gompt/device"
)

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
		if it.Type.copiesOut() && (it.Always || e.zero()) && !e.alias {
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
		if err := free(ops, e); err != nil {
			// One retry: a transient failure must not strand the buffer.
			if err2 := free(ops, e); err2 != nil {
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
