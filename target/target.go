package target

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/hostexec"
	"github.com/gompt/gompt/mapping"
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
}

// initialScratch holds scratch constructs for the initial device, which
// has no queue.
var initialScratch = sync.Pool{New: func() any { return new(construct) }}

// begin takes a construct of d.
func begin(d *dev) (*construct, error) { return d.take() }

// end syncs the construct's queue, gives the construct back, and joins the
// sync error to err.
func (c *construct) end(err error) error {
	clear(c.items)
	c.items, c.ptrs, c.args = c.items[:0], c.ptrs[:0], c.args[:0]
	if qerr := c.d.give(c); qerr != nil && err == nil {
		err = qerr
	}
	return err
}

func (c *construct) setItems(maps []Map) {
	for _, m := range maps {
		c.items = append(c.items, m.item)
	}
}

// Alloc implements mapping.Ops.
func (c *construct) Alloc(it *mapping.Item, size int) (device.DevicePtr, error) {
	b, err := c.d.d.Alloc(size)
	if err != nil {
		return 0, err
	}
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "alloc %d bytes at %v for %s", size, b.Ptr, itemName(it))
	}
	return b.Ptr, nil
}

// Free implements mapping.Ops. It waits for the queue first, so a copy out
// of the buffer has completed before the buffer goes.
func (c *construct) Free(p device.DevicePtr, size int, host []byte) error {
	if err := c.q.Sync(); err != nil {
		return err
	}
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "free %d bytes at %v (host %p)", size, p, dataPtr(host))
	}
	return c.d.d.Free(p)
}

// CopyIn implements mapping.Ops.
func (c *construct) CopyIn(dst device.DevicePtr, src []byte) error {
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "copy %d bytes host %p -> device %v", len(src), dataPtr(src), dst)
	}
	return c.q.CopyIn(dst, src)
}

// CopyOut implements mapping.Ops.
func (c *construct) CopyOut(dst []byte, src device.DevicePtr) error {
	if c.d.infoOn&infoMapping != 0 {
		c.d.infof(infoMapping, "copy %d bytes device %v -> host %p", len(dst), src, dataPtr(dst))
	}
	return c.q.CopyOut(dst, src)
}

func itemName(it *mapping.Item) string {
	if it.Name != "" {
		return it.Name
	}
	return fmt.Sprintf("host %p", dataPtr(it.Host))
}

func dataPtr(b []byte) *byte {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}

// Target runs r on its device and returns when the kernel has run and the
// map clauses have been undone (the target construct). Safe for concurrent
// use by many goroutines.
func Target(r Region) error {
	rs := state()
	n, err := rs.resolve(r.Device)
	if err != nil {
		return err
	}
	if err := checkRegion(&r); err != nil {
		return err
	}
	if n == len(rs.devs) {
		return rs.runInitial(&r)
	}
	d := rs.devs[n]
	f, err := d.load(r.Kernel)
	if err != nil {
		return err
	}
	c, err := begin(d)
	if err != nil {
		return err
	}
	return c.end(c.target(&r, f))
}

// checkRegion validates r's kernel, shape and arguments before any device
// work, so a bad region changes nothing.
func checkRegion(r *Region) error {
	k := r.Kernel
	if k == nil {
		return errors.New("target: region has no kernel")
	}
	if err := r.Shape.Check(); err != nil {
		return fmt.Errorf("target: kernel %s: %w", k.Name, err)
	}
	if len(r.Args) != len(k.Params) {
		return fmt.Errorf("target: kernel %s takes %d arguments, got %d", k.Name, len(k.Params), len(r.Args))
	}
	for i, p := range k.Params {
		a := &r.Args[i]
		switch {
		case p.Kind == device.ParamBuffer && a.kind == argScalar:
			return fmt.Errorf("target: kernel %s argument %d (%s): want a buffer (target.Slice or target.Ptr), got a scalar", k.Name, i, p.Name)
		case p.Kind != device.ParamBuffer && a.kind != argScalar:
			return fmt.Errorf("target: kernel %s argument %d (%s): want a %s scalar, got a slice or pointer", k.Name, i, p.Name, p.Kind)
		case a.kind == argSlice && len(a.host) == 0:
			return fmt.Errorf("target: kernel %s argument %d (%s): empty or nil slice", k.Name, i, p.Name)
		case a.kind == argPtr && a.ptr == 0:
			return fmt.Errorf("target: kernel %s argument %d (%s): nil device pointer", k.Name, i, p.Name)
		}
	}
	return nil
}

// target maps, launches and unmaps on c's device.
func (c *construct) target(r *Region, f device.Function) error {
	d := c.d
	c.setItems(r.Maps)
	// Slices passed to the kernel that no clause maps and that are not
	// present are mapped tofrom for the region.
	for i := range r.Args {
		a := &r.Args[i]
		if a.kind != argSlice || covered(a.host, c.items) || d.table.IsPresent(a.host) {
			continue
		}
		c.items = append(c.items, mapping.Item{Host: a.host, Type: mapping.ToFrom, Name: argName(i)})
	}
	c.ptrs = grow(c.ptrs, len(c.items))
	if len(c.items) > 0 {
		if err := d.table.Enter(c, c.items, mapping.Structured, c.ptrs); err != nil {
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
	return c.q.Launch(f, r.Shape, c.args)
}

// translate finds host's device address: the construct's own items first
// (no table lookup for the common case), then the present table.
func (c *construct) translate(host []byte) (device.DevicePtr, error) {
	for j := range c.items {
		h := c.items[j].Host
		if len(h) == len(host) && dataPtr(h) == dataPtr(host) {
			return c.ptrs[j], nil
		}
	}
	return c.d.table.Translate(host)
}

// covered reports whether host lies inside one of items.
func covered(host []byte, items []mapping.Item) bool {
	lo, hi := span(host)
	for i := range items {
		l, h := span(items[i].Host)
		if lo >= l && hi <= h {
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

// runInitial runs r on the initial device: maps do nothing and the kernel's
// Go image runs on the program's own slices.
func (r *runtimeState) runInitial(reg *Region) error {
	f := reg.Kernel.Host()
	if f == nil {
		return fmt.Errorf("target: kernel %s has no Go image, so it cannot run on the initial device", reg.Kernel.Name)
	}
	c := initialScratch.Get().(*construct)
	defer func() {
		clear(c.hargs.Bufs)
		initialScratch.Put(c)
	}()
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
			b, err := r.initial.resolve(a.ptr)
			if err != nil {
				return fmt.Errorf("target: kernel %s argument %d: %w", reg.Kernel.Name, i, err)
			}
			c.hargs.Bufs[i] = b
		}
	}
	hostexec.Default().Run(f, &c.hargs, reg.Shape)
	return nil
}

// Task is a construct running asynchronously (a nowait form).
type Task struct {
	done chan struct{}
	err  error
}

// Wait blocks until the construct has finished and returns its error.
// It may be called more than once and from several goroutines.
func (t *Task) Wait() error {
	<-t.done
	return t.err
}

// Done is closed when the construct has finished.
func (t *Task) Done() <-chan struct{} { return t.done }

func spawn(fn func() error) *Task {
	t := &Task{done: make(chan struct{})}
	go func() {
		defer close(t.done)
		t.err = fn()
	}()
	return t
}

// TargetNowait starts r and returns at once (target nowait). The slices r
// maps must not be touched until the task's Wait returns.
func TargetNowait(r Region) *Task { return spawn(func() error { return Target(r) }) }

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
