// Command heat runs 2-D heat diffusion on a device: the step is a Go
// function (heat.go) that gompt-kernels translated into OpenCL C, PTX and
// a Go image, run by its generated launcher, runHeat. The grid stays on
// the device in one target data region across all the steps; only the
// final grid comes back. It checks the result, bit for bit, against a
// plain Go loop over the same function.
//
//	go run ./examples/heat [-device N or a name: host:0, opencl:0, cuda:0, initial] [-nx 256] [-ny 192] [-steps 500] [-alpha 0.2]
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/gompt/gompt/examples/internal/ex"
	"github.com/gompt/gompt/target"
)

func main() {
	dev := ex.DeviceFlag()
	nx := flag.Int("nx", 256, "grid columns")
	ny := flag.Int("ny", 192, "grid rows")
	steps := flag.Int("steps", 500, "time steps")
	alpha := flag.Float64("alpha", 0.2, "diffusion per step (0 < alpha <= 0.25 is stable)")
	flag.Parse()
	const name = "heat"
	ex.Describe(name, *dev)
	if *nx < 3 || *ny < 3 || *steps < 1 || *alpha <= 0 || *alpha > 0.25 {
		ex.Check(name, fmt.Errorf("want a grid of at least 3x3, at least one step and 0 < -alpha <= 0.25"))
	}
	X, Y, a := *nx, *ny, float32(*alpha)
	t0 := time.Now()
	got, err := run(*dev, X, Y, *steps, a)
	el := time.Since(t0)
	ex.Check(name, err)

	want := reference(X, Y, *steps, a)
	for i := range got {
		if got[i] != want[i] {
			ex.Fail(name, "grid[%d] (x=%d, y=%d) = %g, want %g (the Go loop's, bit for bit)", i, i%X, i/X, got[i], want[i])
		}
	}
	ex.Timing("data region (all steps)", el, fmt.Sprintf("%.1f Mpoint-steps/s", float64(X*Y)*float64(*steps)/el.Seconds()/1e6))
	py := min(8, Y/2)
	fmt.Printf("%s: OK, %dx%d grid after %d steps equals the Go loop's; T(x=%d, y=%d) %.6f\n", name, X, Y, *steps, X/2, py, got[py*X+X/2])
	ex.Check(name, target.Shutdown())
}

// initial is the starting grid: the top edge hot (1), the left edge warm
// (0.5), the rest 0.
func initial(X, Y int) []float32 {
	g := make([]float32, X*Y)
	for y := range Y {
		g[y*X] = 0.5
	}
	for x := range X {
		g[x] = 1
	}
	return g
}

// run makes steps heat steps on device dev and returns the final grid. The
// two grids are mapped once, by one data region: a is copied in, b only
// allocated; inside it runHeat finds both present and copies nothing; the
// final grid alone is copied back, by one update.
func run(dev, X, Y, steps int, alpha float32) ([]float32, error) {
	return runOn(dev, initial(X, Y), X, Y, steps, alpha)
}

// runOn is run from the grid a (which it may change).
func runOn(dev int, a []float32, X, Y, steps int, alpha float32) ([]float32, error) {
	b := make([]float32, X*Y)
	final := a
	if steps%2 == 1 {
		final = b
	}
	err := target.Data(dev, []target.Map{target.To(a), target.Alloc(b)}, func() error {
		in, out := a, b
		for range steps {
			if err := runHeat(target.Dev(dev), X, Y, alpha, in, out); err != nil {
				return err
			}
			in, out = out, in
		}
		return target.Update(dev, target.From(final))
	})
	return final, err
}

// reference computes the same steps with a plain Go loop calling heat.
func reference(X, Y, steps int, alpha float32) []float32 {
	in, out := initial(X, Y), make([]float32, X*Y)
	for range steps {
		for y := range Y {
			for x := range X {
				heat(x, y, X, Y, alpha, in, out)
			}
		}
		in, out = out, in
	}
	return in
}
