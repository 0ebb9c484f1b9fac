package soak

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
)

// SoakGoroutines is how many goroutines the soak runs at once.
const SoakGoroutines = 64

// Soak runs g goroutines x iters mixed constructs on every device present
// and verifies every result. It returns the number of constructs run, by
// kind. Used by this package and by target/soak/tooled.
func soak(t *testing.T, g, iters int) map[string]int64 {
	t.Helper()
	nd := target.NumDevices()
	if nd == 0 {
		t.Skip("no offload device")
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
	for err := range errs {
		t.Error(err)
	}
	out := map[string]int64{}
	counts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	for n := range nd {
		if es := target.MappingEntries(n); len(es) != before[n] {
			t.Errorf("device %d: %d entries mapped after the soak, %d before: %v", n, len(es), before[n], es)
		}
	}
	return out
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

// TestSoak runs SoakGoroutines x GOMPT_SOAK_ITERS (default 50) mixed
// constructs on every device, then checks nothing stays mapped and device
// memory is back to its baseline. The long run sets GOMPT_SOAK_ITERS=1000.
func TestSoak(t *testing.T) {
	memBaseline(t)
	iters := envInt("GOMPT_SOAK_ITERS", 50)
	start := time.Now()
	counts := soak(t, SoakGoroutines, iters)
	el := time.Since(start)
	var total int64
	keys := make([]string, 0, len(counts))
	for k, v := range counts {
		total += v
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b []byte
	b = fmt.Appendf(b, "%d goroutines x %d iterations on %d device(s) (%s), %d constructs in %v:\n\n",
		SoakGoroutines, iters, target.NumDevices(), deviceNames(), total, el.Round(time.Millisecond))
	for _, k := range keys {
		b = fmt.Appendf(b, "- %s: %d\n", k, counts[k])
	}
	t.Logf("%s", b)
	writeReport(t, "soak.md", string(b))
}

func deviceNames() string {
	var s []string
	for _, d := range target.Devices() {
		s = append(s, d.ID+" "+d.Name)
	}
	return fmt.Sprint(s)
}
