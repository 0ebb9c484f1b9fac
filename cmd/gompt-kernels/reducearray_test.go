package main

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"testing"
)

// A reduction array may only be updated with its operator; its elements
// are 32- or 64-bit numbers, its length a whole number, its kernel
// one-dimensional; min and max name the element they lower or raise once,
// at an index that calls nothing.
func TestReduceArrayErrors(t *testing.T) {
	checkErrors(t, `package k

//gompt:func
func pick(i int) int { return i & 3 }

//gompt:kernel dims=n reduce(h)=+ len(h)=256
func Read(i int, n int, v []uint8, h []uint32, out []uint32) {
	h[v[i]] += 2
	out[i] = h[0] // want "h is reduce(h)=+: the kernel may only add to its elements (h[i] += v, h[i] -= v, h[i]++, h[i]--)"
	h[1] = 3 // want "h is reduce(h)=+: the kernel may only add to its elements"
	h[2] *= 3 // want "h is reduce(h)=+: the kernel may only add to its elements"
	h[3] -= 1
	h[4]--
}

//gompt:kernel dims=n reduce(h)=* len(h)=4
func Prod(i int, n int, h []float64) {
	h[i&3] *= 2
	h[0] += 1 // want "h is reduce(h)=*: the kernel may only multiply its elements (h[i] *= v)"
	h[1]-- // want "h is reduce(h)=*: the kernel may only multiply"
}

//gompt:kernel dims=n reduce(h)=min len(h)=4
func Min(i int, n int, v []int32, h []int32) {
	h[i&3] = min(v[i], h[i&3])
	h[i&3] = max(h[i&3], v[i]) // want "h is reduce(h)=min: the kernel may only lower its elements (h[i] = min(h[i], v))"
	h[i&3] = min(h[(i&3)], v[i]) // want "h is reduce(h)=min: the kernel may only lower"
	h[1] = min(h[2], v[i]) // want "h is reduce(h)=min: the kernel may only lower"
	h[1] = min(h[1], h[1], v[i]) // want "h is reduce(h)=min: the kernel may only lower"
	h[pick(i)] = min(h[pick(i)], v[i]) // want "h is reduce(h)=min: its index in h[pick(i)] = min(h[pick(i)], v) may call nothing but conversions"
	h[int32(i)&3] = min(h[int32(i)&3]) // want "min(h[int32(i) & 3]) has no other operand: it changes nothing"
}

//gompt:kernel dims=n reduce(f)=+ len(f)=4 // want "reduce(f)=+: f is a []int16; an array reduction's elements are int32, uint32, int64, uint64, int, uint, float32 or float64"
func Small(i int, n int, f []int16) { f[0] += 1 }

//gompt:kernel dims=n reduce(h)=max reduce(g)=min len(h)=4096 len(g)=4096 // want "the array reductions' private copies take 65536 bytes of local memory per team, more than 49152"
func TooBig(i int, n int, h, g []float64) { h[0] = max(h[0], 1); g[0] = min(g[0], 1) }

//gompt:kernel dims=n reduce(h)=+ len(h)=12288
func Fits(i int, n int, h []uint32) { h[i%12288]++ }

//gompt:kernel dims=n reduce(h)=+ // want "reduce(h)=+ needs len(h)=N, a whole number from 1 to 16384"
func NoLen(i int, n int, h []uint32) { h[0]++ }

//gompt:kernel dims=n reduce(h)=or len(h)=4 // want "reduce(h)=or: want reduce(h)=+, reduce(h)=*, reduce(h)=min or reduce(h)=max"
func Or(i int, n int, h []uint32) { h[0]++ }

//gompt:kernel dims=nx,ny reduce(h)=+ len(h)=4 // want "reduce(h)=+: an array reduction is a map kernel with one dimension"
func TwoD(x, y int, nx, ny int, h []uint32) { h[0]++ }
`)
}

// The C of an array reduction combines into the team's copy in local
// memory (local atomics; in place on a CPU device), and the copy into the
// buffer once per team; the Go image combines into an array of its own
// and then, atomically, into the buffer. Operators without a device
// atomic are compare-and-swap loops on the element's bits.
func TestReduceArrayCode(t *testing.T) {
	out := generateSrc(t, `package k

//gompt:kernel dims=n reduce(h)=+ len(h)=256
func Hist(i int, n int, v []uint8, h []uint32) { h[v[i]]++ }

//gompt:kernel dims=n reduce(lo)=min reduce(p)=* len(lo)=8 len(p)=8
func Low(i int, n int, v []float32, lo []float32, p []int64) {
	lo[i&7] = min(lo[i&7], v[i], 2)
	p[i&7] *= int64(v[i])
}
`, ir.Options{Clang: "no-such-clang"})
	cl := string(out["gompt_Hist.cl"])
	assert.Contains(t, cl, "__local uint gompt_r_h[256];")
	assert.Contains(t, cl, "__local uint *h, long gompt_len_h_")
	assert.Contains(t, cl, "gompt_reduce_add_uint_local(&h[gompt_t1], gompt_t2);")
	assert.Contains(t, cl, "h[gompt_t1] = (h[gompt_t1] + gompt_t2);", "in place on a CPU device")
	assert.Contains(t, cl, "if (gompt_v != ((uint)0)) gompt_reduce_add_uint_global(&h[gompt_l], gompt_v);")
	assert.Contains(t, cl, "atomic_add(a, v);")
	low := string(out["gompt_Low.cl"])
	assert.Contains(t, low, "gompt_r_lo[gompt_l] = ((float)INFINITY);", "min's identity")
	assert.Contains(t, low, "gompt_r_p[gompt_l] = ((long)1);", "*'s identity")
	assert.Contains(t, low, "uint w = atomic_cmpxchg(b, o, n);", "a float's min: CAS on its bits")
	assert.Contains(t, low, "ulong w = gompt_atom_cas64(b, o, n);", "a 64-bit product: CAS")
	assert.Contains(t, low, "gompt_min_float(as_float(o), v)")
	src := string(out[ir.GoFileName])
	assert.Contains(t, src, "var gomptRAH [256]uint32")
	assert.Contains(t, src, "gomptrt.MergeSum(gomptRBH, gomptRAH[:], uint32(0))")
	assert.Contains(t, src, "gomptRALo[gomptI] = float32(gomptmath.Inf(1))")
	assert.Contains(t, src, "gomptrt.MergeMin(gomptRBLo, gomptRALo[:], float32(gomptmath.Inf(1)))")
	assert.Contains(t, src, "gomptrt.MergeProd(gomptRBP, gomptRAP[:], int64(1))")
}
