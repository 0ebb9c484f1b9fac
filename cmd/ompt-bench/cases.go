package main

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernelrt"
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
	register(bcase{name: "jacobi_512", bytes: 8 * 512 * 512, bench: jacobi(512, 0)})
	register(bcase{name: "matmul_512", bench: matmul(512, false)})
	register(bcase{name: "matmul_tiled_512", bench: matmul(512, true)})
	register(bcase{name: "go_loop_saxpy_2e24", backend: "host", bytes: 12 << 24, bench: goLoopSaxpy(1 << 24)})
	register(bcase{name: "dot_2e24", backend: "host", bytes: 8 << 24, bench: dot(1 << 24)})
	register(bcase{name: "dot_2e24", backend: "opencl", bytes: 8 << 24, bench: dot(1 << 24)})
	register(bcase{name: "histogram_2e24", bytes: 1 << 24, bench: histogram(1 << 24)})
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
				r := target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(c),
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

// loopTarget is a benchmark body that runs target region r each round.
func loopTarget(r target.Region) func(*testing.B) {
	return func(b *testing.B) {
		for b.Loop() {
			must(b, target.Target(r))
		}
	}
}

// emptyTarget: one empty kernel, one team, no maps.
func emptyTarget(dev int) (func(b *testing.B), func(), error) {
	r := target.Region{Device: target.Dev(dev), Kernel: kernels.Empty, Shape: target.Shape{Size: [3]int{1, 1, 1}, Teams: 1, Threads: 1},
		Args: []target.Arg{target.Int(1)}}
	if err := target.Target(r); err != nil {
		return nil, nil, err
	}
	return loopTarget(r), nil, nil
}

// tofrom: an empty kernel with one float32 array of n elements mapped tofrom.
func tofrom(n int) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		x := make([]float32, n)
		r := target.Region{Device: target.Dev(dev), Kernel: kernels.Empty, Shape: target.Shape{Size: [3]int{1, 1, 1}, Teams: 1, Threads: 1},
			Maps: []target.Map{target.ToFrom(x)}, Args: []target.Arg{target.Int(1)}}
		if err := target.Target(r); err != nil {
			return nil, nil, err
		}
		return loopTarget(r), nil, nil
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
		t, host := benchTable(n)
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

// benchTable returns a table on device "bench:0" holding n live entries
// (at least 1), and an interior 8-byte sub-range of the middle entry. The
// entries are associated 16-byte ranges of one host allocation, inserted in
// address order as a program's allocations usually are, with made-up
// device addresses that are never dereferenced.
func benchTable(n int) (*mapping.Table, []byte) {
	const size = 16
	n = max(n, 1)
	t := mapping.New("bench:0")
	mem := make([]byte, n*size)
	for off := 0; off < len(mem); off += size {
		// Associate cannot fail: the ranges are disjoint and non-empty.
		_ = t.Associate(mem[off:off+size:off+size], device.DevicePtr(0x10000+2*off))
	}
	mid := n / 2 * size
	return t, mem[mid+4 : mid+12 : mid+12]
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
		r := target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n),
			Args: []target.Arg{target.Int(n), target.Float32(0.5), target.Slice(x), target.Slice(y)}}
		if err := target.Target(r); err != nil {
			return nil, nil, err
		}
		return loopTarget(r), func() {
			if err := target.ExitData(dev, target.Release(x), target.Release(y)); err != nil {
				panic(fmt.Sprintf("saxpy teardown: %v", err))
			}
		}, nil
	}
}

// dot: a dot product of n float32 already present on the device (the
// kernel writes one partial sum per team, copied back each round). The
// setup checks the sum.
func dot(n int) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		x, y := make([]float32, n), make([]float32, n)
		var want float64
		for i := range x {
			x[i], y[i] = float32(i%7)*0.5, 2
			want += float64(x[i]) * float64(y[i])
		}
		if err := target.EnterData(dev, target.To(x), target.To(y)); err != nil {
			return nil, nil, err
		}
		teardown := func() {
			if err := target.ExitData(dev, target.Release(x), target.Release(y)); err != nil {
				panic(fmt.Sprintf("dot teardown: %v", err))
			}
		}
		shape := kernels.DotShape(n, 0)
		partial := make([]float32, shape.Teams)
		r := target.Region{Device: target.Dev(dev), Kernel: kernels.Dot, Shape: shape,
			Maps: []target.Map{target.From(partial)},
			Args: []target.Arg{target.Int(n), target.Slice(x), target.Slice(y), target.Slice(partial)}}
		err := target.Target(r)
		if err == nil && math.Abs(kernels.SumPartials(partial)-want) > 1e-5*want {
			err = fmt.Errorf("dot: %g, want %g: the device computed a wrong result", kernels.SumPartials(partial), want)
		}
		if err != nil {
			teardown()
			return nil, nil, err
		}
		return loopTarget(r), teardown, nil
	}
}

// histogram: 256 bins of n bytes already present on the device
// (kernels.Histogram, an array reduction; the bins are copied both ways
// each round). The setup checks the counts.
func histogram(n int) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		v := make([]uint8, n)
		want := make([]uint32, 256)
		for i := range v {
			v[i] = uint8((uint64(i) * 2654435761) >> 11)
			want[v[i]]++
		}
		if err := target.EnterData(dev, target.To(v)); err != nil {
			return nil, nil, err
		}
		teardown := func() {
			if err := target.ExitData(dev, target.Release(v)); err != nil {
				panic(fmt.Sprintf("histogram teardown: %v", err))
			}
		}
		h := make([]uint32, 256)
		r := target.Region{Device: target.Dev(dev), Kernel: kernels.Histogram,
			Shape: target.Shape{Size: [3]int{n, 1, 1}, Teams: kernelrt.Teams(n), Threads: kernelrt.MaxThreads},
			Maps:  []target.Map{target.ToFrom(h)},
			Args:  []target.Arg{target.Int(n), target.Slice(v), target.Slice(h)}}
		err := target.Target(r)
		if err == nil && !slices.Equal(h, want) {
			err = fmt.Errorf("histogram: %v, want %v: the device computed a wrong result", h[:4], want[:4])
		}
		if err != nil {
			teardown()
			return nil, nil, err
		}
		return loopTarget(r), teardown, nil
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

// jacobi: one 5-point Jacobi step on an n x n grid whose two buffers are
// already present on the device (4 bytes read and 4 written per point),
// with teams given (spread over both dimensions) or 0 (the plugin's choice).
// The setup checks the step against a plain Go one.
func jacobi(n, teams int) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		in, out := make([]float32, n*n), make([]float32, n*n)
		for i := range in {
			in[i] = float32(i%97) / 97
		}
		if err := target.EnterData(dev, target.To(in), target.Alloc(out)); err != nil {
			return nil, nil, err
		}
		teardown := func() {
			if err := target.ExitData(dev, target.Release(in), target.Release(out)); err != nil {
				panic(fmt.Sprintf("jacobi teardown: %v", err))
			}
		}
		shape := target.N2(n, n)
		shape.Teams = teams // 0: the plugin's choice
		r := target.Region{Device: target.Dev(dev), Kernel: kernels.Jacobi, Shape: shape,
			Args: []target.Arg{target.Int(n), target.Int(n), target.Slice(in), target.Slice(out)}}
		err := target.Target(r)
		if err == nil {
			err = target.Update(dev, target.From(out))
		}
		if err == nil {
			want := make([]float32, n*n)
			for y := range n {
				for x := range n {
					i := y*n + x
					if x == 0 || y == 0 || x == n-1 || y == n-1 {
						want[i] = in[i]
					} else {
						want[i] = 0.25 * (in[i-n] + in[i+n] + in[i-1] + in[i+1])
					}
				}
			}
			err = compare("jacobi", out, want, 1e-6)
		}
		if err != nil {
			teardown()
			return nil, nil, err
		}
		return loopTarget(r), teardown, nil
	}
}

// matmul: one product C = A*B of n x n matrices already present on the
// device (2n^3 flops), by kernels.Matmul, or kernels.MatmulTiled (a team
// kernel: 64x64 tiles through team arrays) with tiled. The setup checks C
// against a plain Go product.
func matmul(n int, tiled bool) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		a, bm, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		for i := range a {
			a[i], bm[i] = float32(i%13)/13, float32(i%7)/7-0.5
		}
		if err := target.EnterData(dev, target.To(a), target.To(bm), target.Alloc(c)); err != nil {
			return nil, nil, err
		}
		teardown := func() {
			if err := target.ExitData(dev, target.Release(a), target.Release(bm), target.Release(c)); err != nil {
				panic(fmt.Sprintf("matmul teardown: %v", err))
			}
		}
		r := target.Region{Device: target.Dev(dev), Kernel: kernels.Matmul, Shape: target.N2(n, n),
			Args: []target.Arg{target.Int(n), target.Int(n), target.Int(n), target.Slice(a), target.Slice(bm), target.Slice(c)}}
		if tiled {
			teams := kernels.MatmulTiledTeams(n, n)
			r.Kernel = kernels.MatmulTiled
			r.Shape = target.Shape{Size: [3]int{teams, 1, 1}, Teams: teams, Threads: 256}
			r.Args = append([]target.Arg{target.Int(teams)}, r.Args...)
		}
		err := target.Target(r)
		if err == nil {
			err = target.Update(dev, target.From(c))
		}
		if err == nil {
			want := make([]float32, n*n)
			for i := range n {
				for p := range n {
					av := a[i*n+p]
					for j := range n {
						want[i*n+j] += av * bm[p*n+j]
					}
				}
			}
			err = compare("matmul", c, want, 1e-3)
		}
		if err != nil {
			teardown()
			return nil, nil, err
		}
		return loopTarget(r), teardown, nil
	}
}

// compare returns an error naming the first element of got that differs
// from want by more than tol (relative to max(1, |want|)).
func compare(what string, got, want []float32, tol float64) error {
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > tol*max(1, math.Abs(float64(want[i]))) {
			return fmt.Errorf("%s: element %d = %g, want %g: the device computed a wrong result", what, i, got[i], want[i])
		}
	}
	return nil
}
