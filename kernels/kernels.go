package kernels

import "github.com/gompt/gompt/device"

// All returns every kernel of the library, in a fixed order: Empty, Saxpy,
// VecAdd, Dot, Matmul, Jacobi, Fill, Copy32, SaxpyCUDA. The slice is new on each
// call and belongs to the caller; the kernels are shared and immutable.
func All() []*device.Kernel {
	return []*device.Kernel{Empty, Saxpy, VecAdd, Dot, Matmul, Jacobi, Fill, Copy32, SaxpyCUDA}
}

// ByName returns the library kernel called name ("saxpy", "dot_partial", ...), and
// false when there is none. Safe for concurrent use.
func ByName(name string) (*device.Kernel, bool) {
	for _, k := range All() {
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
