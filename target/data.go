package target

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gompt/gompt/mapping"
)

// span returns the host address range [lo, hi) of b.
func span(b []byte) (lo, hi uintptr) {
	if len(b) == 0 {
		return 0, 0
	}
	lo = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return lo, lo + uintptr(len(b))
}

// dataOp resolves dev and runs fn on a construct of that device. On the
// initial device nothing is mapped and fn is not called.
func dataOp(devNum int, maps []Map, fn func(c *construct) error) error {
	rs := state()
	n, err := rs.resolve(devNum)
	if err != nil {
		return err
	}
	if n == len(rs.devs) {
		return checkInitialMaps(maps)
	}
	c, err := begin(rs.devs[n])
	if err != nil {
		return err
	}
	c.setItems(maps)
	c.ptrs = grow(c.ptrs, len(c.items))
	return c.end(fn(c))
}

// checkInitialMaps reports the same bad list items on the initial device as
// a mapping table would, although nothing is mapped there.
func checkInitialMaps(maps []Map) error {
	for i := range maps {
		if len(maps[i].item.Host) == 0 {
			return fmt.Errorf("target: map clause item %d (%s): empty or nil slice", i, maps[i].item.Type)
		}
	}
	return nil
}

// EnterData maps items on a device (target enter data): to and alloc.
func EnterData(dev int, maps ...Map) error {
	return dataOp(dev, maps, func(c *construct) error {
		return c.d.table.Enter(c, c.items, mapping.Dynamic, c.ptrs)
	})
}

// ExitData unmaps items (target exit data): from, release and delete.
func ExitData(dev int, maps ...Map) error {
	return dataOp(dev, maps, func(c *construct) error {
		return c.d.table.Exit(c, c.items, mapping.Dynamic)
	})
}

// Update copies present items between host and device (target update):
// To items to the device, From items to the host.
func Update(dev int, maps ...Map) error {
	for i := range maps {
		if t := maps[i].item.Type; t != mapping.To && t != mapping.From {
			return fmt.Errorf("target: update: item %d is %s; a motion clause takes target.To or target.From", i, t)
		}
	}
	return dataOp(dev, maps, func(c *construct) error {
		return c.d.table.Update(c, c.items)
	})
}

// Data runs body inside a target data region: maps are entered before body
// and exited after it, whether or not body fails.
func Data(dev int, maps []Map, body func() error) error {
	if body == nil {
		return errors.New("target: data region has no body")
	}
	rs := state()
	n, err := rs.resolve(dev)
	if err != nil {
		return err
	}
	if n == len(rs.devs) {
		if err := checkInitialMaps(maps); err != nil {
			return err
		}
		return body()
	}
	if err := dataOp(n, maps, func(c *construct) error {
		return c.d.table.Enter(c, c.items, mapping.Structured, c.ptrs)
	}); err != nil {
		return err
	}
	berr := body()
	xerr := dataOp(n, maps, func(c *construct) error {
		return c.d.table.Exit(c, c.items, mapping.Structured)
	})
	return errors.Join(berr, xerr)
}

// EnterDataNowait is EnterData as a deferred task (enter data nowait).
func EnterDataNowait(dev int, maps ...Map) *Task {
	return spawn(func() error { return EnterData(dev, maps...) })
}

// ExitDataNowait is ExitData as a deferred task (exit data nowait).
func ExitDataNowait(dev int, maps ...Map) *Task {
	return spawn(func() error { return ExitData(dev, maps...) })
}

// UpdateNowait is Update as a deferred task (update nowait).
func UpdateNowait(dev int, maps ...Map) *Task {
	return spawn(func() error { return Update(dev, maps...) })
}
