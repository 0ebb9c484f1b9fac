package mapping

import "github.com/gompt/gompt/device"

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

// Aliaser is an Ops that may map a list item by using the program's
// memory in place: OpenMP's unified-shared-memory semantics, on a device
// that shares the host's memory, where the program asked for them
// (target's GOMPT_ZERO_COPY). Such an entry is counted, looked up,
// translated and released as any other, but no data moves for it: Enter,
// Exit and Update make no CopyIn or CopyOut of it (the device and the
// host see one memory), and its release calls Unalias in place of Free.
type Aliaser interface {
	// Alias returns the device address of a new entry for it that is
	// it.Host itself, or false, and the table allocates and copies as
	// for any Ops. A failure is the map's, as Alloc's would be.
	Alias(it *Item) (p device.DevicePtr, ok bool, err error)
	// Unalias ends an alias Alias made, of size bytes, of host.
	Unalias(p device.DevicePtr, size int, host []byte) error
}

// alloc makes the device side of a new entry for it: an alias where ops
// offers one, else an allocation.
func alloc(ops Ops, it *Item) (p device.DevicePtr, alias bool, err error) {
	if a, ok := ops.(Aliaser); ok {
		if p, ok, err := a.Alias(it); err != nil || ok {
			return p, ok, err
		}
	}
	p, err = ops.Alloc(it, len(it.Host))
	return p, false, err
}

// free releases e's device side: Unalias for an alias, else Free.
func free(ops Ops, e *entry) error {
	if e.alias {
		return ops.(Aliaser).Unalias(e.dev, e.size(), e.host)
	}
	return ops.Free(e.dev, e.size(), e.host)
}

// user is the completion of one Ops's work on an entry.
type user struct {
	ops Ops
	ev  device.Event
}

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
