// Command jacobi runs many 2-D Jacobi relaxation steps inside one target
// data region, bringing the grid back to the host every K steps to report
// progress, and checks the final grid against a plain Go computation.
//
//	go run ./examples/jacobi [-device N] [-nx 512] [-ny 512] [-iters 200] [-k 50]
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

func main() {
	dev := ex.DeviceFlag()
	nx := flag.Int("nx", 512, "grid columns")
	ny := flag.Int("ny", 512, "grid rows")
	iters := flag.Int("iters", 200, "Jacobi steps (even)")
	every := flag.Int("k", 50, "update the host copy every k steps")
	flag.Parse()
	const name = "jacobi"
	ex.Describe(name, *dev)
	if *iters%2 != 0 || *iters <= 0 || *every <= 0 || *nx < 3 || *ny < 3 {
		ex.Check(name, fmt.Errorf("want positive even -iters, positive -k, and a grid of at least 3x3"))
	}
	X, Y := *nx, *ny
	a := make([]float32, X*Y)
	b := make([]float32, X*Y)
	for x := 0; x < X; x++ {
		a[x] = 1 // hot top edge
	}
	copy(b, a)
	ref := append([]float32(nil), a...)
	refOut := append([]float32(nil), b...)

	step := func(in, out []float32) error {
		return target.Target(target.Region{
			Device: *dev,
			Kernel: kernels.Jacobi,
			Shape:  target.N2(X, Y),
			Args:   []target.Arg{target.Int(X), target.Int(Y), target.Slice(in), target.Slice(out)},
		})
	}
	t0 := time.Now()
	err := target.Data(*dev, []target.Map{target.ToFrom(a), target.ToFrom(b)}, func() error {
		for it := 0; it < *iters; it += 2 {
			if err := step(a, b); err != nil {
				return err
			}
			if err := step(b, a); err != nil {
				return err
			}
			if (it+2)%*every == 0 {
				if err := target.Update(*dev, target.From(a)); err != nil {
					return err
				}
				fmt.Printf("  step %4d: centre %.6f\n", it+2, a[(Y/2)*X+X/2])
			}
		}
		return nil
	})
	el := time.Since(t0)
	ex.Check(name, err)

	for it := 0; it < *iters; it++ {
		jacobiStep(X, Y, ref, refOut)
		ref, refOut = refOut, ref
	}
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
