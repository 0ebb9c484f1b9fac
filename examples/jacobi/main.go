// Command jacobi runs many 2-D Jacobi relaxation steps inside one target
// data region, bringing the grid back to the host every K steps to report
// progress, and checks the final grid against a plain Go computation.
//
//	go run ./examples/jacobi [-device N or a name: host:0, opencl:0, cuda:0, initial] [-nx 512] [-ny 512] [-iters 200] [-k 50]
package main

import (
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/gompt/gompt/examples/internal/ex"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
)

// The defaults of -nx, -ny, -iters and -k.
const (
	defaultNX    = 512
	defaultNY    = 512
	defaultIters = 200
	defaultK     = 50
)

func main() {
	dev := ex.DeviceFlag()
	nx := flag.Int("nx", defaultNX, "grid columns")
	ny := flag.Int("ny", defaultNY, "grid rows")
	iters := flag.Int("iters", defaultIters, "Jacobi steps (even)")
	every := flag.Int("k", defaultK, "update the host copy every k steps")
	flag.Parse()
	const name = "jacobi"
	ex.Describe(name, *dev)
	if *iters%2 != 0 || *iters <= 0 || *every <= 0 || *nx < 3 || *ny < 3 {
		ex.Check(name, fmt.Errorf("want positive even -iters, positive -k, and a grid of at least 3x3"))
	}
	X, Y := *nx, *ny
	t0 := time.Now()
	a, err := run(*dev, X, Y, *iters, *every, func(step int, a []float32) {
		fmt.Println(progress(step, X, Y, a))
	})
	el := time.Since(t0)
	ex.Check(name, err)

	ref := reference(X, Y, *iters)
	for i := range a {
		if math.Abs(float64(a[i]-ref[i])) > 1e-5 {
			ex.Fail(name, "grid[%d] = %g, want %g", i, a[i], ref[i])
		}
	}
	pts := float64(X*Y) * float64(*iters)
	ex.Timing("data region (all steps)", el, fmt.Sprintf("%.1f Mpoint-steps/s", pts/el.Seconds()/1e6))
	fmt.Printf("%s: OK, %dx%d grid after %d steps verified\n", name, X, Y, *iters)
	ex.Check(name, target.Shutdown())
}

// initial returns the starting grid: a hot top edge (row 0), the rest 0.
func initial(X, Y int) []float32 {
	a := make([]float32, X*Y)
	for x := 0; x < X; x++ {
		a[x] = 1
	}
	return a
}

// run makes iters Jacobi steps on device dev inside one target data
// region, bringing the grid back every `every` steps for report, and
// returns the final grid.
func run(dev, X, Y, iters, every int, report func(step int, a []float32)) ([]float32, error) {
	a := initial(X, Y)
	b := append([]float32(nil), a...)
	step := func(in, out []float32) error {
		return target.Target(target.Region{
			Device: target.Dev(dev),
			Kernel: kernels.Jacobi,
			Shape:  target.N2(X, Y),
			Args:   []target.Arg{target.Int(X), target.Int(Y), target.Slice(in), target.Slice(out)},
		})
	}
	err := target.Data(dev, []target.Map{target.ToFrom(a), target.ToFrom(b)}, func() error {
		for it := 0; it < iters; it += 2 {
			if err := step(a, b); err != nil {
				return err
			}
			if err := step(b, a); err != nil {
				return err
			}
			if (it+2)%every == 0 {
				if err := target.Update(dev, target.From(a)); err != nil {
					return err
				}
				report(it+2, a)
			}
		}
		return nil
	})
	return a, err
}

// progress is the line reporting the grid after step steps: the
// temperature a few rows below the hot edge, in the middle column, where
// the heat arrives within the first steps (the centre of a large grid
// stays at 0 for thousands of steps), and the mean temperature of the
// grid, which rises at every step as heat flows in.
func progress(step, X, Y int, a []float32) string {
	row := min(8, Y/2)
	sum := 0.0
	for _, v := range a {
		sum += float64(v)
	}
	return fmt.Sprintf("  step %4d: T(x=%d, y=%d) %.6f, mean %.6f", step, X/2, row, a[row*X+X/2], sum/float64(len(a)))
}

// reference computes the grid after iters steps with plain Go.
func reference(X, Y, iters int) []float32 {
	ref := initial(X, Y)
	out := append([]float32(nil), ref...)
	for it := 0; it < iters; it++ {
		jacobiStep(X, Y, ref, out)
		ref, out = out, ref
	}
	return ref
}

func jacobiStep(X, Y int, in, out []float32) {
	for y := 0; y < Y; y++ {
		for x := 0; x < X; x++ {
			i := y*X + x
			if x == 0 || y == 0 || x == X-1 || y == Y-1 {
				out[i] = in[i]
				continue
			}
			out[i] = 0.25 * (in[i-X] + in[i+X] + in[i-1] + in[i+1])
		}
	}
}
