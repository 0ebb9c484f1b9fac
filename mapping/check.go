package mapping

import (
	"slices"
	"strings"

	"github.com/gompt/gompt/device"
)

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
