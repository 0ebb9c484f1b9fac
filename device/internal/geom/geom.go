// Package geom holds the launch-geometry arithmetic that the CUDA and
// OpenCL plugins share: how a number of teams is spread over a kernel's
// dimensions, and how many teams a team kernel runs.
package geom

import "math"

// Spread returns the teams (blocks, work-groups) per dimension of a launch
// of teams teams over dims dimensions (1..3) that need need[d] teams each
// to be covered, with at most hi[d] in dimension d >= 1: from the last
// dimension down, g[d] is need[d]*f, with f such that the teams left would
// spread evenly over dimensions 0..d, moved to a nearby divisor of the
// teams left so that none are lost; dimension 0 takes the rest. The
// product is exactly teams (teams >= 1), and g[0] <= teams.
func Spread(teams, dims int, need, hi [3]int) [3]int {
	g := [3]int{teams, 1, 1}
	rest := teams
	for d := dims - 1; d >= 1; d-- {
		prod := 1.0
		for k := 0; k <= d; k++ {
			prod *= float64(max(need[k], 1))
		}
		f := math.Pow(float64(rest)/prod, 1/float64(d+1))
		g[d] = NearDivisor(rest, float64(need[d])*f, min(need[d], hi[d]))
		rest /= g[d]
	}
	g[0] = rest
	return g
}

// NearDivisor returns a divisor of n in [1, hi] near target: the nearest
// within a few dozen steps of it, else the largest n/k at most target for
// a few dozen k, else 1. It is always a divisor of n, so that Spread loses
// no teams.
func NearDivisor(n int, target float64, hi int) int {
	hi = max(1, min(hi, n))
	t := max(1, min(int(math.Round(target)), hi))
	for step := 0; step < 64; step++ {
		if lo := t - step; lo >= 1 && n%lo == 0 {
			if up := t + step; up <= hi && n%up == 0 && float64(up)-target < target-float64(lo) {
				return up
			}
			return lo
		}
		if up := t + step; up <= hi && n%up == 0 {
			return up
		}
	}
	for k := (n + t - 1) / t; k < (n+t-1)/t+64 && k <= n; k++ {
		if n%k == 0 && n/k <= hi {
			return n / k
		}
	}
	return 1
}

// TeamGroups returns how many teams of team threads (team >= 1) a launch
// of a team kernel runs: teams when set, otherwise enough for a thread per
// point of size (each extent counted as at least 1), at most
// math.MaxInt / team, so that the launch's threads stay countable.
func TeamGroups(teams int, size [3]int, team int) int {
	if teams > 0 {
		return teams
	}
	limit := math.MaxInt / team
	points := 1
	for _, n := range size {
		n = max(n, 1)
		if points > math.MaxInt/n {
			return limit
		}
		points *= n
	}
	return min((points-1)/team+1, limit)
}
