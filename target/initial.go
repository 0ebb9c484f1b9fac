package target

import (
	"fmt"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/hostexec"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/target/internal/omptrt"
)

// initialInfo holds the initial device's launch limits: its kernels run on
// the team executor the host device runs them on, so they are the host
// device's.
var initialInfo = device.Info{MaxThreadsPerTeam: hostexec.MaxThreadsPerTeam, MaxTeams: hostexec.MaxTeams,
	Caps: device.AllCaps(hostexec.MaxThreadsPerTeam), TimeSource: "Go's monotonic clock (Wtime)"}

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
		if f := device.GoFault(reg.Kernel.Name, tp.Value, tp.PCs); f != nil {
			return f // Go's bounds or division check, with the source line
		}
		return fmt.Errorf("target: kernel %s on the initial device panicked in team %d of %d: %v", reg.Kernel.Name, tp.Team, tp.Teams, tp.Value)
	}
	return err
}
