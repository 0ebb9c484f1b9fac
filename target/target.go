package target

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/internal/callsite"
	"github.com/gompt/gompt/internal/hostexec"
	"github.com/gompt/gompt/internal/omptrt"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
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

// Target runs r on its device and returns when the kernel has run and the
// map clauses have been undone (the target construct). Safe for concurrent
// use by many goroutines.
//
//go:noinline
func Target(r Region) error {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	deps, err := takeDeps(&r)
	if err != nil {
		return err
	}
	n, d, f, err := prepare(&r)
	if err != nil {
		return err
	}
	t := omptrt.TargetBegin(ompt.KindTarget, n, pc)
	if len(deps) == 0 {
		err = runTarget(&r, d, f, t, false, nil) // the common case: no task, no closure
	} else {
		reportDeps(t, deps)
		err = runDeps(deps, func(tk *Task) error { return runTarget(&r, d, f, t, false, tk) })
	}
	t.End()
	return err
}

// takeDeps moves r's depend items out of r.Maps.
func takeDeps(r *Region) (deps []Map, err error) {
	if len(r.Maps) == 0 {
		return nil, nil
	}
	r.Maps, deps, err = splitDeps(r.Maps)
	return deps, err
}

// TargetNowait starts r and returns at once (target nowait). The slices r
// maps must not be touched until the task's Wait returns.
//
//go:noinline
func TargetNowait(r Region) *Task {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	deps, err := takeDeps(&r)
	if err != nil {
		return failed(err)
	}
	n, d, f, err := prepare(&r)
	if err != nil {
		return failed(err)
	}
	t := omptrt.TargetBegin(ompt.KindTargetNowait, n, pc)
	reportDeps(t, deps)
	return spawnDeps(deps, func(tk *Task) error {
		err := runTarget(&r, d, f, t, true, tk)
		t.End()
		return err
	})
}

// prepare resolves r's device, checks r, and loads its kernel there, all
// before the construct begins for the tools: device_initialize and
// device_load come before the first target event that needs them. A
// kernel the device has loaded already (its kernel cache, generic.Kernels)
// had its declaration checked then, and is not checked again.
func prepare(r *Region) (n int, d *dev, f device.Function, err error) {
	if n, d, err = open(r.Device.Num()); err != nil {
		return
	}
	if d != nil {
		var ok bool
		if f, ok = d.kernels.Find(r.Kernel); ok {
			err = checkRegion(r, d, true)
			return
		}
	}
	if err = checkRegion(r, d, false); err != nil {
		return
	}
	if d != nil {
		f, err = d.loadNew(r.Kernel)
	}
	return
}

// runTarget is the body of a target construct on d (nil for the initial
// device), inside the tools scope t.
//
// tk is the construct's task when it has depend items (else nil): its
// predecessors' failures are its own, their device work is waited for
// by its device operations, and once its own work is enqueued its
// dependents are released.
func runTarget(r *Region, d *dev, f device.Function, t *omptrt.Target, async bool, tk *Task) error {
	if d == nil {
		if err := tk.waitHost(); err != nil {
			return err
		}
		return runInitial(r, t)
	}
	if tk == nil { // no depend items: nothing to wait for or release
		c, err := begin(d, t, async)
		if err != nil {
			return err
		}
		return c.end(c.target(r, f))
	}
	if err := tk.predErr(); err != nil {
		return err
	}
	c, err := begin(d, t, async)
	if err != nil {
		return err
	}
	tk.attach(c)
	err = c.target(r, f)
	tk.publish(c, err)
	return c.end(err)
}

// toolsOn reports whether a tool is attached, starting the runtime (and
// so the tools) first. Public entry points then take their call site for
// the tools' code pointer with callsite.Parent, called directly from the
// entry point, which is marked go:noinline so its frame is its own.
func toolsOn() bool {
	state()
	return omptrt.Enabled()
}

// checkRegion validates r for device d (nil for the initial device)
// before any device work, so a bad region changes nothing. The rules are
// the same on every device; only the limits are each device's. It is on
// the hot path: the common cases cost a few comparisons, and the messages
// are made by functions called only on error. loaded says r's kernel is
// loaded on d: not nil, and its declaration checked (checkKernel) at its
// first load.
func checkRegion(r *Region, d *dev, loaded bool) error {
	k := r.Kernel
	if !loaded {
		if k == nil {
			return errors.New("target: region has no kernel")
		}
		if err := checkKernel(k); err != nil {
			return err
		}
	}
	if len(r.Maps) > 0 {
		if err := checkMaps(r.Maps); err != nil {
			return err
		}
	}
	s := &r.Shape
	if err := device.CheckShape(s); err != nil {
		return fmt.Errorf("target: kernel %s: %w", k.Name, err)
	}
	info := &initialInfo
	if d != nil {
		info = &d.info
	}
	if (s.Size[1] > 1 || s.Size[2] > 1) && s.Dims() > k.IterationDims() ||
		s.Teams > 0 && info.MaxTeams > 0 && s.Teams > info.MaxTeams ||
		s.Threads > 0 && (info.MaxThreadsPerTeam > 0 && s.Threads > info.MaxThreadsPerTeam || k.MaxThreads > 0 && s.Threads > k.MaxThreads) {
		return shapeErr(k, s, d, info)
	}
	if len(r.Args) != len(k.Params) {
		return fmt.Errorf("target: kernel %s takes %d arguments, got %d", k.Name, len(k.Params), len(r.Args))
	}
	buffers := false
	for i := range k.Params {
		p, a := &k.Params[i], &r.Args[i]
		if a.kind == argScalar && a.scalar == p.Kind {
			continue // int64, float32 or float64, passed as such
		}
		if err := checkArg(k, i, p, a); err != nil {
			return err
		}
		buffers = buffers || p.Kind == device.ParamBuffer
	}
	if !buffers {
		return nil
	}
	// Lengths last: a Len reads scalars checked above.
	for i := range k.Params {
		if k.Params[i].Kind == device.ParamBuffer {
			if err := checkLen(r, d, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkedKernels remembers the kernels whose declaration passed
// device.Kernel.Check, so each is checked once, at its first construct.
// The hot path only reads: one atomic load for the kernel checked last
// (a program with one kernel), else a lookup in a copy-on-write map, so
// goroutines launching different kernels do not write one shared word at
// every construct. A declaration that fails is checked again at every
// use: it is never run.
var checkedKernels struct {
	last atomic.Pointer[Kernel]
	mu   sync.Mutex
	m    atomic.Pointer[map[*Kernel]struct{}]
}

// checkKernel reports the first mistake in k's declaration (device.Kernel's
// Check: a missing or repeated parameter name, an unknown kind, Dims
// outside 0..3, ...), so a kernel declared wrong is refused before any
// device work instead of running with its arguments checked against a
// meaningless declaration. k must not be changed after its first use.
func checkKernel(k *Kernel) error {
	if checkedKernels.last.Load() == k {
		return nil
	}
	if m := checkedKernels.m.Load(); m != nil {
		if _, ok := (*m)[k]; ok {
			return nil
		}
	}
	if err := k.Check(); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	checkedKernels.mu.Lock()
	old := checkedKernels.m.Load()
	m := make(map[*Kernel]struct{}, 1+len(deref(old)))
	for kk := range deref(old) {
		m[kk] = struct{}{}
	}
	m[k] = struct{}{}
	checkedKernels.m.Store(&m)
	checkedKernels.mu.Unlock()
	checkedKernels.last.Store(k)
	return nil
}

// initialInfo holds the initial device's launch limits: its kernels run on
// the team executor the host device runs them on, so they are the host
// device's.
var initialInfo = device.Info{MaxThreadsPerTeam: host.MaxThreadsPerTeam, MaxTeams: hostexec.MaxTeams}

// shapeErr says why checkRegion refused the valid shape s for kernel k on
// device d, whose limits are info: more dimensions than k iterates over,
// or teams or threads beyond the device's or the kernel's limits.
func shapeErr(k *Kernel, s *Shape, d *dev, info *device.Info) error {
	if dims := s.Dims(); dims > k.IterationDims() {
		return fmt.Errorf("target: kernel %s: launch shape size %v uses %d dimensions; the kernel iterates over %d (Kernel.Dims)",
			k.Name, s.Size, dims, k.IterationDims())
	}
	if info.MaxTeams > 0 && s.Teams > info.MaxTeams {
		return fmt.Errorf("target: kernel %s: launch shape: %d teams; %s runs at most %d (MaxTeams)", k.Name, s.Teams, devName(d), info.MaxTeams)
	}
	if info.MaxThreadsPerTeam > 0 && s.Threads > info.MaxThreadsPerTeam {
		return fmt.Errorf("target: kernel %s: launch shape: %d threads per team; %s runs at most %d (MaxThreadsPerTeam)",
			k.Name, s.Threads, devName(d), info.MaxThreadsPerTeam)
	}
	return fmt.Errorf("target: kernel %s: launch shape: %d threads per team; the kernel runs at most %d (Kernel.MaxThreads)",
		k.Name, s.Threads, k.MaxThreads)
}

// devName names d in messages; nil is the initial device.
func devName(d *dev) string {
	if d == nil {
		return initialDevice
	}
	return fmt.Sprintf("device %d (%s)", d.num, d.id)
}

// checkArg checks argument a for parameter i (p) of k, all but its length.
func checkArg(k *Kernel, i int, p *device.Param, a *Arg) error {
	switch {
	case a.kind == 0:
		return fmt.Errorf("target: kernel %s argument %d (%s): zero target.Arg; build arguments with target.Slice, target.Ptr, target.Int, target.Float32 or target.Float64",
			k.Name, i, p.Name)
	case p.Kind == device.ParamBuffer && a.kind == argScalar:
		return fmt.Errorf("target: kernel %s argument %d (%s): want a buffer (target.Slice or target.Ptr), got a scalar", k.Name, i, p.Name)
	case p.Kind != device.ParamBuffer && a.kind != argScalar:
		return fmt.Errorf("target: kernel %s argument %d (%s): want a %s scalar, got a slice or pointer", k.Name, i, p.Name, p.Kind)
	case a.kind == argScalar && scalarOf(p.Kind) != a.scalar:
		return fmt.Errorf("target: kernel %s argument %d (%s): want a scalar of type %s (target.%s), got target.%s",
			k.Name, i, p.Name, p.Kind, scalarFunc[scalarOf(p.Kind)], scalarFunc[a.scalar])
	case a.kind == argScalar && (p.Kind == device.ParamInt32 || p.Kind == device.ParamUint32):
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		if p.Kind == device.ParamUint32 {
			lo, hi = 0, math.MaxUint32
		}
		if v := int64(a.bits); v < lo || v > hi {
			return fmt.Errorf("target: kernel %s argument %d (%s): %d does not fit the %s parameter (%d to %d)", k.Name, i, p.Name, v, p.Kind, lo, hi)
		}
	case a.kind == argSlice && len(a.host) == 0:
		return fmt.Errorf("target: kernel %s argument %d (%s): empty or nil slice", k.Name, i, p.Name)
	case a.kind == argSlice && a.et.pointers:
		return pointersErr(fmt.Sprintf("kernel %s argument %d (%s)", k.Name, i, p.Name), a.et)
	case a.kind == argSlice && p.Elem != 0 && a.et.kind != p.Elem:
		return fmt.Errorf("target: kernel %s argument %d (%s): want a slice of %s (the parameter's element type), got []%s",
			k.Name, i, p.Name, p.Elem, a.et.name)
	case a.kind == argPtr && a.ptr == 0:
		return fmt.Errorf("target: kernel %s argument %d (%s): nil device pointer", k.Name, i, p.Name)
	}
	return nil
}

// checkLen checks that buffer argument i of r holds the elements its
// parameter's Len asks for: a slice by its length, a device pointer by the
// bytes from it to the end of its allocation where the runtime knows the
// allocation (AllocMem, mapped buffers, the initial device's memory).
func checkLen(r *Region, d *dev, i int) error {
	k, p, a := r.Kernel, &r.Kernel.Params[i], &r.Args[i]
	need, err := k.NeedLen(i, r.Shape, func(j int) uint64 { return r.Args[j].bits })
	if err != nil {
		return fmt.Errorf("target: kernel %s argument %d (%s): %w", k.Name, i, p.Name, err)
	}
	if need == 0 {
		return nil
	}
	have := len(a.host)
	if a.kind == argPtr {
		if d == nil {
			b, err := state().initial.resolve(a.ptr)
			if err != nil {
				return fmt.Errorf("target: kernel %s argument %d (%s): %w", k.Name, i, p.Name, err)
			}
			have = len(b)
		} else if have, err = d.extent(a.ptr); err != nil {
			return nil // not the runtime's: the plugin checks the pointer
		}
	}
	if n := have / p.ElemSize(); n < need {
		unit, what := "bytes", "slice"
		if p.Elem != 0 {
			unit = p.Elem.String() + " elements"
		}
		if a.kind == argPtr {
			what = fmt.Sprintf("device memory from %v to the end of its allocation", a.ptr)
		}
		return fmt.Errorf("target: kernel %s argument %d (%s): %s of %d %s, but the kernel needs %d (Len %q)",
			k.Name, i, p.Name, what, n, unit, need, p.Len)
	}
	return nil
}

// scalarOf is the Arg constructor's kind that fits a scalar parameter:
// target.Int for every integer kind.
func scalarOf(k device.ParamKind) device.ParamKind {
	switch k {
	case device.ParamFloat32, device.ParamFloat64:
		return k
	}
	return device.ParamInt64
}

var scalarFunc = map[device.ParamKind]string{
	device.ParamInt64: "Int", device.ParamFloat32: "Float32", device.ParamFloat64: "Float64",
}

// target maps, launches and unmaps on c's device.
func (c *construct) target(r *Region, f device.Function) error {
	d := c.d
	c.setItems(r.Maps)
	// Slices passed to the kernel that no clause maps are mapped tofrom
	// for the region, as OpenMP maps arrays a target region uses: a
	// present one has its count raised (so it stays mapped, and its fill
	// is waited for, while the kernel runs), an absent one is copied. One
	// that partly overlaps another item is left to the present table.
	for i := range r.Args {
		a := &r.Args[i]
		if a.kind != argSlice || covered(a.host, c.items) || overlapsAny(a.host, c.items) {
			continue
		}
		c.items = append(c.items, mapping.Item{Host: a.host, Type: mapping.ToFrom, Name: argName(i)})
	}
	c.ptrs = grow(c.ptrs, len(c.items))
	if len(c.items) > 0 {
		if err := c.enterItems(mapping.Structured); err != nil {
			return err
		}
	}
	err := c.launch(r, f)
	if len(c.items) > 0 {
		if xerr := d.table.Exit(c, c.items, mapping.Structured); xerr != nil {
			err = errors.Join(err, xerr)
		}
	}
	return err
}

func (c *construct) launch(r *Region, f device.Function) error {
	c.shape = r.Shape
	c.args = grow(c.args, len(r.Args))
	for i := range r.Args {
		a := &r.Args[i]
		switch a.kind {
		case argScalar:
			c.args[i] = device.Arg{Bits: a.bits}
		case argPtr:
			c.args[i] = device.Arg{Ptr: a.ptr}
		case argSlice:
			p, err := c.translate(a.host)
			if err != nil {
				return fmt.Errorf("target: kernel %s argument %d (%s): %w", r.Kernel.Name, i, r.Kernel.Params[i].Name, err)
			}
			c.args[i] = device.Arg{Ptr: p}
		}
	}
	if c.d.infoOn&infoLaunch != 0 {
		c.d.infof(infoLaunch, "launch %s size %v teams %d threads %d", r.Kernel.Name, r.Shape.Size, r.Shape.Teams, r.Shape.Threads)
	}
	if err := c.awaitDevice(); err != nil {
		return err
	}
	c.t.SubmitBegin(uint32(r.Shape.Teams))
	var (
		ev  device.Event
		eve error
	)
	if c.trace {
		ev, eve = c.bracket()
	}
	var err error
	if c.checked != nil {
		// checkRegion checked r for this device before the construct
		// began; the shape goes by pointer, from c, which outlives the
		// call (a pointer into r would move r to the heap).
		err = c.checked.LaunchChecked(f, &c.shape, c.args)
	} else {
		err = c.q.Launch(f, r.Shape, c.args)
	}
	c.t.SubmitEnd()
	if c.trace {
		c.asyncOp(ev, eve, ompt.NativeKernelExecution, r.Kernel)
	}
	return err
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

// runInitial runs r on the initial device: maps copy nothing and the
// kernel's Go image runs on the program's own slices. The map clauses are
// checked as an offload device's present table checks them (map types,
// empty and overlapping items). The slices passed to the kernel are not
// items: everything is present on the initial device, as a slice entered
// beforehand is on an offload device.
func runInitial(reg *Region, t *omptrt.Target) error {
	f := reg.Kernel.Host()
	if f == nil {
		return fmt.Errorf("target: kernel %s has no Go image, so it cannot run on the initial device", reg.Kernel.Name)
	}
	c := initialScratch.Get().(*construct)
	defer func() {
		clear(c.hargs.Bufs)
		c.hargs.Kernel = nil
		clear(c.items)
		c.items = c.items[:0]
		initialScratch.Put(c)
	}()
	c.setItems(reg.Maps)
	if len(c.items) > 0 {
		if err := mapping.CheckEnter(initialDevice, mapping.Structured, c.items); err != nil {
			return err
		}
	}
	c.hargs.Kernel = reg.Kernel
	c.hargs.Bufs = grow(c.hargs.Bufs, len(reg.Args))
	c.hargs.Args = grow(c.hargs.Args, len(reg.Args))
	for i := range reg.Args {
		a := &reg.Args[i]
		c.hargs.Bufs[i] = nil
		c.hargs.Args[i] = device.Arg{Bits: a.bits, Ptr: a.ptr}
		switch a.kind {
		case argSlice:
			c.hargs.Bufs[i] = a.host
		case argPtr:
			b, err := state().initial.resolve(a.ptr)
			if err != nil {
				return fmt.Errorf("target: kernel %s argument %d: %w", reg.Kernel.Name, i, err)
			}
			c.hargs.Bufs[i] = b
		}
	}
	t.SubmitBegin(uint32(reg.Shape.Teams))
	err := hostexec.Default().Try(f, &c.hargs, &reg.Shape)
	t.SubmitEnd()
	if tp, ok := err.(*hostexec.TeamPanic); ok {
		return fmt.Errorf("target: kernel %s on the initial device panicked in team %d of %d: %v", reg.Kernel.Name, tp.Team, tp.Teams, tp.Value)
	}
	return err
}

// Task is a construct running asynchronously (a nowait form), or a Go
// task (Go). Other constructs may depend on it (DependOn).
type Task struct {
	done chan struct{}
	err  error
	ds   depState
}

// Wait blocks until the construct has finished and returns its error.
// It may be called more than once and from several goroutines.
func (t *Task) Wait() error {
	<-t.done
	return t.err
}

// Done is closed when the construct has finished.
func (t *Task) Done() <-chan struct{} { return t.done }

// spawn runs fn as a nowait task without depend items (fn gets a nil
// *Task), which Shutdown waits for; once Shutdown has begun it fails
// instead.
func spawn(fn func(*Task) error) *Task {
	t, r := newTask()
	if r != nil {
		t.goRun(r, fn, nil)
	}
	return t
}

// newTask makes a nowait task that Shutdown waits for, and the runtime
// state that counts it; once Shutdown has begun it returns a task failed
// with ErrShutdown and no state.
func newTask() (*Task, *runtimeState) {
	r := state()
	r.tasks.Add(1)
	if r.closing.Load() {
		r.tasks.Add(-1)
		return failed(ErrShutdown), nil
	}
	return &Task{done: make(chan struct{})}, r
}

// goRun runs fn(arg) on a goroutine of its own and then finishes t: its
// dependents are released, Wait returns fn's error, and r no longer counts
// it.
//
// A task whose function ends its goroutine with runtime.Goexit (a Go
// task's function calling t.Fatal) fails with errGoexit: its dependents
// get ErrDependence rather than running as if it had succeeded.
func (t *Task) goRun(r *runtimeState, fn func(*Task) error, arg *Task) {
	go func() {
		returned := false
		defer func() {
			if !returned {
				t.err = errGoexit
			}
			t.ended()
			close(t.done)
			r.tasks.Add(-1)
		}()
		t.err = fn(arg)
		returned = true
	}()
}

// errGoexit is the error of a task whose goroutine runtime.Goexit ended
// before the task's function returned.
var errGoexit = errors.New("target: task ended by runtime.Goexit before its function returned (t.Fatal, t.FailNow and t.SkipNow call it): it did not complete")

// failed returns a finished task with err.
func failed(err error) *Task {
	t := &Task{done: make(chan struct{}), err: err}
	t.ds.released, t.ds.relErr = true, err
	close(t.done)
	return t
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
