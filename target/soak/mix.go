// Package soak holds the reliability tests of the runtime (package target)
// run as a user program would: injected device faults (device/faulty), a
// concurrency soak on every device present, and leak checks. It is its own
// test binary because the runtime and its plugin list start once per
// process: in its tests device 0 is the host device wrapped by the faulty plugin,
// followed by the OpenCL devices, if any. Soak, the construct mix, is
// exported for target/soak/tooled, which runs it with a tool attached.
package soak

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
)

// SoakGoroutines is how many goroutines the soak runs at once.
const SoakGoroutines = 64

// Soak runs g goroutines, each running iters constructs of a mix (target
// regions with maps, enter/exit data, update, nowait regions and nowait
// enter/exit data with waits, device memory routines, data regions) on
// every offload device in turn, and verifies every result. It returns the
// number of constructs run by kind, and every error: a construct that
// failed or gave a wrong result (a goroutine stops at its first), and
// entries left mapped. Safe to call from tests of any package; it uses the
// runtime's devices as they are.
func Soak(g, iters int) (map[string]int64, []error) {
	nd := target.NumDevices()
	if nd == 0 {
		return nil, []error{fmt.Errorf("soak: no offload device")}
	}
	before := make([]int, nd)
	for n := range nd {
		before[n] = len(target.MappingEntries(n))
	}
	var counts sync.Map
	add := func(k string) {
		v, _ := counts.LoadOrStore(k, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, g)
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iters {
				dev := (w + i) % nd
				if err := step(dev, w, i, add); err != nil {
					errs <- fmt.Errorf("goroutine %d iteration %d device %d: %w", w, i, dev, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	out := map[string]int64{}
	counts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	for n := range nd {
		if es := target.MappingEntries(n); len(es) != before[n] {
			all = append(all, fmt.Errorf("device %d: %d entries mapped after the soak, %d before: %v", n, len(es), before[n], es))
		}
	}
	return out, all
}

// step runs one construct of the mix, chosen by i, and verifies it.
func step(dev, w, i int, add func(string)) error {
	n := 256 + 64*(w%5)
	x, y := make([]float32, n), make([]float32, n)
	for j := range x {
		x[j], y[j] = float32(j+w), float32(i%7)
	}
	want := func(a float32) error {
		for j := range y {
			if e := a*x[j] + float32(i%7); y[j] != e {
				return fmt.Errorf("y[%d] = %v, want %v", j, y[j], e)
			}
		}
		return nil
	}
	args := func(a float32) []target.Arg {
		return []target.Arg{target.Int(n), target.Float32(a), target.Slice(x), target.Slice(y)}
	}
	switch i % 6 {
	case 0: // target with maps
		add("target")
		if err := target.Target(target.Region{Device: dev, Kernel: kernels.Saxpy, Shape: target.N(n),
			Maps: []target.Map{target.To(x), target.ToFrom(y)}, Args: args(2)}); err != nil {
			return err
		}
		return want(2)
	case 1: // enter data, target on present data, update, exit data
		add("enter data")
		if err := target.EnterData(dev, target.To(x), target.To(y)); err != nil {
			return err
		}
		add("target")
		if err := target.Target(target.Region{Device: dev, Kernel: kernels.Saxpy, Shape: target.N(n), Args: args(3)}); err != nil {
			return err
		}
		if !target.IsPresent(x, dev) || !target.IsPresent(y, dev) {
			return fmt.Errorf("x or y not present inside enter/exit data")
		}
		add("update")
		if err := target.Update(dev, target.From(y)); err != nil {
			return err
		}
		if err := want(3); err != nil {
			return err
		}
		add("exit data")
		if err := target.ExitData(dev, target.Release(x), target.Delete(y)); err != nil {
			return err
		}
		if target.IsPresent(x, dev) || target.IsPresent(y, dev) {
			return fmt.Errorf("x or y still present after exit data")
		}
		return nil
	case 2: // nowait regions with waits
		add("target nowait")
		x2, y2 := slices.Clone(x), slices.Clone(y)
		t1 := target.TargetNowait(target.Region{Device: dev, Kernel: kernels.Saxpy, Shape: target.N(n),
			Maps: []target.Map{target.To(x), target.ToFrom(y)}, Args: args(4)})
		add("target nowait")
		t2 := target.TargetNowait(target.Region{Device: dev, Kernel: kernels.Saxpy, Shape: target.N(n),
			Maps: []target.Map{target.To(x2), target.ToFrom(y2)},
			Args: []target.Arg{target.Int(n), target.Float32(4), target.Slice(x2), target.Slice(y2)}})
		if err := t1.Wait(); err != nil {
			return err
		}
		if err := t2.Wait(); err != nil {
			return err
		}
		if !slices.Equal(y, y2) {
			return fmt.Errorf("two identical nowait regions gave different results")
		}
		return want(4)
	case 3: // enter/exit data nowait
		add("enter data nowait")
		if err := target.EnterDataNowait(dev, target.To(x), target.Alloc(y)).Wait(); err != nil {
			return err
		}
		add("target")
		if err := target.Target(target.Region{Device: dev, Kernel: kernels.Fill, Shape: target.N(n),
			Args: []target.Arg{target.Int(n), target.Float32(float32(i % 7)), target.Slice(y)}}); err != nil {
			return err
		}
		add("target")
		if err := target.Target(target.Region{Device: dev, Kernel: kernels.Saxpy, Shape: target.N(n), Args: args(5)}); err != nil {
			return err
		}
		add("exit data nowait")
		if err := target.ExitDataNowait(dev, target.Release(x), target.From(y)).Wait(); err != nil {
			return err
		}
		return want(5)
	case 4: // device memory routines
		add("memory routines")
		p, err := target.AllocMem(4*n, dev)
		if err != nil {
			return err
		}
		q, err := target.AllocMem(4*n, dev)
		if err != nil {
			target.FreeMem(p, dev)
			return err
		}
		err = target.Memcpy(target.On(dev, p), target.Host(x), 4*n)
		if err == nil {
			err = target.Memcpy(target.On(dev, q), target.On(dev, p), 4*n)
		}
		z := make([]float32, n)
		if err == nil {
			err = target.Memcpy(target.Host(z), target.On(dev, q), 4*n)
		}
		if err == nil && !slices.Equal(x, z) {
			err = fmt.Errorf("memcpy round trip through device memory changed the data")
		}
		if ferr := target.FreeMem(p, dev); ferr != nil && err == nil {
			err = ferr
		}
		if ferr := target.FreeMem(q, dev); ferr != nil && err == nil {
			err = ferr
		}
		return err
	default: // a data region around a target region
		add("data region")
		err := target.Data(dev, []target.Map{target.To(x), target.ToFrom(y)}, func() error {
			add("target")
			return target.Target(target.Region{Device: dev, Kernel: kernels.Saxpy, Shape: target.N(n), Args: args(6)})
		})
		if err != nil {
			return err
		}
		return want(6)
	}
}
