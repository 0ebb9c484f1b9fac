package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

//go:embed dot_partial.cl
var dotCL string

//go:embed dot_partial.ptx
var dotPTX string

// DotMaxThreads is the largest team size Dot's device code supports (its
// local scratch array has this many elements).
const DotMaxThreads = 256

// Dot is a dot-product reduction in two steps: the kernel writes one partial
// sum per team, partial[t] = sum of x[i]*y[i] over team t's share of [0, n),
// and the caller adds the partials on the host (SumPartials). Parameters: n
// int64, x and y float32 buffers of at least n elements, partial a float32
// buffer of one element per team.
//
// Its name is "dot_partial", not "dot": OpenCL C has a built-in dot, and
// OpenCL implementations (POCL) refuse a kernel of that name.
//
// A launch must set Shape.Teams to len(partial) and Shape.Threads to at most
// DotMaxThreads (a power of two is fastest); DotShape builds such a shape.
// Team t's share is Chunk(n, teams, t), contiguous, on every device, so the
// partials agree across devices and not only their sum; a host device gives
// team t exactly that share when n is a multiple of teams, or when it splits
// dimension 0 as Chunk does.
var Dot = &device.Kernel{
	Name:       "dot_partial",
	Params:     []device.Param{int64Param("n"), bufParam("x", "n"), bufParam("y", "n"), bufParam("partial", "Shape.Teams")},
	Dims:       1,
	Images:     images("dot_partial", dotCL, dotPTX, dotHost),
	MaxThreads: DotMaxThreads,
	Sample:     dotSample,
}

// DotTeams returns a number of teams for a dot product of n elements: enough
// teams of DotMaxThreads threads that each thread sums about 16 elements, at
// least 1 and at most 1024. The partial buffer needs that many elements.
func DotTeams(n int) int {
	return min(max(n/(16*DotMaxThreads), 1), 1024)
}

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

// dotHost writes partial[team], the sum over r, accumulated in float64.
func dotHost(a *device.HostArgs, r device.Range, team, teams int) {
	lo, hi := clampRange(r, 0, a.Int(0))
	x := a.F32(1)[lo:hi]
	y := a.F32(2)[lo:hi]
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		x4, y4 := x[i:i+4:i+4], y[i:i+4:i+4]
		s0 += float64(x4[0]) * float64(y4[0])
		s1 += float64(x4[1]) * float64(y4[1])
		s2 += float64(x4[2]) * float64(y4[2])
		s3 += float64(x4[3]) * float64(y4[3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i]) * float64(y[i])
	}
	a.F32(3)[team] = float32((s0 + s1) + (s2 + s3))
}

func dotSample(n int, seed int64) device.Sample {
	n = max(n, 1)
	teams := min(DotTeams(n), n)
	n -= n % teams // every split of [0, n) into teams is then Chunk's
	r := sampleRand("dot_partial", n, seed)
	return device.Sample{
		Shape: DotShape(n, teams),
		Bufs:  [][]byte{nil, randFloats(r, n, 0, 1), randFloats(r, n, 0, 1), make([]byte, 4*teams)},
		Args:  []device.Arg{int64Arg(n), {}, {}, {}},
		Tol:   1e-4,
	}
}
