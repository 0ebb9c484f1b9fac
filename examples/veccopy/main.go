// Command veccopy is the classic OMPT test program (LLVM's
// offload/test/ompt/veccopy.c in Go): a target region, a target data
// region with an update, enter and exit data, and the device memory
// routines, on N = 1000 int32. It verifies a == b and exits 0.
//
// With -goroutines G it runs that sequence on G goroutines at once, each
// with arrays of its own and a nowait target region besides: a tool sees
// constructs on several OS threads at the same time (ci/test.sh runs it
// so under LLVM's Archer).
//
//	go run ./examples/veccopy [-device N or a name: host:0, opencl:0, cuda:0, initial] [-goroutines G]
package main

import (
	"flag"
	"fmt"
	"sync"

	"github.com/gompt/gompt/examples/internal/ex"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
)

const N = 1000

func main() {
	dev := ex.DeviceFlag()
	goroutines := flag.Int("goroutines", 1, "run the sequence on this many goroutines at once")
	flag.Parse()
	const name = "veccopy"
	ex.Describe(name, *dev)
	if *goroutines < 1 {
		ex.Fail(name, "-goroutines %d: want 1 or more", *goroutines)
	}
	var wg sync.WaitGroup
	for g := range *goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vecCopy(name, *dev, g > 0 || *goroutines > 1)
		}()
	}
	wg.Wait()
	if *goroutines > 1 {
		fmt.Printf("%s: OK, a == b for all %d elements on each of %d goroutines\n", name, N, *goroutines)
	} else {
		fmt.Printf("%s: OK, a == b for all %d elements\n", name, N)
	}
	ex.Check(name, target.Shutdown())
}

// vecCopy runs the sequence on device d (target.DefaultDevice resolves
// like any device number); nowait adds a nowait target region.
func vecCopy(name string, d int, nowait bool) {
	a := make([]int32, N)
	b := make([]int32, N)
	for i := range b {
		b[i] = int32(i)
	}
	region := target.Region{
		Device: target.Dev(d),
		Kernel: kernels.Copy32,
		Shape:  target.N(N),
		Maps:   []target.Map{target.From(a), target.To(b)},
		Args:   []target.Arg{target.Int(N), target.Slice(b), target.Slice(a)},
	}

	// target map(from: a) map(to: b): a[i] = b[i]
	ex.Check(name, target.Target(region))
	// target data map(tofrom: a) { target update to(a) }
	ex.Check(name, target.Data(d, []target.Map{target.ToFrom(a)}, func() error {
		return target.Update(d, target.To(a))
	}))
	// target enter data map(to: b); target exit data map(from: b)
	ex.Check(name, target.EnterData(d, target.To(b)))
	ex.Check(name, target.ExitData(d, target.From(b)))
	// omp_target_alloc(4000); omp_target_memcpy from b; omp_target_free
	p, err := target.AllocMem(N*4, d)
	ex.Check(name, err)
	ex.Check(name, target.Memcpy(target.On(d, p), target.Host(b), N*4))
	ex.Check(name, target.FreeMem(p, d))
	if nowait {
		// target nowait map(from: a) map(to: b), then taskwait
		ex.Check(name, target.TargetNowait(region).Wait())
	}

	for i := range a {
		if a[i] != b[i] {
			ex.Fail(name, "a[%d] = %d, b[%d] = %d", i, a[i], i, b[i])
		}
	}
}
