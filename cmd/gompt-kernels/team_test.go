package main

import "testing"

// A barrier where not every thread of a team reaches it, a return, a
// branch out of a loop around a barrier, and a barrier outside a team
// kernel are errors at their positions.
func TestTeamErrors(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod") // kernelrt's own requirements, into the test module's go.mod
	checkErrors(t, `package k

import "github.com/gompt/gompt/kernelrt"

//gompt:func
func helper(x int) int {
	kernelrt.Barrier() // want "kernelrt.Barrier outside a team kernel"
	return x
}

//gompt:kernel dims=n
func Map(i int, n int, x []float32) {
	kernelrt.Barrier() // want "kernelrt.Barrier outside a team kernel"
	x[i] = 1
}

//gompt:kernel team=64 dims=teams len(x)=teams*64
func Bad(t, th int, teams int, m int, x []float32) {
	var tile [64]float32
	tile[th] = x[t*64+th]
	if th < 32 {
		kernelrt.Barrier() // want "a barrier under a condition or loop that depends on the thread"
	}
	for j := 0; j < th; j++ {
		kernelrt.Barrier() // want "a barrier under a condition or loop that depends on the thread"
	}
	v := tile[th]
	for j := 0; j < m; j++ {
		if v > 0 {
			break // want "a break out of a loop around a barrier"
		}
		kernelrt.Barrier()
	}
	for j := 0; j < int(v); j++ { // want "v in the condition of an if or loop around a barrier"
		kernelrt.Barrier() // want "a barrier under a condition or loop that depends on the thread"
	}
	if th == 0 {
		return // want "a return in a team kernel is not supported"
	}
	x[t*64+th] = v + float32(helper(th))
}

//gompt:kernel team=64 dims=teams,m // want "team= takes dims=TEAMS, one int parameter"
func TwoDims(t, th int, teams, m int) {}

//gompt:kernel team=2000 dims=teams // want "team=2000: want the number of threads per team, 1 to 1024"
func TooBig(t, th int, teams int) {}
`)
}
