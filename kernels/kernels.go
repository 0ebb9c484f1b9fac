package kernels

import "github.com/gompt/gompt/device"

// All returns the library's map kernels and its reduction, in a fixed
// order: Empty, Saxpy, VecAdd, Dot, Matmul, Jacobi, Fill, Copy32,
// SaxpyCUDA: float32 (and int32) buffers, with the parameters they had
// when they were written by hand. MatmulTiled (a team kernel) and
// Histogram (an array reduction) are not among them; Conformance adds
// them. The slice is new on each call and belongs to the caller; the
// kernels are shared and immutable.
func All() []*device.Kernel {
	return []*device.Kernel{Empty, Saxpy, VecAdd, Dot, Matmul, Jacobi, Fill, Copy32, SaxpyCUDA}
}

// Conformance returns the kernels a device's conformance run
// (devicetest.TestDevice) loads and runs against their Go images: All's,
// then MatmulTiled (work-groups of a fixed size, local memory, barriers)
// and Histogram (local atomics, uint8 values).
func Conformance() []*device.Kernel {
	return append(All(), MatmulTiled, Histogram)
}

// ByName returns the library kernel called name ("saxpy", "dot_partial", ...), and
// false when there is none. Safe for concurrent use.
func ByName(name string) (*device.Kernel, bool) {
	for _, k := range Conformance() {
		if k.Name == name {
			return k, true
		}
	}
	return nil, false
}

// Chunk returns the share [lo, hi) of team team out of teams in an
// iteration space [0, n): contiguous chunks of ceil(n/teams) iterations, the
// last ones shorter or empty. It is the split the device code of Dot (and
// of every reduction gompt-kernels generates, over the flattened
// iteration space) makes. teams < 1 counts as 1; team outside
// [0, teams) gets an empty share.
func Chunk(n, teams, team int) (lo, hi int) {
	if teams < 1 {
		teams = 1
	}
	if n <= 0 || team < 0 || team >= teams {
		return 0, 0
	}
	c := n / teams
	if n%teams != 0 {
		c++
	}
	lo = min(team*c, n)
	hi = min(lo+c, n)
	return lo, hi
}
