package mapping_test

import (
	"fmt"
	"slices"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
)

// This file is the reference model the fuzz target (fuzz_test.go) checks
// mapping.Table against. It is written for clarity, not speed: the present
// table is a plain list of ranges, every rule of the package documentation
// (OpenMP 5.2 map semantics) is one visible step, and the device is a map of
// byte slices. Host memory is a few buffers; a range is (buffer, lo, hi).

// rng is a host range [lo, hi) of buffer buf.
type rng struct{ buf, lo, hi int }

func (r rng) empty() bool        { return r.hi <= r.lo }
func (r rng) inside(o rng) bool  { return r.buf == o.buf && o.lo <= r.lo && r.hi <= o.hi }
func (r rng) overlap(o rng) bool { return r.buf == o.buf && r.lo < o.hi && o.lo < r.hi }
func (r rng) String() string     { return fmt.Sprintf("%d:%d:%d", r.buf, r.lo, r.hi) }

// mItem is one list item of the model.
type mItem struct {
	r               rng
	typ             mapping.Type
	always, present bool
}

// mEntry is one present range of the model and its device copy.
type mEntry struct {
	r          rng
	dev        []byte // the device copy (an associated entry's is the user's memory)
	structured int
	dynamic    int
	assoc      bool
}

func (e *mEntry) zero() bool { return !e.assoc && e.structured == 0 && e.dynamic == 0 }

// model is the reference present table with its host memory and a log of
// the device operations it performed, in the fake's words.
type model struct {
	host    [][]byte
	entries []*mEntry
	log     []string
	kept    []mItem // items of the last Exit whose entries kept their counts (a failed copy or free)
	calls   int     // device operations in the current step
	failAt  int     // the device operation of this step that fails (1-based); 0: none
}

// errModel is the model's injected device failure.
var errModel = fmt.Errorf("model: injected failure")

func newModel(nbuf, size int) *model {
	m := &model{}
	for range nbuf {
		m.host = append(m.host, make([]byte, size))
	}
	return m
}

func (m *model) hostBytes(r rng) []byte { return m.host[r.buf][r.lo:r.hi] }

// op counts a device operation and reports whether it is the one to fail.
func (m *model) op(what string) error {
	m.calls++
	if m.failAt != 0 && m.calls == m.failAt {
		m.log = append(m.log, what+" failed")
		return errModel
	}
	m.log = append(m.log, what)
	return nil
}

// find returns the entry containing r (in) or, failing that, an entry
// overlapping r (over).
func (m *model) find(r rng) (in, over *mEntry) {
	for _, e := range m.entries {
		if r.inside(e.r) {
			return e, nil
		}
	}
	for _, e := range m.entries {
		if r.overlap(e.r) {
			return nil, e
		}
	}
	return nil, nil
}

func (m *model) remove(e *mEntry) {
	m.entries = slices.DeleteFunc(m.entries, func(x *mEntry) bool { return x == e })
}

// validate applies the checks every construct makes before any device
// operation, in the documented order: empty items and map types first, then
// items sharing storage, then each item against the table in list order.
func (m *model) validate(items []mItem, accept []mapping.Type, mustExist bool) ([]*mEntry, device.Code, bool) {
	for _, it := range items {
		if it.r.empty() {
			return nil, device.CodeInvalidArgument, false
		}
		if !slices.Contains(accept, it.typ) {
			return nil, device.CodeInvalidArgument, false
		}
	}
	for i := range items {
		for j := range i {
			if items[i].r.overlap(items[j].r) {
				return nil, device.CodeInvalidArgument, false
			}
		}
	}
	found := make([]*mEntry, len(items))
	for i, it := range items {
		in, over := m.find(it.r)
		if over != nil {
			return nil, device.CodeInvalidArgument, false
		}
		if in == nil && (mustExist || it.present) {
			return nil, device.CodeNotFound, false
		}
		found[i] = in
	}
	return found, 0, true
}

var (
	acceptEnterS = []mapping.Type{mapping.To, mapping.From, mapping.ToFrom, mapping.Alloc}
	acceptEnterD = []mapping.Type{mapping.To, mapping.Alloc}
	acceptExitD  = []mapping.Type{mapping.From, mapping.Release, mapping.Delete, mapping.FromDelete}
	acceptUpdate = []mapping.Type{mapping.To, mapping.From}
)

func copiesIn(t mapping.Type) bool { return t == mapping.To || t == mapping.ToFrom }
func copiesOut(t mapping.Type) bool {
	return t == mapping.From || t == mapping.ToFrom || t == mapping.FromDelete
}

// result is what a model step predicts: success, or an error with its code
// (CodeUnknown with injected for a device failure).
type result struct {
	ok       bool
	code     device.Code
	injected bool
}

func okResult() result { return result{ok: true} }

func (m *model) copyIn(e *mEntry, it mItem) error {
	if err := m.op("copyin " + it.r.String()); err != nil {
		return err
	}
	copy(e.dev[it.r.lo-e.r.lo:], m.hostBytes(it.r))
	return nil
}

func (m *model) copyOut(e *mEntry, it mItem) error {
	if err := m.op("copyout " + it.r.String()); err != nil {
		return err
	}
	copy(m.hostBytes(it.r), e.dev[it.r.lo-e.r.lo:it.r.hi-e.r.lo])
	return nil
}

// Enter is mapping.Table.Enter in the model.
func (m *model) Enter(items []mItem, k mapping.Kind) result {
	accept := acceptEnterS
	if k == mapping.Dynamic {
		accept = acceptEnterD
	}
	found, code, ok := m.validate(items, accept, false)
	if !ok {
		return result{code: code}
	}
	type done struct {
		e      *mEntry
		isNew  bool
		bumped bool
	}
	var did []done
	undo := func() result {
		for j := len(did) - 1; j >= 0; j-- {
			d := did[j]
			switch {
			case d.isNew:
				m.remove(d.e)
				m.op("free " + d.e.r.String()) // only one failure per step: this succeeds
			case d.bumped && k == mapping.Structured:
				d.e.structured--
			case d.bumped:
				d.e.dynamic--
			}
		}
		return result{code: device.CodeUnknown, injected: true}
	}
	for i, it := range items {
		e := found[i]
		if e != nil {
			d := done{e: e}
			if k == mapping.Structured {
				e.structured++
				d.bumped = true
			} else if !e.assoc {
				e.dynamic++
				d.bumped = true
			}
			did = append(did, d)
			if it.always && copiesIn(it.typ) {
				if m.copyIn(e, it) != nil {
					return undo()
				}
			}
			continue
		}
		if m.op("alloc "+it.r.String()) != nil {
			return undo()
		}
		e = &mEntry{r: it.r, dev: make([]byte, it.r.hi-it.r.lo)}
		if k == mapping.Structured {
			e.structured = 1
		} else {
			e.dynamic = 1
		}
		m.entries = append(m.entries, e)
		did = append(did, done{e: e, isNew: true})
		if copiesIn(it.typ) {
			if m.copyIn(e, it) != nil {
				return undo()
			}
		}
	}
	return okResult()
}

// Exit is mapping.Table.Exit in the model.
func (m *model) Exit(items []mItem, k mapping.Kind) result {
	accept := acceptEnterS
	if k == mapping.Dynamic {
		accept = acceptExitD
	}
	m.kept = nil
	found, code, ok := m.validate(items, accept, true)
	if !ok {
		return result{code: code}
	}
	type saved struct{ s, d int }
	old := map[*mEntry]saved{}
	for i, it := range items {
		e := found[i]
		if _, seen := old[e]; !seen {
			old[e] = saved{e.structured, e.dynamic}
		}
		switch {
		case it.typ == mapping.Delete || it.typ == mapping.FromDelete:
			if !e.assoc {
				e.dynamic = 0
			}
		case k == mapping.Structured:
			if e.structured > 0 {
				e.structured--
			}
		case !e.assoc && e.dynamic > 0:
			e.dynamic--
		}
	}
	// Copies back and frees go in reverse list order, as LLVM's.
	failed := map[*mEntry]bool{}
	res := okResult()
	for i := len(items) - 1; i >= 0; i-- {
		it, e := items[i], found[i]
		if copiesOut(it.typ) && (it.always || e.zero()) {
			if m.copyOut(e, it) != nil {
				// A structured exit releases the mapping anyway.
				if k != mapping.Structured {
					failed[e] = true
				}
				res = result{code: device.CodeUnknown, injected: true}
			}
		}
	}
	restored := map[*mEntry]bool{}
	defer func() {
		for i, it := range items {
			if restored[found[i]] {
				m.kept = append(m.kept, it)
			}
		}
	}()
	handled := map[*mEntry]bool{}
	for i := len(items) - 1; i >= 0; i-- {
		e := found[i]
		if handled[e] {
			continue
		}
		handled[e] = true
		if failed[e] {
			e.structured, e.dynamic = old[e].s, old[e].d
			restored[e] = true
			continue
		}
		if !e.zero() {
			continue
		}
		if m.op("free "+e.r.String()) != nil {
			// One retry; a structured exit then releases the mapping anyway.
			if m.op("free "+e.r.String()) != nil {
				res = result{code: device.CodeUnknown, injected: true}
				if k != mapping.Structured {
					e.structured, e.dynamic = old[e].s, old[e].d
					restored[e] = true
					continue
				}
			}
		}
		m.remove(e)
	}
	return res
}

// Update is mapping.Table.Update in the model.
func (m *model) Update(items []mItem) result {
	found, code, ok := m.validate(items, acceptUpdate, false)
	if !ok {
		return result{code: code}
	}
	for i, it := range items {
		e := found[i]
		if e == nil {
			continue
		}
		var err error
		if it.typ == mapping.To {
			err = m.copyIn(e, it)
		} else {
			err = m.copyOut(e, it)
		}
		if err != nil {
			return result{code: device.CodeUnknown, injected: true}
		}
	}
	return okResult()
}

// Associate is mapping.Table.Associate in the model; p identifies the
// user's device memory (the model only compares it for the no-op case).
func (m *model) Associate(r rng, p device.DevicePtr, user []byte) result {
	if r.empty() || p == 0 {
		return result{code: device.CodeInvalidArgument}
	}
	in, over := m.find(r)
	if in != nil && in.assoc && in.r == r && &in.dev[0] == &user[0] {
		return okResult()
	}
	if in != nil || over != nil {
		return result{code: device.CodeInvalidArgument}
	}
	m.entries = append(m.entries, &mEntry{r: r, dev: user, assoc: true})
	return okResult()
}

// Disassociate is mapping.Table.Disassociate in the model.
func (m *model) Disassociate(r rng) result {
	if r.empty() {
		return result{code: device.CodeInvalidArgument}
	}
	in, over := m.find(r)
	if in == nil || in.r.lo != r.lo {
		if in != nil || over != nil {
			return result{code: device.CodeInvalidArgument}
		}
		return result{code: device.CodeNotFound}
	}
	if !in.assoc || in.structured > 0 {
		return result{code: device.CodeInvalidArgument}
	}
	m.remove(in)
	return okResult()
}

// present reports whether r lies inside one entry (omp_target_is_present).
func (m *model) present(r rng) bool {
	if r.empty() {
		return false
	}
	in, _ := m.find(r)
	return in != nil
}
