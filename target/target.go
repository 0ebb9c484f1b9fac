package target

import (
	"errors"
	"fmt"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/callsite"
	"github.com/gompt/gompt/target/internal/omptrt"
)

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
		t.DependWait()
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
	return spawnScoped(t, deps, func(tk *Task) error {
		err := runTarget(&r, d, f, t, true, tk)
		t.End()
		return err
	})
}

// prepare resolves r's device, checks r, and loads its kernel there, all
// before the construct begins for the tools: device_initialize and
// device_load come before the first target event that needs them. A
// kernel the device has loaded already (its kernel cache, kcache.Kernels)
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

// toolsOn reports whether a tool listens to constructs (a tool attached
// that registered a callback, or a device tracing: omptrt.Listening),
// starting the runtime (and so the tools) first. Public entry points then take their call site for
// the tools' code pointer with callsite.Parent, called directly from the
// entry point, which is marked go:noinline so its frame is its own.
func toolsOn() bool {
	state()
	return omptrt.Listening()
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
	if r.Kernel.Checked() && len(c.items) > 0 {
		// A kernel that checks its indices and divisors (Kernel.Faults)
		// may fail while it runs: wait for it before the copies back,
		// and copy nothing back from one that failed, as a Go function
		// that panicked returns nothing.
		if err == nil {
			err = c.awaitHost()
			if serr := c.q.Sync(); err == nil {
				err = serr
			}
		}
		c.noCopyOut = err != nil
	}
	if len(c.items) > 0 {
		if xerr := d.table.Exit(c, c.items, mapping.Structured); xerr != nil {
			err = errors.Join(err, xerr)
		}
	}
	c.noCopyOut = false
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
