package main

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/target"
)

func init() {
	register(bcase{name: "empty_target", bench: emptyTarget})
	register(bcase{name: "target_tofrom_4KiB", bytes: 2 * 4096, bench: tofrom(1024)})
	register(bcase{name: "enter_exit_1MiB", backend: "host", bytes: 2 << 20, bench: enterExit(1 << 18)})
	for _, n := range []int{1, 1000, 1000000} {
		register(bcase{name: "lookup_" + lookupName(n), backend: "host", bench: lookup(n)})
	}
	register(bcase{name: "saxpy_2e24", backend: "host", bytes: 12 << 24, bench: saxpy(1 << 24)})
	register(bcase{name: "saxpy_2e24", backend: "opencl", bytes: 12 << 24, bench: saxpy(1 << 24)})
	register(bcase{name: "go_loop_saxpy_2e24", backend: "host", bytes: 12 << 24, bench: goLoopSaxpy(1 << 24)})
	register(bcase{name: "h2d_64MiB", backend: "opencl", bytes: 64 << 20, bench: update(64<<20, true)})
	register(bcase{name: "d2h_64MiB", backend: "opencl", bytes: 64 << 20, bench: update(64<<20, false)})
	// The same chunked saxpy (copy in, kernel, copy out per chunk) as
	// nowait constructs ordered by depend items, and as synchronous
	// constructs, on the same device: examples/pipeline.
	for _, be := range []string{"host", "opencl"} {
		const n, chunks = 1 << 22, 16
		register(bcase{name: "pipeline_nowait_depend_16x1MiB", backend: be, bytes: 12 << 22, bench: pipeline(n, chunks, true)})
		register(bcase{name: "pipeline_sync_16x1MiB", backend: be, bytes: 12 << 22, bench: pipeline(n, chunks, false)})
	}
}

// pipeline: y = a*x + y over n float32 present on the device, in chunks:
// each chunk is an update to the device of its x and y, one kernel, and
// an update of y back. nowait: every construct nowait, ordered by depend
// items, all waited for at the end; else each construct synchronous.
func pipeline(n, chunks int, nowait bool) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		x, y := make([]float32, n), make([]float32, n)
		if err := target.EnterData(dev, target.Alloc(x), target.Alloc(y)); err != nil {
			return nil, nil, err
		}
		c := n / chunks
		tasks := make([]*target.Task, 0, 3*chunks)
		one := func() error {
			tasks = tasks[:0]
			var err error
			for k := 0; k < chunks && err == nil; k++ {
				xc, yc := x[k*c:(k+1)*c], y[k*c:(k+1)*c]
				r := target.Region{Device: dev, Kernel: kernels.Saxpy, Shape: target.N(c),
					Args: []target.Arg{target.Int(c), target.Float32(0.5), target.Slice(xc), target.Slice(yc)}}
				if !nowait {
					err = errors.Join(target.Update(dev, target.To(xc), target.To(yc)), target.Target(r), target.Update(dev, target.From(yc)))
					continue
				}
				r.Maps = []target.Map{target.DependIn(xc), target.DependInOut(yc)}
				tasks = append(tasks,
					target.UpdateNowait(dev, target.To(xc), target.To(yc), target.DependOut(xc), target.DependOut(yc)),
					target.TargetNowait(r),
					target.UpdateNowait(dev, target.From(yc), target.DependIn(yc)))
			}
			for _, t := range tasks {
				err = errors.Join(err, t.Wait())
			}
			return err
		}
		if err := one(); err != nil {
			return nil, nil, err
		}
		return func(b *testing.B) {
				for b.Loop() {
					must(b, one())
				}
			}, func() {
				if err := target.ExitData(dev, target.Delete(x), target.Delete(y)); err != nil {
					panic(fmt.Sprintf("pipeline teardown: %v", err))
				}
			}, nil
	}
}

func lookupName(n int) string {
	switch n {
	case 1:
		return "1"
	case 1000:
		return "1e3"
	}
	return "1e6"
}

// emptyTarget: one empty kernel, one team, no maps.
func emptyTarget(dev int) (func(b *testing.B), func(), error) {
	r := target.Region{Device: dev, Kernel: kernels.Empty, Shape: target.Shape{Size: [3]int{1, 1, 1}, Teams: 1, Threads: 1},
		Args: []target.Arg{target.Int(1)}}
	if err := target.Target(r); err != nil {
		return nil, nil, err
	}
	return func(b *testing.B) {
		for b.Loop() {
			must(b, target.Target(r))
		}
	}, nil, nil
}

// tofrom: an empty kernel with one float32 array of n elements mapped tofrom.
func tofrom(n int) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		x := make([]float32, n)
		r := target.Region{Device: dev, Kernel: kernels.Empty, Shape: target.Shape{Size: [3]int{1, 1, 1}, Teams: 1, Threads: 1},
			Maps: []target.Map{target.ToFrom(x)}, Args: []target.Arg{target.Int(1)}}
		if err := target.Target(r); err != nil {
			return nil, nil, err
		}
		return func(b *testing.B) {
			for b.Loop() {
				must(b, target.Target(r))
			}
		}, nil, nil
	}
}

// enterExit: enter data to + exit data from of n float32.
func enterExit(n int) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		x := make([]float32, n)
		to, from := []target.Map{target.To(x)}, []target.Map{target.From(x)}
		return func(b *testing.B) {
			for b.Loop() {
				must(b, target.EnterData(dev, to...))
				must(b, target.ExitData(dev, from...))
			}
		}, nil, nil
	}
}

// lookup: translation of an interior range in a table of n live entries.
func lookup(n int) func(int) (func(*testing.B), func(), error) {
	return func(int) (func(*testing.B), func(), error) {
		t, host := mapping.NewBenchTable(n)
		sub := host[len(host)/4 : len(host)/2]
		if _, err := t.Translate(sub); err != nil {
			return nil, nil, err
		}
		return func(b *testing.B) {
			for b.Loop() {
				if _, err := t.Translate(sub); err != nil {
					must(b, err)
				}
			}
		}, nil, nil
	}
}

// saxpy: y = a*x + y over n elements already present on the device, so the
// figure is the kernel's throughput (3 x 4 bytes per element).
func saxpy(n int) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = 1, 2
		}
		if err := target.EnterData(dev, target.To(x), target.To(y)); err != nil {
			return nil, nil, err
		}
		r := target.Region{Device: dev, Kernel: kernels.Saxpy, Shape: target.N(n),
			Args: []target.Arg{target.Int(n), target.Float32(0.5), target.Slice(x), target.Slice(y)}}
		if err := target.Target(r); err != nil {
			return nil, nil, err
		}
		return func(b *testing.B) {
				for b.Loop() {
					must(b, target.Target(r))
				}
			}, func() {
				if err := target.ExitData(dev, target.Release(x), target.Release(y)); err != nil {
					panic(fmt.Sprintf("saxpy teardown: %v", err))
				}
			}, nil
	}
}

// goLoopSaxpy: the same work as saxpy as a plain parallel Go loop, one
// goroutine per CPU, no runtime in between.
func goLoopSaxpy(n int) func(int) (func(*testing.B), func(), error) {
	return func(int) (func(*testing.B), func(), error) {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = 1, 2
		}
		p := runtime.GOMAXPROCS(0)
		return func(b *testing.B) {
			for b.Loop() {
				var wg sync.WaitGroup
				for t := 0; t < p; t++ {
					lo, hi := kernels.Chunk(n, p, t)
					wg.Add(1)
					go func() {
						defer wg.Done()
						xs, ys := x[lo:hi], y[lo:hi]
						ys = ys[:len(xs)]
						for i := range xs {
							ys[i] = 0.5*xs[i] + ys[i]
						}
					}()
				}
				wg.Wait()
			}
		}, nil, nil
	}
}

// update: a present buffer of size bytes copied to (or from) the device
// with target update, which is the copy alone.
func update(size int, toDevice bool) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		x := make([]byte, size)
		if err := target.EnterData(dev, target.Alloc(x)); err != nil {
			return nil, nil, err
		}
		m := target.From(x)
		if toDevice {
			m = target.To(x)
		}
		return func(b *testing.B) {
				for b.Loop() {
					must(b, target.Update(dev, m))
				}
			}, func() {
				if err := target.ExitData(dev, target.Delete(x)); err != nil {
					panic(fmt.Sprintf("update teardown: %v", err))
				}
			}, nil
	}
}
