package target

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/callsite"
	"github.com/gompt/gompt/target/internal/omptrt"
)

// dataOp runs one data construct on device n, inside a tools scope that
// begins here unless the caller began it (nowait). On the initial device
// (d nil) nothing is mapped: fn is not called, and check validates the
// construct's items as the mapping table would on an offload device.
//
// tk is the construct's task when it has depend items, as for runTarget.
//
// undo, when not nil, takes back what fn did (enter data's mapping) when
// fn succeeded but the device work of a predecessor that fn's copies
// waited for on the device failed: the construct's error then says it
// did not run (ErrDependence), and it has no lasting effect.
func dataOp(n int, d *dev, t *omptrt.Target, async bool, maps []Map, fn, undo func(c *construct) error, check func(items []mapping.Item) error, tk *Task) error {
	if d == nil {
		if err := tk.waitHost(); err != nil {
			return err
		}
		c := initialScratch.Get().(*construct)
		c.setItems(maps)
		err := check(c.items)
		clear(c.items)
		c.items = c.items[:0]
		initialScratch.Put(c)
		return err
	}
	if err := tk.predErr(); err != nil {
		return err
	}
	c, err := begin(d, t, async)
	if err != nil {
		return err
	}
	tk.attach(c)
	c.setItems(maps)
	c.ptrs = grow(c.ptrs, len(c.items))
	err = fn(c)
	tk.publish(c, err)
	if err == nil && undo != nil && len(c.dchecks) > 0 {
		// end would wait for the same: the queue, then the predecessors'
		// device work it waited for.
		serr := c.q.Sync()
		if derr := c.checkDeps(); derr != nil {
			if uerr := undo(c); uerr != nil {
				derr = errors.Join(derr, fmt.Errorf("target enter data: releasing its items again: %w", uerr))
			}
			err = derr
		} else {
			err = serr
		}
	}
	return c.end(err)
}

// dataConstruct is a complete synchronous or nowait data construct: it
// resolves dev, begins the tools scope on the calling goroutine, and runs
// fn. A synchronous construct returns its error and no task; a nowait one
// runs fn in a new goroutine and returns the task.
func dataConstruct(dev int, pc uintptr, kind ompt.TargetKind, nowait bool, maps []Map, fn func(c *construct) error) (*Task, error) {
	maps, deps, err := splitDeps(maps)
	if err != nil {
		return nil, err
	}
	if err := checkMaps(maps); err != nil {
		return nil, err
	}
	n, d, err := open(dev)
	if err != nil {
		return nil, err
	}
	check := initialCheck(kind)
	var undo func(c *construct) error
	if kind == ompt.KindTargetEnterData {
		undo = unenter
	}
	if nowait {
		kind = nowaitKind(kind)
	}
	t := omptrt.TargetBegin(kind, n, pc)
	reportDeps(t, deps)
	run := func(tk *Task) error {
		err := dataOp(n, d, t, nowait, maps, fn, undo, check, tk)
		t.End()
		return err
	}
	if nowait {
		return spawnScoped(t, deps, run), nil
	}
	if len(deps) > 0 {
		t.DependWait()
	}
	return nil, runDeps(deps, run)
}

// task turns dataConstruct's result into a task.
func task(t *Task, err error) *Task {
	if err != nil {
		return failed(err)
	}
	return t
}

func nowaitKind(k ompt.TargetKind) ompt.TargetKind {
	switch k {
	case ompt.KindTarget:
		return ompt.KindTargetNowait
	case ompt.KindTargetEnterData:
		return ompt.KindTargetEnterDataNowait
	case ompt.KindTargetExitData:
		return ompt.KindTargetExitDataNowait
	case ompt.KindTargetUpdate:
		return ompt.KindTargetUpdateNowait
	}
	return k
}

// initialDevice names the initial device in mapping errors.
const initialDevice = "the initial device"

// initialCheck returns the initial-device check of a dynamic data
// construct of the given kind (see dataOp).
func initialCheck(kind ompt.TargetKind) func(items []mapping.Item) error {
	switch kind {
	case ompt.KindTargetEnterData:
		return func(items []mapping.Item) error { return mapping.CheckEnter(initialDevice, mapping.Dynamic, items) }
	case ompt.KindTargetExitData:
		return func(items []mapping.Item) error { return mapping.CheckExit(initialDevice, mapping.Dynamic, items) }
	}
	return func(items []mapping.Item) error { return mapping.CheckUpdate(initialDevice, items) }
}

// enterItems maps c's items with reference counts of kind k, then reports
// them to the tools (target_map).
func (c *construct) enterItems(k mapping.Kind) error {
	if err := c.d.table.Enter(c, c.items, k, c.ptrs); err != nil {
		return err
	}
	c.reportMap()
	return nil
}

// exitItems reports c's items to the tools, then unmaps them (kind k).
func (c *construct) exitItems(k mapping.Kind) error {
	c.reportExitMap()
	return c.d.table.Exit(c, c.items, k)
}

func enter(c *construct) error { return c.enterItems(mapping.Dynamic) }

// unenter takes back enter's mapping of c's items: each is released
// (its dynamic count lowered, freed at zero) without a copy back.
// Tools see the release as the construct's second target_map. (A release
// reads neither always nor present: the item must be there.)
func unenter(c *construct) error {
	for i := range c.items {
		c.items[i].Type = mapping.Release
	}
	return c.exitItems(mapping.Dynamic)
}

func exit(c *construct) error { return c.exitItems(mapping.Dynamic) }

func update(c *construct) error { return c.d.table.Update(c, c.items) }

func checkMotion(maps []Map) error {
	for i := range maps {
		if t := maps[i].item.Type; t != mapping.To && t != mapping.From && maps[i].dep == 0 {
			return fmt.Errorf("target: update: item %d is %s; a motion clause takes target.To or target.From", i, t)
		}
	}
	return nil
}

// EnterData maps items on a device (target enter data): to and alloc.
//
//go:noinline
func EnterData(dev int, maps ...Map) error {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	_, err := dataConstruct(dev, pc, ompt.KindTargetEnterData, false, maps, enter)
	return err
}

// ExitData unmaps items (target exit data): from, release and delete.
//
//go:noinline
func ExitData(dev int, maps ...Map) error {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	_, err := dataConstruct(dev, pc, ompt.KindTargetExitData, false, maps, exit)
	return err
}

// Update copies present items between host and device (target update):
// To items to the device, From items to the host.
//
//go:noinline
func Update(dev int, maps ...Map) error {
	if err := checkMotion(maps); err != nil {
		return err
	}
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	_, err := dataConstruct(dev, pc, ompt.KindTargetUpdate, false, maps, update)
	return err
}

// EnterDataNowait is EnterData as a deferred task (enter data nowait).
//
//go:noinline
func EnterDataNowait(dev int, maps ...Map) *Task {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	return task(dataConstruct(dev, pc, ompt.KindTargetEnterData, true, maps, enter))
}

// ExitDataNowait is ExitData as a deferred task (exit data nowait).
//
//go:noinline
func ExitDataNowait(dev int, maps ...Map) *Task {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	return task(dataConstruct(dev, pc, ompt.KindTargetExitData, true, maps, exit))
}

// UpdateNowait is Update as a deferred task (update nowait).
//
//go:noinline
func UpdateNowait(dev int, maps ...Map) *Task {
	if err := checkMotion(maps); err != nil {
		return failed(err)
	}
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	return task(dataConstruct(dev, pc, ompt.KindTargetUpdate, true, maps, update))
}

// Data runs body inside a target data region: maps are entered before body
// and exited after it, whether or not body fails. If body panics (or calls
// runtime.Goexit, as t.Fatal does), the maps are exited all the same,
// copy-back included, before the panic goes on; an error of that exit is
// then reported on standard error, since the panic is what the caller
// sees. For the tools it is an enter-data construct where it begins and an
// exit-data construct where it ends.
//
//go:noinline
func Data(dev int, maps []Map, body func() error) error {
	if body == nil {
		return errors.New("target: data region has no body")
	}
	for i := range maps {
		if maps[i].dep != 0 {
			return fmt.Errorf("target: data region: item %d is a depend item (%s); a target data construct has no depend clause: order the constructs inside it instead", i, depNames[maps[i].dep])
		}
	}
	if err := checkMaps(maps); err != nil {
		return err
	}
	// The exit unmaps the items the region began with, whatever body
	// does with the caller's slice (a scratch slice of maps, refilled).
	maps = slices.Clone(maps)
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	n, d, err := open(dev)
	if err != nil {
		return err
	}
	t := omptrt.TargetBegin(ompt.KindTargetEnterData, n, pc)
	err = dataOp(n, d, t, false, maps, func(c *construct) error { return c.enterItems(mapping.Structured) }, nil,
		func(items []mapping.Item) error { return mapping.CheckEnter(initialDevice, mapping.Structured, items) }, nil)
	t.End()
	if err != nil {
		return err
	}
	exit := func() error {
		t := omptrt.TargetBegin(ompt.KindTargetExitData, n, pc)
		err := dataOp(n, d, t, false, maps, func(c *construct) error { return c.exitItems(mapping.Structured) }, nil,
			func(items []mapping.Item) error { return mapping.CheckExit(initialDevice, mapping.Structured, items) }, nil)
		t.End()
		return err
	}
	done := false
	defer func() {
		if !done { // body panicked or called runtime.Goexit
			if xerr := exit(); xerr != nil {
				fmt.Fprintf(warnOut, "gompt: target data region left by a panic: %v\n", xerr)
			}
		}
	}()
	berr := body()
	done = true
	return errors.Join(berr, exit())
}
