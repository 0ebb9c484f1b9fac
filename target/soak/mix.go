// Package soak holds the reliability tests of the runtime (package target)
// run as a user program would: injected device faults (device/faulty), a
// concurrency soak on every device present, and leak checks. It is its own
// test binary because the runtime and its plugin list start once per
// process: in its tests device 0 is the host device wrapped by the faulty plugin,
// followed by the OpenCL devices, if any. Soak, the construct mix, is
// exported for target/soak/tooled, which runs it with a tool attached.
package soak

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
	"github.com/gompt/gompt/target/internal/inspect"
)

// SoakGoroutines is how many goroutines the soak runs at once.
const SoakGoroutines = 64

// sizes are the slice lengths of the soak, by goroutine (w % len(sizes)).
// The last is more than host.InlineCopyMax (256 KiB), so the host device
// copies it on its queues' goroutines, overlapping other queues' work as a
// GPU does at any size.
var sizes = [...]int{256, 320, 384, 448, 512, 576, 640, 65536 + 37}

// shared is what the goroutines of a soak share on one device: inputs
// every goroutine reads and maps at once (never written), output arrays
// of which each goroutine owns a chunk, and outputs handed from goroutine
// to goroutine (batons), possibly still mapped.
type shared struct {
	x       [len(sizes)][]float32
	out     []float32 // goroutine w's y is out[w*stride:][:n]
	out2    []float32 // and its second output, out2[w*stride:][:n]
	stride  int
	batons  chan *baton
	nbatons int
}

// baton is an output handed between goroutines: its holder updates it and
// gives it back, either unmapped (want is then its host values) or mapped
// with a dynamic reference that the next holder drops (want is then the
// device copy's values).
type baton struct {
	b      []float32
	mapped bool
	want   []float32
}

// inputValue is element j of every shared input: small whole numbers, so
// every result is exact in float32.
func inputValue(j int) float32 { return float32(j%61 - 30) }

func newShared(g int) *shared {
	sh := &shared{stride: slices.Max(sizes[:])}
	for k, n := range sizes {
		sh.x[k] = make([]float32, n)
		for j := range sh.x[k] {
			sh.x[k][j] = inputValue(j)
		}
	}
	sh.out = make([]float32, g*sh.stride)
	sh.out2 = make([]float32, g*sh.stride)
	sh.nbatons = max(1, g/4)
	sh.batons = make(chan *baton, sh.nbatons)
	for range sh.nbatons {
		b := make([]float32, sizes[0])
		sh.batons <- &baton{b: b, want: slices.Clone(b)}
	}
	return sh
}

// Soak runs g goroutines, each running iters constructs of a mix (target
// regions with maps, enter/exit data, update, nowait regions and nowait
// enter/exit data with waits, device memory routines, data regions, data
// regions whose body panics, outputs handed between goroutines) on every
// offload device in turn, and verifies every result. The goroutines share
// their inputs (every construct reads and maps one of a few shared slices
// at the same time as others), their outputs' arrays (each owns a chunk),
// and outputs passed from one to the next. It returns the number of
// constructs run by kind, and every error: a construct that failed or gave
// a wrong result (a goroutine stops at its first), a handed-over output
// with wrong values at the end, and entries left mapped. Safe to call from
// tests of any package; it uses the runtime's devices as they are.
func Soak(g, iters int) (map[string]int64, []error) {
	nd := target.NumDevices()
	if nd == 0 {
		return nil, []error{fmt.Errorf("soak: no offload device")}
	}
	before := make([]int, nd)
	sh := make([]*shared, nd)
	for n := range nd {
		before[n] = len(inspect.MappingEntries(n))
		sh[n] = newShared(g)
	}
	var counts sync.Map
	add := func(k string) {
		v, _ := counts.LoadOrStore(k, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, g+nd)
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var kind string // of the construct step ran last
			for i := range iters {
				dev := (w + i) % nd
				if err := step(dev, sh[dev], w, i, func(k string) { kind = k; add(k) }); err != nil {
					errs <- &kindError{kind, fmt.Errorf("goroutine %d iteration %d device %d: %s: %w", w, i, dev, kind, err)}
					return
				}
			}
		}()
	}
	wg.Wait()
	for n := range nd {
		if err := drainBatons(n, sh[n]); err != nil {
			errs <- &kindError{"output handed over", fmt.Errorf("device %d: %w", n, err)}
		}
	}
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
		if es := inspect.MappingEntries(n); len(es) != before[n] {
			all = append(all, fmt.Errorf("device %d: %d entries mapped after the soak, %d before: %v", n, len(es), before[n], es))
		}
	}
	return out, all
}

// kindError is an error of Soak with the kind of construct it concerns.
type kindError struct {
	kind string
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }

// step runs one construct of the mix, chosen by i, and verifies it.
func step(dev int, sh *shared, w, i int, add func(string)) error {
	k := w % len(sizes)
	n := sizes[k]
	x := sh.x[k]
	y := sh.out[w*sh.stride:][:n:n]
	for j := range y {
		y[j] = float32(i % 7)
	}
	want := func(y []float32, a float32) error {
		for j := range y {
			if e := a*x[j] + float32(i%7); y[j] != e {
				return fmt.Errorf("y[%d] = %v, want %v (%d elements of a shared input, a chunk of a shared output)", j, y[j], e, n)
			}
		}
		return nil
	}
	args := func(a float32, y []float32) []target.Arg {
		return []target.Arg{target.Int(n), target.Float32(a), target.Slice(x), target.Slice(y)}
	}
	switch i % 8 {
	case 0: // target with maps
		add("target")
		if err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n),
			Maps: []target.Map{target.To(x), target.ToFrom(y)}, Args: args(2, y)}); err != nil {
			return err
		}
		return want(y, 2)
	case 1: // enter data, target on present data, update, exit data
		add("enter data")
		if err := target.EnterData(dev, target.To(x), target.To(y)); err != nil {
			return err
		}
		add("target")
		if err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n), Args: args(3, y)}); err != nil {
			return err
		}
		if !target.IsPresent(x, dev) || !target.IsPresent(y, dev) {
			return fmt.Errorf("x or y not present inside enter/exit data")
		}
		add("update")
		if err := target.Update(dev, target.From(y)); err != nil {
			return err
		}
		if err := want(y, 3); err != nil {
			return err
		}
		add("exit data")
		// x is shared: release this goroutine's reference only.
		if err := target.ExitData(dev, target.Release(x), target.Delete(y)); err != nil {
			return err
		}
		if target.IsPresent(y, dev) {
			return fmt.Errorf("y still present after exit data")
		}
		return nil
	case 2: // two nowait regions reading the same shared input
		add("target nowait")
		y2 := sh.out2[w*sh.stride:][:n:n]
		copy(y2, y)
		t1 := target.TargetNowait(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n),
			Maps: []target.Map{target.To(x), target.ToFrom(y)}, Args: args(4, y)})
		add("target nowait")
		t2 := target.TargetNowait(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n),
			Maps: []target.Map{target.To(x), target.ToFrom(y2)}, Args: args(4, y2)})
		err1, err2 := t1.Wait(), t2.Wait()
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if err := want(y, 4); err != nil {
			return fmt.Errorf("first of two nowait regions: %w", err)
		}
		if err := want(y2, 4); err != nil {
			return fmt.Errorf("second of two nowait regions: %w", err)
		}
		return nil
	case 3: // enter/exit data nowait
		add("enter data nowait")
		if err := target.EnterDataNowait(dev, target.To(x), target.Alloc(y)).Wait(); err != nil {
			return err
		}
		add("target")
		if err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Fill, Shape: target.N(n),
			Args: []target.Arg{target.Int(n), target.Float32(float32(i % 7)), target.Slice(y)}}); err != nil {
			return err
		}
		add("target")
		if err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n), Args: args(5, y)}); err != nil {
			return err
		}
		add("exit data nowait")
		if err := target.ExitDataNowait(dev, target.Release(x), target.From(y)).Wait(); err != nil {
			return err
		}
		return want(y, 5)
	case 4: // device memory routines
		add("memory routines")
		return memRoutines(dev, x)
	case 5: // a data region around a target region
		add("data region")
		err := target.Data(dev, []target.Map{target.To(x), target.ToFrom(y)}, func() error {
			add("target")
			return target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n), Args: args(6, y)})
		})
		if err != nil {
			return err
		}
		return want(y, 6)
	case 6: // an output handed over by another goroutine
		select {
		case bt := <-sh.batons:
			add("output handed over")
			if err := handOver(dev, bt, sh.x[0], i); err != nil {
				return err // the baton is lost: the run has failed
			}
			sh.batons <- bt
			return nil
		default:
			add("target")
			if err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n),
				Maps: []target.Map{target.To(x), target.ToFrom(y)}, Args: args(7, y)}); err != nil {
				return err
			}
			return want(y, 7)
		}
	default: // a data region whose body panics (or fails), then y tofrom again
		var rec any
		var err error
		if soakPanics {
			add("data region, body panics")
			func() {
				defer func() { rec = recover() }()
				err = target.Data(dev, []target.Map{target.To(x), target.ToFrom(y)}, func() error {
					panic(errSoakBody)
				})
			}()
			if rec != errSoakBody {
				return fmt.Errorf("a data region whose body panicked: recovered %v (error %v), want the body's panic", rec, err)
			}
		} else {
			add("data region, body fails")
			err = target.Data(dev, []target.Map{target.To(x), target.ToFrom(y)}, func() error { return errSoakBody })
			if !errors.Is(err, errSoakBody) {
				return fmt.Errorf("a data region whose body failed: error %v, want the body's", err)
			}
		}
		if target.IsPresent(y, dev) {
			return fmt.Errorf("y is still mapped after a data region whose body panicked or failed (%v)", rec)
		}
		add("target")
		if err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n),
			Maps: []target.Map{target.To(x), target.ToFrom(y)}, Args: args(8, y)}); err != nil {
			return err
		}
		return want(y, 8)
	}
}

var errSoakBody = errors.New("soak: a data region's body panics or fails")

// soakPanics: data regions whose body panics are in the mix; with
// GOMPT_SOAK_PANICS=0 their bodies return an error instead (to see the
// other classes of failure on a runtime where a panicking body leaks its
// mappings, which stops every goroutine at its eighth construct).
var soakPanics = os.Getenv("GOMPT_SOAK_PANICS") != "0"

// memRoutines copies x through two device allocations and back.
func memRoutines(dev int, x []float32) error {
	n := len(x)
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
}

// handOver takes its turn with a baton, reading the shared input x: an
// unmapped baton gets new host values, is mapped with enter data and
// updated on the device, and is handed on mapped; a mapped one, left so by
// another goroutine, is updated again on the device and unmapped with exit
// data from, and its values are checked.
func handOver(dev int, bt *baton, x []float32, i int) error {
	n := len(bt.b)
	saxpy := func(a float32, maps ...target.Map) error {
		return target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n), Maps: maps,
			Args: []target.Arg{target.Int(n), target.Float32(a), target.Slice(x), target.Slice(bt.b)}})
	}
	if !bt.mapped {
		if !slices.Equal(bt.b, bt.want) {
			return fmt.Errorf("handed-over output: host values %v..., want %v...", bt.b[:4], bt.want[:4])
		}
		if target.IsPresent(bt.b, dev) {
			return fmt.Errorf("handed-over output: present, but its last holder unmapped it")
		}
		for j := range bt.b {
			bt.b[j] = float32(i % 7)
		}
		if err := target.EnterData(dev, target.To(bt.b)); err != nil {
			return err
		}
		if err := saxpy(2, target.To(x)); err != nil {
			return err
		}
		for j := range bt.want {
			bt.want[j] = 2*x[j] + float32(i%7)
		}
		bt.mapped = true
		return nil
	}
	if !target.IsPresent(bt.b, dev) {
		return fmt.Errorf("handed-over output: not present, but its last holder left it mapped")
	}
	if err := saxpy(3, target.To(x), target.ToFrom(bt.b)); err != nil {
		return err
	}
	if err := target.ExitData(dev, target.From(bt.b)); err != nil {
		return err
	}
	for j := range bt.want {
		bt.want[j] += 3 * x[j]
	}
	bt.mapped = false
	if !slices.Equal(bt.b, bt.want) {
		return fmt.Errorf("handed-over output: device values copied back %v..., want %v...", bt.b[:4], bt.want[:4])
	}
	return nil
}

// drainBatons unmaps the batons their last holders left mapped and checks
// their values.
func drainBatons(dev int, sh *shared) error {
	close(sh.batons)
	var errs []error
	for bt := range sh.batons {
		if !bt.mapped {
			if !slices.Equal(bt.b, bt.want) {
				errs = append(errs, fmt.Errorf("handed-over output at the end: host values %v..., want %v...", bt.b[:4], bt.want[:4]))
			}
			continue
		}
		if err := target.ExitData(dev, target.From(bt.b)); err != nil {
			errs = append(errs, err)
			continue
		}
		if !slices.Equal(bt.b, bt.want) {
			errs = append(errs, fmt.Errorf("handed-over output at the end: device values copied back %v..., want %v...", bt.b[:4], bt.want[:4]))
		}
	}
	return errors.Join(errs...)
}
