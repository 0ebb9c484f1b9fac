package kernels

import (
	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernelrt"
)

// DotMaxThreads is the largest team size Dot's device code supports (its
// local scratch array has this many elements): kernelrt.MaxThreads, as for
// every reduction gompt-kernels generates.
const DotMaxThreads = kernelrt.MaxThreads

// Dot (generated from the Go function dot, reduce=+) is a dot-product
// reduction in two steps: the kernel writes one partial sum per team,
// partial[t] = sum of x[i]*y[i] over team t's share of [0, n), and the
// caller adds the partials on the host (SumPartials; launch.RunDot does
// both). Parameters: n int64, x and y float32 buffers of at least n
// elements, partial a float32 buffer of one element per team.
//
// Its name is "dot_partial", not "dot", as it was when written by hand;
// its OpenCL and PTX entry point is gompt_dot_partial (OpenCL C has a
// built-in dot, and POCL refuses a kernel of that name).
//
// A launch must set Shape.Teams to len(partial) and Shape.Threads to at most
// DotMaxThreads (a power of two is fastest); DotShape builds such a shape.
// Team t's share on an OpenCL or CUDA device is Chunk(n, teams, t),
// contiguous; a host device gives team t the share of dimension 0 it
// splits off, which is the same when n is a multiple of teams. Each
// partial is summed in float32 on a device (its threads' sums, then a tree
// of them) and in float64 by the Go image, so partials agree across
// devices within float32 rounding, not bit for bit.

// DotTeams returns a number of teams for a dot product of n elements: enough
// teams of DotMaxThreads threads that each thread sums about 16 elements, at
// least 1 and at most 1024 (kernelrt.Teams). The partial buffer needs that
// many elements.
func DotTeams(n int) int { return kernelrt.Teams(n) }

// DotShape returns the launch shape of Dot over n elements with teams teams
// (DotTeams(n) when teams <= 0) of DotMaxThreads threads. Its Teams is the
// number of elements the partial buffer needs.
func DotShape(n, teams int) device.Shape {
	if teams <= 0 {
		teams = DotTeams(n)
	}
	return device.Shape{Size: [3]int{max(n, 1), 1, 1}, Teams: teams, Threads: DotMaxThreads}
}

// SumPartials returns the sum of Dot's partial sums, accumulated in float64.
func SumPartials(partial []float32) float64 {
	var s float64
	for _, v := range partial {
		s += float64(v)
	}
	return s
}

// MatmulTiledTeams returns the number of teams MatmulTiled runs for an
// m x n product: one per 64x64 tile of C, none for an empty C (its
// launchers then run nothing, as Matmul's do).
func MatmulTiledTeams(m, n int) int {
	if m <= 0 || n <= 0 {
		return 0
	}
	return (m + 63) / 64 * ((n + 63) / 64)
}
