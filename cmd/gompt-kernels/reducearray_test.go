package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A reduction array may only be added to; its elements are integers with
// atomics, its length a whole number, its kernel one-dimensional.
func TestReduceArrayErrors(t *testing.T) {
	checkErrors(t, `package k

//gompt:kernel dims=n reduce(h)=+ len(h)=256
func Read(i int, n int, v []uint8, h []uint32, out []uint32) {
	h[v[i]] += 2
	out[i] = h[0] // want "h is reduce(h)=+: the kernel may only add to its elements"
	h[1] = 3 // want "h is reduce(h)=+: the kernel may only add to its elements"
}

//gompt:kernel dims=n reduce(f)=+ len(f)=4 // want "reduce(f)=+: f is a []float32; array reductions add int32, uint32, int64 or uint64"
func Float(i int, n int, f []float32) { f[0] += 1 }

//gompt:kernel dims=n reduce(h)=+ // want "reduce(h)=+ needs len(h)=N, a whole number from 1 to 16384"
func NoLen(i int, n int, h []uint32) { h[0]++ }

//gompt:kernel dims=n reduce(h)=max len(h)=4 // want "reduce(h)=max: an array reduction is reduce(BUF)=+"
func Max(i int, n int, h []uint32) { h[0]++ }

//gompt:kernel dims=nx,ny reduce(h)=+ len(h)=4 // want "reduce(BUF)= is for a map kernel with one dimension"
func TwoD(x, y int, nx, ny int, h []uint32) { h[0]++ }
`)
}

// The C of an array reduction adds into the team's copy in local memory
// with local atomics, and the copy into the buffer once per team; the Go
// image adds into an array of its own and then, atomically, into the
// buffer.
func TestReduceArrayCode(t *testing.T) {
	out := generateSrc(t, `package k

//gompt:kernel dims=n reduce(h)=+ len(h)=256
func Hist(i int, n int, v []uint8, h []uint32) { h[v[i]]++ }
`, options{clang: "no-such-clang"})
	cl := string(out["gompt_Hist.cl"])
	assert.Contains(t, cl, "__local uint gompt_r_h[256];")
	assert.Contains(t, cl, "__local uint *h, long gompt_len_h_")
	assert.Contains(t, cl, "atomic_add(&h[gompt_t1], (uint)(1));")
	assert.Contains(t, cl, "if (gompt_v != 0) atomic_add(&h[gompt_l], gompt_v);")
	src := string(out[goFileName])
	assert.Contains(t, src, "var gomptRAH [256]uint32")
	assert.Contains(t, src, "gomptatomic.AddUint32(&gomptRBH[gomptI], gomptV)")
}
