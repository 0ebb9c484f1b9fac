package main

import (
	"math"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda"
	"github.com/gompt/gompt/device/cuda/curaw"
	"github.com/gompt/gompt/kernels"
)

// Cases for the CUDA plugin's copies and waits (issue 18, items 4-6). They
// use the plugin device directly (a queue of its own) where the point is
// the order of operations on one queue; where there is no CUDA device they
// do not run.
func init() {
	// Item 4: a small copy on a queue whose kernel is still running. The
	// figure is the host time to enqueue a kernel and a 64 KiB copy in and
	// out behind it (the Sync is not timed): close to the kernel's run
	// time when the copies wait for it, a few microseconds when not.
	register(bcase{name: "cu_copies_behind_kernel", backend: "cuda", bench: smallBehindKernel(false)})
	// The whole of kernel, small copy in, kernel, small copy out, Sync:
	// with copies that do not wait, the second kernel is enqueued while
	// the first runs.
	register(bcase{name: "cu_kernel_copy_kernel_sync", backend: "cuda", bench: smallBehindKernel(true)})
	// Mid-size pageable copies, pipelined in chunks sized to the copy.
	for _, c := range []struct {
		name string
		size int
	}{{"1MiB", 1 << 20}, {"4MiB", 4 << 20}} {
		register(bcase{name: "h2d_" + c.name, backend: "cuda", bytes: int64(c.size), bench: update(c.size, true)})
		register(bcase{name: "d2h_" + c.name, backend: "cuda", bytes: int64(c.size), bench: update(c.size, false)})
	}
	// Item 5: a 2-D kernel over 2048x2048 with the data present, with
	// teams given (spread over both dimensions) and without (2-D blocks).
	register(bcase{name: "jacobi_2048", backend: "cuda", bytes: 2 * 4 << 22, bench: jacobi(2048, 0)})
	register(bcase{name: "jacobi_2048_teams_1024", backend: "cuda", bytes: 2 * 4 << 22, bench: jacobi(2048, 1024)})
	// Item 7: one kernel load that the driver must JIT-compile (its PTX
	// made unique, so that no compute cache has it), and one whose PTX the
	// driver has compiled before (its compute cache serves it).
	register(bcase{name: "cu_load_jit", backend: "cuda", bench: load(true)})
	register(bcase{name: "cu_load_cached", backend: "cuda", bench: load(false)})
	// Item 6: the cost of waiting for a kernel of about a millisecond
	// under each GOMPT_CUDA_SCHED, in a process of its own each (the flag
	// is set when the device opens); metrics["cpu-ns/op"] is the process's CPU
	// time (getrusage) per wait.
	for _, s := range []string{"blocking", "spin", "yield", "auto"} {
		register(bcase{name: "cu_wait_sched_" + s, backend: "cuda", env: []string{cuda.EnvSched + "=" + s}, plainEnv: true,
			bench: waitSched})
	}
}

// cuBench returns the plugin device of runtime device dev with a queue of
// its own, two float32 vectors of n elements for saxpy, and saxpy loaded.
type cuBench struct {
	d    device.Device
	q    device.Queue
	fn   device.Function
	x, y device.Buffer
	n    int
}

func newCUBench(dev, n int) (*cuBench, error) {
	d, err := deviceOf(dev)
	if err != nil {
		return nil, err
	}
	c := &cuBench{d: d, n: n}
	if c.fn, err = d.Load(kernels.Saxpy); err != nil {
		return nil, err
	}
	if c.x, err = d.Alloc(4 * n); err != nil {
		return nil, err
	}
	if c.y, err = d.Alloc(4 * n); err != nil {
		d.Free(c.x.Ptr)
		return nil, err
	}
	if c.q, err = d.NewQueue(); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *cuBench) launch() error {
	return c.q.Launch(c.fn, device.Shape{Size: [3]int{c.n, 1, 1}},
		[]device.Arg{{Bits: uint64(c.n)}, {Bits: uint64(math.Float32bits(0.5))}, {Ptr: c.x.Ptr}, {Ptr: c.y.Ptr}})
}

func (c *cuBench) close() {
	if c.q != nil {
		c.q.Release()
	}
	c.d.Free(c.x.Ptr)
	c.d.Free(c.y.Ptr)
}

// smallBehindKernel: saxpy over 2^24 elements (192 MiB of traffic, some
// 100 us on an H100) with 64 KiB copies behind it; whole: see init.
func smallBehindKernel(whole bool) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		c, err := newCUBench(dev, 1<<24)
		if err != nil {
			return nil, nil, err
		}
		const small = 64 << 10
		in, out := make([]byte, small), make([]byte, small)
		op := func() error {
			err := c.launch()
			if err == nil {
				err = c.q.CopyIn(c.x.Ptr, in)
			}
			if err == nil && whole {
				err = c.launch()
			}
			if err == nil {
				err = c.q.CopyOut(out, c.y.Ptr)
			}
			return err
		}
		if err := op(); err != nil {
			c.close()
			return nil, nil, err
		}
		if err := c.q.Sync(); err != nil {
			c.close()
			return nil, nil, err
		}
		return func(b *testing.B) {
			for b.Loop() {
				must(b, op())
				if !whole {
					b.StopTimer()
				}
				must(b, c.q.Sync())
				if !whole {
					b.StartTimer()
				}
			}
		}, c.close, nil
	}
}

// waitSched: saxpy over 2^26 elements (768 MiB of traffic, some 0.4 ms on
// an H100), then Sync; reports cpu-ns/op.
func waitSched(dev int) (func(*testing.B), func(), error) {
	c, err := newCUBench(dev, 1<<26)
	if err != nil {
		return nil, nil, err
	}
	if err := c.launch(); err == nil {
		err = c.q.Sync()
	}
	if err != nil {
		c.close()
		return nil, nil, err
	}
	return func(b *testing.B) {
		cpu0 := cpuTime()
		for b.Loop() {
			must(b, c.launch())
			must(b, c.q.Sync())
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	}, c.close, nil
}

// cpuTime returns the process's user and system CPU time (zero where
// processCPU does not measure it).
func cpuTime() time.Duration { return time.Duration(processCPU()) }

// load: saxpy's PTX loaded and unloaded through the binding (curaw.Load),
// made unique per load when jit.
func load(jit bool) func(int) (func(*testing.B), func(), error) {
	var ptx string
	for _, im := range kernels.Saxpy.Images {
		if im.Kind == "ptx" {
			ptx = im.Source
		}
	}
	return rawLoop(func(d device.Device, iters int) (time.Duration, error) { return curaw.Load(d, ptx, jit, iters) })
}
