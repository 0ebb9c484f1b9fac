package mapping

import "github.com/gompt/gompt/device"

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
