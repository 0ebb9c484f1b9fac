// Command matmul offloads C = A*B (float32, row-major) to a device, checks
// it against a plain Go triple loop, and prints the device and timing.
//
//	go run ./examples/matmul [-device N or a name: host:0, opencl:0, cuda:0, initial] [-n 256]
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
	n := flag.Int("n", 256, "matrices are n x n")
	flag.Parse()
	const name = "matmul"
	ex.Describe(name, *dev)
	if *n < 1 {
		ex.Check(name, fmt.Errorf("-n %d: want a positive matrix size", *n))
	}
	m, k := *n, *n
	A := make([]float32, m*k)
	B := make([]float32, k**n)
	C := make([]float32, m**n)
	for i := range A {
		A[i] = float32(i%17) * 0.25
	}
	for i := range B {
		B[i] = float32(i%13) - 6
	}

	t0 := time.Now()
	err := target.Target(target.Region{
		Device: target.Dev(*dev),
		Kernel: kernels.Matmul,
		Shape:  target.N2(*n, m),
		Maps:   []target.Map{target.To(A), target.To(B), target.From(C)},
		Args: []target.Arg{target.Int(m), target.Int(*n), target.Int(k),
			target.Slice(A), target.Slice(B), target.Slice(C)},
	})
	el := time.Since(t0)
	ex.Check(name, err)

	for i := 0; i < m; i++ {
		for j := 0; j < *n; j++ {
			var s float64
			for l := 0; l < k; l++ {
				s += float64(A[i*k+l]) * float64(B[l**n+j])
			}
			got := float64(C[i**n+j])
			if math.Abs(got-s) > 1e-4*math.Max(1, math.Abs(s)) {
				ex.Fail(name, "C[%d][%d] = %g, want %g", i, j, got, s)
			}
		}
	}
	flops := 2 * float64(m) * float64(*n) * float64(k)
	ex.Timing("target region (maps+kernel)", el, fmt.Sprintf("%.2f GFLOP/s", flops/el.Seconds()/1e9))
	fmt.Printf("%s: OK, %dx%d result verified\n", name, m, *n)
	ex.Check(name, target.Shutdown())
}
