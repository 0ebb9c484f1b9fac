package main

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"testing"
)

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

// The prover places a team array's index split from the thread index
// (ly, lx := th/16, th%16) against the array's length: those loads have no
// test; an index it cannot place keeps one.
func TestTeamArrayIndexesProven(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod")
	out := generateSrc(t, `package k

import "github.com/gompt/gompt/kernelrt"

//gompt:kernel team=256 dims=teams len(x)=teams*256
func K(t, th int, teams int, m int, x []float32) {
	var tile [256]float32
	ly, lx := th/16, th%16
	tile[th] = x[t*256+th]
	kernelrt.Barrier()
	var acc float32
	for q := 0; q < 16; q++ {
		acc += tile[ly*16+q] * tile[q*16+lx]
	}
	acc += tile[m]
	kernelrt.Barrier()
	x[t*256+th] = acc
}
`, ir.Options{Clang: "no-such-clang"})
	cl := string(out["gompt_K.cl"])
	assert.Contains(t, cl, "(tile[((long)((ulong)((long)((ulong)ly * (ulong)(16L))) + (ulong)q))] * tile[")
	assert.Contains(t, cl, "gompt_lldc_float(tile, 256L, m, gompt_fault, gompt_stop, 1L)")
	assert.Contains(t, cl, "x[((long)((ulong)((long)((ulong)t * (ulong)(256L))) + (ulong)th))]")
}

// The README's and kernels/doc.go's examples of a team kernel, an atomic
// and an array reduction generate.
func TestDocExamples(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod")
	out := generateSrc(t, `package k

import (
	"sync/atomic"

	"github.com/gompt/gompt/kernelrt"
)

//gompt:kernel team=64 dims=teams len(in)=teams*64 len(sums)=teams
func BlockSum(t, th int, teams int, in, sums []float32) {
	var part [64]float32 // the team's
	part[th] = in[t*64+th]
	for s := 32; s > 0; s /= 2 {
		kernelrt.Barrier()
		if th < s {
			part[th] += part[th+s]
		}
	}
	if th == 0 {
		sums[t] = part[0]
	}
}

//gompt:kernel dims=n len(count)=16
func Count(i int, n int, v []uint32, count []uint32) {
	atomic.AddUint32(&count[v[i]%16], 1)
}

//gompt:kernel dims=n reduce(h)=+ len(h)=256
func Histogram(i int, n int, v []uint8, h []uint32) { h[v[i]]++ }
`, ir.Options{Clang: "no-such-clang"})
	for _, f := range []string{"gompt_BlockSum.cl", "gompt_Count.cl", "gompt_Histogram.cl", ir.GoFileName} {
		assert.NotEmpty(t, out[f], f)
	}
}
