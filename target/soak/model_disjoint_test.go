package soak

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
)

// The model's disjoint array: one array of each round, mapped once (enter
// data, before the goroutines start) and written by every goroutine at
// once, each in its own chunk, through sub-slices at offsets in every
// alignment class of the device (a chunk starts 1 to 32 elements past a
// multiple of its stride, so its byte offsets are 4 to 128 past one):
// constructs on several goroutines, and nowait constructs of one goroutine
// on disjoint parts of its chunk, write the same device buffer at the same
// time. Nothing may be lost and nothing outside the written ranges may
// change: the goroutine checks its chunk through target update from (of
// the chunk, or a part of it), and at the round's end the whole array comes
// back with exit data from and is compared with the model, the gaps
// between chunks included. On OpenCL these arguments go through staged
// copies of the buffer, which once copied back the whole buffer's tail and
// lost what other queues wrote meanwhile.

const classDisjoint = "disjoint sub-slices of one mapped array"

// disjoint is a round's disjoint array with its model.
type disjoint struct {
	host []float32 // the program's array
	x    []float32 // saxpy's input, mapped with it, never written
	dev  []float32 // the model of the device copy (the initial device, zero-copy maps: of host)
	want []float32 // the model of host
	lo   []int     // chunk w is [lo[w], lo[w]+m)
	m    int
}

func newDisjoint(rng *rand.Rand, goroutines int) *disjoint {
	d := &disjoint{m: 16 + rng.IntN(1500)}
	stride := d.m + 64
	for w := range goroutines {
		d.lo = append(d.lo, w*stride+1+(w*37+rng.IntN(4))%32)
	}
	n := goroutines * stride
	d.host, d.x = make([]float32, n), make([]float32, n)
	randomInts(rng, d.host)
	randomInts(rng, d.x)
	d.dev, d.want = slices.Clone(d.host), slices.Clone(d.host)
	return d
}

// disjointBegin maps the round's disjoint array (the round's goroutine,
// before the workers start).
func (r *round) disjointBegin() {
	r.st.run(r.devName, classDisjoint)
	if err := target.EnterData(r.dev, target.To(r.dis.host), target.To(r.dis.x)); err != nil {
		r.st.fail(r.devName, r.num, -1, 0, classDisjoint, false, fmt.Sprintf("mapping the disjoint array: %v", err))
	}
}

// disjointEnd unmaps the disjoint array, copying it back, and compares all
// of it with the model.
func (r *round) disjointEnd() {
	d := r.dis
	r.st.run(r.devName, classDisjoint)
	if err := target.ExitData(r.dev, target.From(d.host), target.Release(d.x)); err != nil {
		r.st.fail(r.devName, r.num, -1, 0, classDisjoint, false, fmt.Sprintf("unmapping the disjoint array: %v", err))
		return
	}
	if i, bad := diff(d.host, d.dev); bad > 0 {
		r.st.fail(r.devName, r.num, -1, 0, classDisjoint, true, fmt.Sprintf("disjoint array after exit data from: [%d] = %v, want %v (%d of %d differ; chunks start at %v, %d elements each)",
			i, d.host[i], d.dev[i], bad, len(d.host), d.lo, d.m))
	}
}

// opDisjoint writes one to three disjoint parts of the goroutine's chunk
// of the disjoint array, with target constructs, nowait or not (the nowait
// ones all in flight at once), and then maybe checks the chunk, or part of
// it, through target update from.
func (wk *worker) opDisjoint(nowait bool) {
	d, r := wk.r.dis, wk.r
	lo := d.lo[wk.w]
	// Cut the chunk at up to two points; write a random part of each piece.
	cuts := []int{lo, lo + d.m}
	for range wk.rng.IntN(3) {
		cuts = append(cuts, lo+wk.rng.IntN(d.m))
	}
	slices.Sort(cuts)
	var regs []target.Region
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		if a == b {
			continue
		}
		plo := a + wk.rng.IntN(b-a)
		phi := plo + 1 + wk.rng.IntN(b-plo)
		m := phi - plo
		reg := target.Region{Device: target.Dev(r.dev), Shape: target.N(m)}
		if wk.rng.IntN(2) == 0 {
			v := float32(wk.rng.IntN(9) - 4)
			reg.Kernel, reg.Args = kernels.Fill, []target.Arg{target.Int(m), target.Float32(v), target.Slice(d.host[plo:phi])}
			for j := plo; j < phi; j++ {
				d.dev[j] = v
			}
		} else {
			// x at the same offset as y, or at another class.
			xo := plo
			if wk.rng.IntN(2) == 0 {
				xo = wk.rng.IntN(len(d.x) - m + 1)
			}
			a := float32([]int{-1, 1, 2}[wk.rng.IntN(3)])
			reg.Kernel, reg.Args = kernels.Saxpy, []target.Arg{target.Int(m), target.Float32(a), target.Slice(d.x[xo : xo+m]), target.Slice(d.host[plo:phi])}
			for j := range m {
				d.dev[plo+j] = a*d.x[xo+j] + d.dev[plo+j]
			}
		}
		regs = append(regs, reg)
	}
	cl := classDisjoint + " (target)"
	if nowait {
		cl = classDisjoint + " (target nowait)"
	}
	var errs []error
	if nowait {
		var tasks []*target.Task
		for _, reg := range regs {
			tasks = append(tasks, target.TargetNowait(reg))
		}
		for _, t := range tasks {
			errs = append(errs, t.Wait())
		}
	} else {
		for _, reg := range regs {
			errs = append(errs, target.Target(reg))
		}
	}
	for _, err := range errs {
		r.st.run(r.devName, cl)
		if err != nil {
			wk.fail(cl, false, "a kernel on the goroutine's chunk of the disjoint array: %v", err)
		}
	}
	if r.initial || r.zeroCopy { // the kernels wrote the host's array
		copy(d.want[lo:lo+d.m], d.dev[lo:lo+d.m])
	}
	if wk.rng.IntN(2) == 0 {
		return
	}
	// Check: update from of the chunk or a part of it.
	ulo, uhi := lo, lo+d.m
	if wk.rng.IntN(2) == 0 {
		ulo = lo + wk.rng.IntN(d.m)
		uhi = ulo + 1 + wk.rng.IntN(lo+d.m-ulo)
	}
	ucl := classDisjoint + " (update from)"
	r.st.run(r.devName, ucl)
	if err := target.Update(r.dev, target.From(d.host[ulo:uhi])); err != nil {
		wk.fail(ucl, false, "update from of the goroutine's chunk of the disjoint array: %v", err)
		return
	}
	copy(d.want[ulo:uhi], d.dev[ulo:uhi])
	if i, bad := diff(d.host[lo:lo+d.m], d.want[lo:lo+d.m]); bad > 0 {
		wk.fail(ucl, true, "chunk [%d, %d) of the disjoint array after update from [%d, %d): [%d] = %v, want %v (%d of %d differ)",
			lo, lo+d.m, ulo, uhi, lo+i, d.host[lo+i], d.want[lo+i], bad, d.m)
		copy(d.want[lo:lo+d.m], d.host[lo:lo+d.m]) // resync the host model
	}
}
