package plan

import "github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"

// WidePoints is how many neighbouring points a work-item of a CPU OpenCL
// device runs together in a wide kernel: four doubles fill an AVX2
// register.
const WidePoints = 4

// Wide plans k's OpenCL C for CPU devices: where its Go image runs in
// lanes (a loop independent of the point around work that depends on it,
// no helper calls, no reduction, no loop striding a row apart from one
// point to the next: plan/lanes.go), its dimension is one and its device
// code makes no checks, a work-item runs WidePoints neighbouring points
// together, each statement that depends on the point once per point, in
// the points' order, inside the loops they share. A CPU compiler then
// makes vector code across the points: POCL's is scalar for a point
// whose inner loop sums in Go's order (a reduction it may not reorder),
// and vectorizes the same sums across four points, each in its order.
// Each point's operations are Go's, in Go's order, so the results keep
// Go's bits. Checks are left to the one-point form: a failed one stops
// its point at that statement, which the points run together would not.
func Wide(k *ir.Kernel) {
	if k.Lanes != nil && len(k.Sites) == 0 && len(k.Dims) == 1 && k.Team == 0 {
		k.Wide = WidePoints
	}
}
