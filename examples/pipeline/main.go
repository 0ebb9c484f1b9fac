// Command pipeline runs a chunked saxpy as a pipeline of nowait constructs
// ordered by depend items, so that the copies of one chunk overlap the
// kernels of another, and compares it with the same work done one
// synchronous construct after another. Both results are checked against a
// plain Go loop.
//
// Each chunk is three constructs: an update that copies the chunk of x and
// y to the device (depend out on both), -reps saxpy launches y = a*x + y
// (launch.RunSaxpyNowait, depend in x, inout y), and an update that copies
// y back (depend in y).
// Nothing waits until every chunk has been issued; the depend items alone
// order each chunk's steps, and chunks run side by side on the device's
// queues.
//
//	go run ./examples/pipeline [-device N] [-n 4194304] [-chunks 16] [-reps 4]
//	GOMPT_TRACE=/tmp/pipeline.json go run ./examples/pipeline   # its timeline
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/gompt/gompt/examples/internal/ex"
	"github.com/gompt/gompt/kernels/launch"
	"github.com/gompt/gompt/target"
)

func main() {
	dev := ex.DeviceFlag()
	n := flag.Int("n", 1<<22, "number of elements")
	chunks := flag.Int("chunks", 16, "number of chunks (n must be a multiple)")
	reps := flag.Int("reps", 4, "kernel launches per chunk")
	flag.Parse()
	const name = "pipeline"
	ex.Describe(name, *dev)
	if *n < 1 || *chunks < 1 || *n%*chunks != 0 || *reps < 1 || *reps > 64 {
		ex.Check(name, fmt.Errorf("-n %d -chunks %d -reps %d: want n > 0 a multiple of chunks > 0, and 1 to 64 reps", *n, *chunks, *reps))
	}
	const a = 2
	x := make([]float32, *n)
	y := make([]float32, *n)
	want := make([]float32, *n)
	reset := func() {
		for i := range x {
			// Small integers: every sum is exact in float32.
			x[i], y[i] = float32(i%7), float32(i%13)
			want[i] = y[i] + float32(*reps)*a*x[i]
		}
	}
	verify := func(what string) {
		for i := range y {
			if y[i] != want[i] {
				ex.Fail(name, "%s: y[%d] = %g, want %g", what, i, y[i], want[i])
			}
		}
	}

	// A first small run loads the kernel (an OpenCL build) outside the
	// timings.
	c := *n / *chunks
	_, err := run(*dev, x[:c], y[:c], 1, 1, a, false)
	ex.Check(name, err)

	reset()
	el, err := run(*dev, x, y, *chunks, *reps, a, false)
	ex.Check(name, err)
	verify("synchronous")
	ex.Timing("synchronous constructs", el, "")

	reset()
	elp, err := run(*dev, x, y, *chunks, *reps, a, true)
	ex.Check(name, err)
	verify("pipelined")
	ex.Timing("nowait + depend pipeline", elp, fmt.Sprintf("%.2fx", el.Seconds()/elp.Seconds()))

	fmt.Printf("%s: OK, %d elements in %d chunks verified both ways\n", name, *n, *chunks)
	ex.Check(name, target.Shutdown())
}

// run does the chunked saxpy on dev, with nowait constructs ordered by
// depend items (pipelined) or with synchronous ones, and returns how long
// it took from the first copy to the last.
func run(dev int, x, y []float32, chunks, reps int, a float32, pipelined bool) (time.Duration, error) {
	// The device buffers are allocated once; each chunk's copies are
	// updates of a part of them.
	if err := target.EnterData(dev, target.Alloc(x), target.Alloc(y)); err != nil {
		return 0, err
	}
	t0 := time.Now()
	c := len(x) / chunks
	var tasks []*target.Task
	var err error
	for k := 0; k < chunks && err == nil; k++ {
		xc, yc := x[k*c:(k+1)*c], y[k*c:(k+1)*c]
		// The launchers map xc and yc, which the enter data made present:
		// they copy nothing; the updates do.
		if !pipelined {
			err = target.Update(dev, target.To(xc), target.To(yc))
			for r := 0; r < reps && err == nil; r++ {
				err = launch.RunSaxpy(target.Dev(dev), c, a, xc, yc)
			}
			if err == nil {
				err = target.Update(dev, target.From(yc))
			}
			continue
		}
		tasks = append(tasks, target.UpdateNowait(dev, target.To(xc), target.To(yc), target.DependOut(xc), target.DependOut(yc)))
		for r := 0; r < reps; r++ {
			tasks = append(tasks, launch.RunSaxpyNowait(target.Dev(dev), c, a, xc, yc, target.DependIn(xc), target.DependInOut(yc)))
		}
		tasks = append(tasks, target.UpdateNowait(dev, target.From(yc), target.DependIn(yc)))
	}
	for _, t := range tasks {
		if terr := t.Wait(); terr != nil && err == nil {
			err = terr
		}
	}
	el := time.Since(t0)
	if xerr := target.ExitData(dev, target.Delete(x), target.Delete(y)); err == nil {
		err = xerr
	}
	return el, err
}
