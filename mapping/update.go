package mapping

import (
	"fmt"

	"github.com/gompt/gompt/device"
)

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
		if e.alias {
			continue // one memory: nothing to move
		}
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
