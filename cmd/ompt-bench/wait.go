package main

import (
	"runtime"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/clraw"
)

// The wait cases measure what waiting for a command costs the waiting
// thread: the CPU time (getrusage RUSAGE_THREAD, the goroutine locked to
// its thread) per wait for a kernel of about a millisecond on POCL,
// reported as the metric cpu-ns/op beside the wall time. wait_1ms waits
// through the plugin (Record and Wait); raw_cl_wait_1ms through
// clWaitForEvents, which busy-waits on NVIDIA. The _x16 cases have 16
// goroutines, each locked to its thread, wait at once on queues of their
// own; cpu-ns/op is their threads' CPU time per wait (the kernels run on
// the driver's threads, not counted).
func init() {
	register(bcase{name: "wait_1ms", backend: "opencl", bench: waitCase(1)})
	register(bcase{name: "wait_1ms_x16", backend: "opencl", bench: waitCase(16)})
	register(bcase{name: "raw_cl_wait_1ms", backend: "opencl", bench: rawWait(1)})
	register(bcase{name: "raw_cl_wait_1ms_x16", backend: "opencl", bench: rawWait(16)})
}

const waitSteps = 1 << 20

var spinKernel = &device.Kernel{Name: "gompt_raw_spin",
	Params: []device.Param{{Name: "p", Kind: device.ParamBuffer}, {Name: "n", Kind: device.ParamUint32}},
	Images: []device.Image{{Kind: "opencl-c", Source: clraw.SpinSource}}}

// waitCase: g goroutines each launch the spin kernel on their own queue,
// record an event and wait for it, b.N times.
func waitCase(g int) func(int) (func(*testing.B), func(), error) {
	return func(n int) (func(*testing.B), func(), error) {
		d, err := deviceOf(n)
		if err != nil {
			return nil, nil, err
		}
		f, err := d.Load(spinKernel)
		if err != nil {
			return nil, nil, err
		}
		type worker struct {
			q   device.Queue
			buf device.Buffer
		}
		ws := make([]worker, g)
		for i := range ws {
			if ws[i].q, err = d.NewQueue(); err != nil {
				return nil, nil, err
			}
			if ws[i].buf, err = d.Alloc(64); err != nil {
				return nil, nil, err
			}
		}
		one := func(w worker) error {
			if err := w.q.Launch(f, device.Shape{Size: [3]int{1}, Threads: 1, Teams: 1}, []device.Arg{{Ptr: w.buf.Ptr}, {Bits: waitSteps}}); err != nil {
				return err
			}
			ev, err := w.q.Record()
			if err != nil {
				return err
			}
			return ev.Wait()
		}
		if err := one(ws[0]); err != nil {
			return nil, nil, err
		}
		teardown := func() {
			for _, w := range ws {
				w.q.Release()
				d.Free(w.buf.Ptr)
			}
		}
		return func(b *testing.B) {
			cpu := parallelCPU(g, func(i int) {
				for range b.N {
					must(b, one(ws[i]))
				}
			})
			b.ReportMetric(float64(cpu)/float64(b.N*g), "cpu-ns/op")
		}, teardown, nil
	}
}

// parallelCPU runs fn(0) to fn(g-1) in g goroutines, each locked to its
// thread, and returns the CPU time their threads used.
func parallelCPU(g int, fn func(i int)) int64 {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sum int64
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c0 := threadCPU()
			fn(i)
			c := threadCPU() - c0
			mu.Lock()
			sum += c
			mu.Unlock()
		}()
	}
	wg.Wait()
	return sum
}

// rawWait: the same waits through clWaitForEvents, g goroutines at once.
func rawWait(g int) func(int) (func(*testing.B), func(), error) {
	return func(n int) (func(*testing.B), func(), error) {
		d, err := deviceOf(n)
		if err != nil {
			return nil, nil, err
		}
		waits := make([]func(int) error, g)
		var releases []func()
		teardown := func() {
			for _, r := range releases {
				r()
			}
		}
		for i := range waits {
			w, r, err := clraw.Wait(d, waitSteps)
			if err != nil {
				teardown()
				return nil, nil, err
			}
			waits[i] = w
			releases = append(releases, r)
		}
		if err := waits[0](1); err != nil {
			teardown()
			return nil, nil, err
		}
		return func(b *testing.B) {
			b.ResetTimer()
			cpu := parallelCPU(g, func(i int) { must(b, waits[i](b.N)) })
			b.ReportMetric(float64(cpu)/float64(b.N*g), "cpu-ns/op")
		}, teardown, nil
	}
}
