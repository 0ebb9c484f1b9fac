package target

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt"
)

// construct is the scratch state of one construct on one device, with the
// queue it runs on. Each device keeps its idle constructs (dev.take,
// dev.give), so a construct allocates nothing in steady state; it is the
// mapping.Ops through which the present table reaches the device.
type construct struct {
	d     *dev
	q     device.Queue
	items []mapping.Item
	ptrs  []device.DevicePtr
	args  []device.Arg
	hargs device.HostArgs

	t     *omptrt.Target // the construct's tools scope; nil with no tool
	async bool           // a nowait construct: data ops use the async kinds

	trace  bool            // the device is traced: operations make records
	prof   device.Profiler // q's own timing, if it has it
	profOn bool            // prof is switched on

	clauses int // items[:clauses] come from map clauses; the rest are implicit

	idle    device.Idler           // q's own idleness test, if it has it
	checked device.CheckedLauncher // q's launch without the checks checkRegion made, if it has it
	shape   device.Shape           // the launch's shape, for checked (passed by pointer)
	waiter  device.Waiter          // q's own wait for another queue's event, if it has it
	deps    []dep                  // other constructs' work to wait for (mapping.Ops.After)
	dchecks []device.Event         // depend events q waits for on the device, whose errors are checked later
	ferr    error                  // the first error of c's own queue work found by a sync inside the construct (Fence, Free), reported at end

	noCopyOut bool // the construct's checked kernel failed: its exit copies nothing back
}

// initialScratch holds scratch constructs for the initial device, which
// has no queue.
var initialScratch = sync.Pool{New: func() any { return new(construct) }}

// begin takes a construct of d for the tools scope t.
func begin(d *dev, t *omptrt.Target, async bool) (*construct, error) {
	c, err := d.take()
	if err != nil {
		return nil, err
	}
	c.t, c.async = t, async
	c.startTracing()
	return c, nil
}

// end syncs the construct's queue, gives the construct back, and joins the
// sync error to err.
func (c *construct) end(err error) error {
	if len(c.deps) > 0 {
		clear(c.deps)
		c.deps = c.deps[:0]
	}
	if len(c.dchecks) > 0 {
		// The queue waited on the device for constructs c depends on: a
		// failure of theirs is c's as a dependence error, in place of
		// the queue error it caused.
		serr := c.q.Sync()
		if derr := c.checkDeps(); derr != nil {
			serr = derr
		}
		if err == nil {
			err = serr
		} else if serr != nil && !errors.Is(err, ErrDependence) {
			err = errors.Join(err, serr)
		}
	}
	if c.ferr != nil {
		err = errors.Join(err, c.ferr)
		c.ferr = nil
	}
	clear(c.items)
	c.items, c.ptrs, c.args = c.items[:0], c.ptrs[:0], c.args[:0]
	if c.t.TracePending() {
		// The records need the operations' times: wait for them here,
		// before c can go to another goroutine.
		if serr := c.q.Sync(); serr != nil && err == nil {
			err = serr
		}
		c.t.FlushTrace()
	}
	c.t = nil
	if c.d.infoOn&infoTable != 0 {
		c.d.infof(infoTable, "present table after the construct: %d entries", c.d.table.Len())
		for _, e := range c.d.table.Entries() {
			c.d.infof(infoTable, "  %v", e)
		}
	}
	if qerr := c.d.give(c); qerr != nil && err == nil {
		err = qerr
	}
	return err
}

// setItems takes the construct's list items. The same slice named in two
// clauses (map(to: a) map(from: a)) is one list item with both motions, as
// OpenMP allows; other overlaps are left for the mapping table to refuse.
func (c *construct) setItems(maps []Map) {
outer:
	for _, m := range maps {
		for i := range c.items {
			it := &c.items[i]
			if len(it.Host) == len(m.item.Host) && len(it.Host) > 0 && addr(it.Host) == addr(m.item.Host) {
				it.Type = mergeTypes(it.Type, m.item.Type)
				it.Always = it.Always || m.item.Always
				it.Present = it.Present || m.item.Present
				continue outer
			}
		}
		c.items = append(c.items, m.item)
	}
	c.clauses = len(c.items)
}

// mergeTypes is the map type of one list item named with types a and b.
// A from (or tofrom) item that is also deleted is copied back and then
// deleted (mapping.FromDelete): the copy is not dropped.
func mergeTypes(a, b mapping.Type) mapping.Type {
	in := a == mapping.To || a == mapping.ToFrom || b == mapping.To || b == mapping.ToFrom
	out := a == mapping.From || a == mapping.ToFrom || a == mapping.FromDelete ||
		b == mapping.From || b == mapping.ToFrom || b == mapping.FromDelete
	del := a == mapping.Delete || a == mapping.FromDelete || b == mapping.Delete || b == mapping.FromDelete
	switch {
	case del && (a == mapping.ToFrom || b == mapping.ToFrom):
		return mapping.ToFrom // no exit data accepts it: refused as tofrom
	case del && out:
		return mapping.FromDelete
	case del:
		return mapping.Delete
	}
	switch {
	case in && out:
		return mapping.ToFrom
	case in:
		return mapping.To
	case out:
		return mapping.From
	case a == mapping.Release || b == mapping.Release:
		return mapping.Release
	}
	return mapping.Alloc
}

// op returns the data-op kind for c: the async kinds in nowait constructs.
func (c *construct) op(k ompt.DataOpKind) ompt.DataOpKind {
	if !c.async {
		return k
	}
	switch k {
	case ompt.DataOpAlloc:
		return ompt.DataOpAllocAsync
	case ompt.DataOpTransferToDevice:
		return ompt.DataOpTransferToDeviceAsync
	case ompt.DataOpTransferFromDevice:
		return ompt.DataOpTransferFromDeviceAsync
	case ompt.DataOpDelete:
		return ompt.DataOpDeleteAsync
	}
	return k
}

// Alloc implements mapping.Ops.
func (c *construct) Alloc(it *mapping.Item, size int) (device.DevicePtr, error) {
	c.t.DataOpBegin(c.op(ompt.DataOpAlloc), addr(it.Host), ompt.InitialDevice, 0, c.d.num, uint64(size))
	var t0 int64
	if c.trace {
		t0 = c.t.TraceNow()
	}
	b, err := c.d.d.Alloc(size)
	c.t.DataOpEnd(uintptr(b.Ptr))
	if c.trace {
		c.t.TraceDone(t0)
	}
	if err != nil {
		return 0, err
	}
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "alloc %d bytes at %v for %s", size, b.Ptr, itemName(it))
	}
	return b.Ptr, nil
}

// Alias implements mapping.Aliaser: with GOMPT_ZERO_COPY=on, on a device
// that can, a new entry is the program's memory itself. Tools see it as
// what it is, an association of the host range with a device address
// (target_data_op associate, host to device, the item's bytes), and no
// transfer; its release is a disassociate. ok false, with nothing
// reported, for a device that copies or a slice it cannot use in place:
// the table allocates and copies then, and tools see that.
func (c *construct) Alias(it *mapping.Item) (device.DevicePtr, bool, error) {
	a := c.d.alias
	if a == nil {
		return 0, false, nil
	}
	// The tools hear of the association once it is made (its begin and
	// end callbacks come together; a trace record spans the call): a
	// slice the device does not alias is an alloc and a copy.
	var t0 int64
	if c.trace {
		t0 = c.t.TraceNow()
	}
	b, ok, err := a.Alias(it.Host)
	if ok || err != nil {
		c.t.DataOpBegin(ompt.DataOpAssociate, addr(it.Host), ompt.InitialDevice, 0, c.d.num, uint64(len(it.Host)))
		c.t.DataOpEnd(uintptr(b.Ptr))
		if c.trace {
			c.t.TraceDone(t0)
		}
	}
	if err != nil || !ok {
		return 0, false, err
	}
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "alias %d bytes of %s at %v (the program's memory: no copies)", len(it.Host), itemName(it), b.Ptr)
	}
	return b.Ptr, true, nil
}

// Unalias implements mapping.Aliaser: it ends an alias as Free frees a
// buffer, after the construct's work (and other constructs' work on it)
// is done, so that the host sees what the kernels wrote.
func (c *construct) Unalias(p device.DevicePtr, size int, host []byte) error {
	c.keep(c.awaitHost())
	c.keep(c.q.Sync())
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "unalias %d bytes at %v (host %#x)", size, p, addr(host))
	}
	c.t.DataOpBegin(ompt.DataOpDisassociate, addr(host), ompt.InitialDevice, uintptr(p), c.d.num, uint64(size))
	var t0 int64
	if c.trace {
		t0 = c.t.TraceNow()
	}
	err := c.d.d.Free(p)
	c.t.DataOpEnd(uintptr(p))
	if c.trace {
		c.t.TraceDone(t0)
	}
	return err
}

// Fence implements mapping.Ops: an event after the work enqueued on c's
// queue so far, or nil when the queue says it is idle (its work done and
// none of it failed: device.Idler). Without an event (Record failed) it
// waits for the queue itself, so there is nothing left to wait for.
func (c *construct) Fence() device.Event {
	if c.idle != nil && c.idle.Idle() {
		return nil
	}
	ev, err := c.q.Record()
	if err != nil {
		c.keep(c.q.Sync())
		return nil
	}
	return ev
}

// dep is one event c waits for; fill: its failure is c's failure too;
// depend: it completes a construct c depends on (depend clause), whose
// failure is c's too.
type dep struct {
	ev     device.Event
	fill   bool
	depend bool
}

// keep remembers err, if it is the first, for the construct's end.
func (c *construct) keep(err error) {
	if err != nil && c.ferr == nil {
		c.ferr = err
	}
}

// After implements mapping.Ops: c's next device operation waits for ev.
func (c *construct) After(ev device.Event, fill bool) {
	c.deps = append(c.deps, dep{ev: ev, fill: fill})
}

// await waits for the other constructs' work that c's next device
// operation depends on (see mapping.Ops.After). With none, it is one
// length check.
func (c *construct) await() error {
	if len(c.deps) == 0 {
		return nil
	}
	return c.awaitDeps()
}

// awaitDevice is await before an operation that reads or writes only
// device memory (a copy in, a launch): a predecessor's event of a depend
// clause is waited for by c's queue on the device (device.Waiter) where
// it can be, so this goroutine goes on enqueuing; its failure is checked
// before anything reaches the host (awaitHost) and at the construct's end.
func (c *construct) awaitDevice() error {
	if len(c.deps) == 0 {
		return nil
	}
	if c.waiter != nil {
		n := 0
		for _, d := range c.deps {
			if d.depend {
				ok, err := c.waiter.WaitEvent(d.ev)
				if err != nil {
					return err
				}
				if ok {
					c.dchecks = append(c.dchecks, d.ev)
					continue
				}
			}
			c.deps[n] = d
			n++
		}
		clear(c.deps[n:])
		c.deps = c.deps[:n]
	}
	return c.await()
}

// awaitHost is await before an operation whose result the host sees (a
// copy out, a free): every predecessor's work, also what c's queue waits
// for on the device, is done and did not fail.
func (c *construct) awaitHost() error {
	err := c.await()
	if len(c.dchecks) > 0 {
		if derr := c.checkDeps(); err == nil {
			err = derr
		}
	}
	return err
}

// checkDeps waits for the events c's queue waits for on the device and
// returns the first failure among them, as a dependence error.
func (c *construct) checkDeps() error {
	var err error
	for i, ev := range c.dchecks {
		if werr := ev.Wait(); werr != nil && err == nil {
			err = dependErr(werr)
		}
		c.dchecks[i] = nil
	}
	c.dchecks = c.dchecks[:0]
	return err
}

func (c *construct) awaitDeps() error {
	var err error
	for i, d := range c.deps {
		// Another construct's failed kernel is reported to that
		// construct; a failed fill leaves this construct's input wrong.
		if werr := d.ev.Wait(); werr != nil && err == nil {
			switch {
			case d.depend:
				err = dependErr(werr)
			case d.fill:
				err = fmt.Errorf("target: %s: the copy another construct made of shared data to the device failed: %w", c.d.id, werr)
			}
		}
		c.deps[i] = dep{}
	}
	c.deps = c.deps[:0]
	return err
}

// Free implements mapping.Ops. It waits for the queue first, so a copy out
// of the buffer has completed before the buffer goes, and for other
// constructs' work on it.
//
// The waits' own errors (a kernel of this construct that failed, a fill
// that failed) are not the free's: the free goes ahead once the work is
// done, and the construct returns them when it ends. (Returned from here,
// the table's retry of the free would succeed and drop them.)
func (c *construct) Free(p device.DevicePtr, size int, host []byte) error {
	c.keep(c.awaitHost())
	c.keep(c.q.Sync())
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "free %d bytes at %v (host %#x)", size, p, addr(host))
	}
	c.t.DataOpBegin(c.op(ompt.DataOpDelete), uintptr(p), c.d.num, 0, ompt.InitialDevice, 0)
	var t0 int64
	if c.trace {
		t0 = c.t.TraceNow()
	}
	err := c.d.d.Free(p)
	c.t.DataOpEnd(0)
	if c.trace {
		c.t.TraceDone(t0)
	}
	return err
}

// CopyIn implements mapping.Ops.
func (c *construct) CopyIn(dst device.DevicePtr, src []byte) error {
	if err := c.awaitDevice(); err != nil {
		return err
	}
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "copy %d bytes host %#x -> device %v", len(src), addr(src), dst)
	}
	c.t.DataOpBegin(c.op(ompt.DataOpTransferToDevice), addr(src), ompt.InitialDevice, uintptr(dst), c.d.num, uint64(len(src)))
	var (
		ev  device.Event
		eve error
	)
	if c.trace {
		ev, eve = c.bracket()
	}
	err := c.q.CopyIn(dst, src)
	c.t.DataOpEnd(uintptr(dst))
	if c.trace {
		c.asyncOp(ev, eve, ompt.NativeDataMotionExplicit, nil)
	}
	return err
}

// CopyOut implements mapping.Ops.
func (c *construct) CopyOut(dst []byte, src device.DevicePtr) error {
	if c.noCopyOut {
		return nil
	}
	if err := c.awaitHost(); err != nil {
		return err
	}
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "copy %d bytes device %v -> host %#x", len(dst), src, addr(dst))
	}
	c.t.DataOpBegin(c.op(ompt.DataOpTransferFromDevice), uintptr(src), c.d.num, addr(dst), ompt.InitialDevice, uint64(len(dst)))
	var (
		ev  device.Event
		eve error
	)
	if c.trace {
		ev, eve = c.bracket()
	}
	err := c.q.CopyOut(dst, src)
	c.t.DataOpEnd(addr(dst))
	if c.trace {
		c.asyncOp(ev, eve, ompt.NativeDataMotionExplicit, nil)
	}
	return err
}

// addr is the host address of b's first byte: the start of mapping.Span(b).
func addr(b []byte) uintptr {
	a, _ := mapping.Span(b)
	return a
}

func itemName(it *mapping.Item) string {
	if it.Name != "" {
		return it.Name
	}
	return fmt.Sprintf("host %#x", addr(it.Host))
}

// reportMap tells the tools every item of the construct (target_map). The
// device addresses are c.ptrs when Enter filled them, else looked up.
func (c *construct) reportMap() {
	if !c.t.WantsMap() {
		return
	}
	n := len(c.items)
	hosts, devs := make([]uintptr, n), make([]uintptr, n)
	sizes, flags := make([]uint64, n), make([]uint32, n)
	for i := range c.items {
		it := &c.items[i]
		hosts[i], sizes[i] = addr(it.Host), uint64(len(it.Host))
		if i < len(c.ptrs) && c.ptrs[i] != 0 {
			devs[i] = uintptr(c.ptrs[i])
		} else if p, err := c.d.table.Translate(it.Host); err == nil {
			devs[i] = uintptr(p)
		}
		flags[i] = mapFlags(it, i >= c.clauses)
	}
	c.t.Map(hosts, devs, sizes, flags)
}

// reportExitMap reports the items of an exit construct before they are
// unmapped, while their device addresses can still be looked up.
func (c *construct) reportExitMap() {
	if c.t.WantsMap() {
		c.ptrs = c.ptrs[:0]
		c.reportMap()
	}
}

// mapFlags gives an item's OMPT map flags; implicit marks an item the
// runtime added for a kernel argument no clause named.
func mapFlags(it *mapping.Item, implicit bool) uint32 {
	var f uint32
	switch it.Type {
	case mapping.To:
		f = ompt.MapFlagTo
	case mapping.From:
		f = ompt.MapFlagFrom
	case mapping.ToFrom:
		f = ompt.MapFlagTo | ompt.MapFlagFrom
	case mapping.Alloc:
		f = ompt.MapFlagAlloc
	case mapping.Release:
		f = ompt.MapFlagRelease
	case mapping.Delete:
		f = ompt.MapFlagDelete
	case mapping.FromDelete:
		f = ompt.MapFlagFrom | ompt.MapFlagDelete
	}
	if implicit {
		f |= ompt.MapFlagImplicit
	}
	return f
}

// translate finds host's device address: the construct's own items first
// (no table lookup for the common case), then the present table.
func (c *construct) translate(host []byte) (device.DevicePtr, error) {
	for j := range c.items {
		h := c.items[j].Host
		if len(h) == len(host) && addr(h) == addr(host) {
			return c.ptrs[j], nil
		}
	}
	return c.d.table.Translate(host)
}

// covered reports whether host lies inside one of items.
func covered(host []byte, items []mapping.Item) bool {
	lo, hi := mapping.Span(host)
	for i := range items {
		l, h := mapping.Span(items[i].Host)
		if lo >= l && hi <= h {
			return true
		}
	}
	return false
}

// overlapsAny reports whether host shares a byte with one of items.
func overlapsAny(host []byte, items []mapping.Item) bool {
	lo, hi := mapping.Span(host)
	for i := range items {
		l, h := mapping.Span(items[i].Host)
		if lo < h && l < hi {
			return true
		}
	}
	return false
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

var argNames = func() (s [16]string) {
	for i := range s {
		s[i] = fmt.Sprintf("argument %d", i)
	}
	return
}()

// argName labels an implicitly mapped argument without allocating.
func argName(i int) string {
	if i < len(argNames) {
		return argNames[i]
	}
	return fmt.Sprintf("argument %d", i)
}
