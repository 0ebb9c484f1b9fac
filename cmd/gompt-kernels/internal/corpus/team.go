package corpus

import "github.com/gompt/gompt/kernelrt"

// TeamReverse reverses each block of 64 elements of in into out through a
// team array, and sums each block into sums[t] by a tree of barriers in
// another; a team-level value (base), a per-thread value living across
// barriers (mine), and a barrier in a loop and in an if that every thread
// takes alike.
//
//gompt:kernel team=64 dims=teams len(in)=teams*64 len(out)=teams*64 len(sums)=teams
func TeamReverse(t, th int, teams int, flip bool, in []int32, out []int32, sums []int64) {
	var buf [64]int32
	var part [64]int64
	base := t * 64
	mine := in[base+th]
	buf[th] = mine
	part[th] = int64(mine)
	kernelrt.Barrier()
	out[base+th] = buf[63-th] - mine
	for s := 32; s > 0; s /= 2 {
		if th < s {
			part[th] += part[th+s]
		}
		kernelrt.Barrier()
	}
	if flip {
		buf[th] = -buf[th]
		kernelrt.Barrier()
		out[base+th] += buf[(th+1)%64]
	} else {
		kernelrt.Barrier()
	}
	if th == 0 {
		sums[t] = part[0] + int64(mine)
	}
}

// TeamTuple assigns team arrays' elements in tuple assignments (issue
// 38: the generator crashed on the first one), with Go's order: the
// values and the targets' indexes are evaluated first, then stored left
// to right, so that j, a[j] = ... stores at the j before the assignment.
// Each thread writes only its own elements between barriers; after them
// it reads another thread's.
//
//gompt:kernel team=64 dims=teams len(in)=teams*64 len(out)=teams*128
func TeamTuple(t, th int, teams int, in []float32, out []float32) {
	var a, b [64]float32
	a[th], b[th] = in[t*64+th], 1
	j := th
	j, a[j] = 63-th, a[j]*2
	kernelrt.Barrier()
	x := a[j]
	b[th], x = x, b[th]
	kernelrt.Barrier()
	o := t*128 + th
	out[o], out[o+64] = b[63-th], b[th]+x
}
