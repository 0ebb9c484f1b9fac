// Command saxpy offloads y = a*x + y to a device, checks the result against
// a plain Go loop, and prints the device and timing.
//
//	go run ./examples/saxpy [-device N or a name: host:0, opencl:0, cuda:0, initial] [-n 16777216]
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
	n := flag.Int("n", 1<<24, "number of elements")
	a := flag.Float64("a", 2.5, "the scalar a")
	flag.Parse()
	const name = "saxpy"
	ex.Describe(name, *dev)
	if *n < 1 {
		ex.Check(name, fmt.Errorf("-n %d: want a positive number of elements", *n))
	}

	x := make([]float32, *n)
	y := make([]float32, *n)
	want := make([]float32, *n)
	for i := range x {
		x[i] = float32(i%1000) * 0.5
		y[i] = float32(i%77) - 3
	}
	av := float32(*a)
	for i := range want {
		want[i] = av*x[i] + y[i]
	}

	t0 := time.Now()
	err := target.Target(target.Region{
		Device: target.Dev(*dev),
		Kernel: kernels.Saxpy,
		Shape:  target.N(*n),
		Maps:   []target.Map{target.To(x), target.ToFrom(y)},
		Args:   []target.Arg{target.Int(*n), target.Float32(av), target.Slice(x), target.Slice(y)},
	})
	el := time.Since(t0)
	ex.Check(name, err)
	for i := range y {
		if math.Abs(float64(y[i]-want[i])) > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
			ex.Fail(name, "y[%d] = %g, want %g", i, y[i], want[i])
		}
	}
	bytes := 3 * 4 * float64(*n) // x in, y in and out
	ex.Timing("target region (maps+kernel)", el, fmt.Sprintf("%.2f GB/s moved", bytes/el.Seconds()/1e9))
	fmt.Printf("%s: OK, %d elements verified\n", name, *n)
	ex.Check(name, target.Shutdown())
}
