package geom

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every team of a launch is somewhere: the product of the spread is the
// number of teams, every dimension stays within its limit, and a
// dimension never gets more teams than it needs when the rest can go
// elsewhere. The first case lost 284 of 1000 blocks in the CUDA plugin's
// own copy of this arithmetic (a "divisor" that did not divide).
func TestSpreadLosesNoTeams(t *testing.T) {
	type tc struct {
		teams, dims int
		need, hi    [3]int
	}
	cases := []tc{
		{1000, 3, [3]int{2, 513, 3}, [3]int{1 << 31, 65535, 65535}}, // Size [33,4097,3] in 32x8 blocks
		{1024, 2, [3]int{64, 2048, 1}, [3]int{1 << 31, 65535, 65535}},
		{7, 2, [3]int{1, 100000, 1}, [3]int{1 << 31, 65535, 65535}},
		{997, 3, [3]int{5, 5, 5}, [3]int{1 << 31, 2, 2}},
	}
	for teams := 1; teams <= 300; teams++ {
		for _, need := range [][3]int{{1, 1, 1}, {3, 7, 1}, {100, 2, 5}, {1, 1, 300}, {17, 33, 9}} {
			for dims := 1; dims <= 3; dims++ {
				cases = append(cases, tc{teams, dims, need, [3]int{1 << 31, need[1], 4}})
			}
		}
	}
	for _, c := range cases {
		g := Spread(c.teams, c.dims, c.need, c.hi)
		require.Equal(t, c.teams, g[0]*g[1]*g[2], "Spread(%d teams, %d dims, need %v, hi %v) = %v: %d teams, want %d", c.teams, c.dims, c.need, c.hi, g, g[0]*g[1]*g[2], c.teams)
		for d := 1; d < 3; d++ {
			require.GreaterOrEqual(t, g[d], 1, "Spread(%d teams, %d dims, need %v, hi %v) = %v: dimension %d out of [1, %d]", c.teams, c.dims, c.need, c.hi, g, d, min(c.hi[d], c.need[d]))
			require.False(t, d < c.dims && g[d] > max(1, min(c.hi[d], c.need[d])), "Spread(%d teams, %d dims, need %v, hi %v) = %v: dimension %d out of [1, %d]", c.teams, c.dims, c.need, c.hi, g, d, min(c.hi[d], c.need[d]))
			require.False(t, d >= c.dims && g[d] != 1, "Spread(%d teams, %d dims, need %v, hi %v) = %v: dimension %d out of [1, %d]", c.teams, c.dims, c.need, c.hi, g, d, min(c.hi[d], c.need[d]))
		}
	}
}

func TestNearDivisor(t *testing.T) {
	for _, c := range []struct {
		n      int
		target float64
		hi     int
		want   int
	}{
		{12, 5, 12, 4}, // 4 and 6 equally near: the smaller
		{12, 5.6, 12, 6},
		{12, 4.4, 12, 4},
		{13, 5, 13, 1}, // a prime: 1 is nearer than 13
		{1000, 129, 129, 125},
		{1000, 500, 3, 2},
		{7, 3, 0, 1},
	} {
		got := NearDivisor(c.n, c.target, c.hi)
		assert.Equal(t, c.want, got, "NearDivisor(%d, %v, %d)", c.n, c.target, c.hi)
		assert.Zero(t, c.n%got, "NearDivisor(%d, %v, %d)", c.n, c.target, c.hi)
	}
}

// TestTeamGroups: a launch's Teams when set; otherwise one thread per
// point, rounded up to whole teams, saturating rather than overflowing.
func TestTeamGroups(t *testing.T) {
	for _, c := range []struct {
		teams int
		size  [3]int
		team  int
		want  int
	}{
		{10, [3]int{5, 1, 1}, 64, 10},
		{0, [3]int{1000, 1, 1}, 64, 16},
		{0, [3]int{64, 2, 0}, 64, 2},
		{0, [3]int{0, 0, 0}, 64, 1},
		{0, [3]int{math.MaxInt, 4, 1}, 64, math.MaxInt / 64},
	} {
		if got := TeamGroups(c.teams, c.size, c.team); got != c.want {
			t.Errorf("TeamGroups(%d, %v, %d) = %d, want %d", c.teams, c.size, c.team, got, c.want)
		}
	}
}
