package main

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
)

// A sync/atomic call outside Add, CompareAndSwap and Load of 32- and
// 64-bit integers on &buf[i] is an error naming the call and what is
// accepted.
func TestAtomicErrors(t *testing.T) {
	checkErrors(t, `package k

import "sync/atomic"

//gompt:kernel dims=n len(c)=4
func Bad(i int, n int, c []int32, u []uint64, f []float32) {
	var x int32
	atomic.AddInt32(&x, 1) // want "atomic.AddInt32 of &x is not supported in a gompt kernel (kernels call atomic.AddT, CompareAndSwapT and LoadT for T Int32, Uint32, Int64 and Uint64, with &buf[i]"
	atomic.StoreInt32(&c[0], 1) // want "atomic.StoreInt32 is not supported in a gompt kernel (kernels call atomic.AddT, CompareAndSwapT and LoadT for T Int32, Uint32, Int64 and Uint64, with &buf[i], an element of a slice parameter, as the address; there are no float atomics"
	_ = atomic.SwapUint64(&u[i], 2) // want "atomic.SwapUint64 is not supported"
	var a atomic.Int32 // want "a local variable of type sync/atomic.Int32"
	_ = a
	f[i] = 1
}
`)
}

// The atomics' C: Add returns the new value (C's the old), an index the
// prover places needs no test, one it cannot is tested against the
// buffer's length, 64-bit atomics use the extension on OpenCL and clang's
// builtins on PTX, and a Load from a buffer the kernel does not write is
// const.
func TestAtomicsC(t *testing.T) {
	out := generateSrc(t, `package k

import "sync/atomic"

//gompt:kernel dims=n len(h)=16
func Hist(i int, n int, v []uint32, h []uint32, s []int64, r []int32) {
	atomic.AddUint32(&h[v[i]%17], 1) // 16 is outside h
	atomic.AddInt64(&s[i], int64(v[i]))
	r[i] = atomic.LoadInt32(&r[i]) + 1
	if atomic.CompareAndSwapInt64(&s[i], 0, 1) {
		r[i] = int32(atomic.LoadUint32(&v[i]))
	}
}
`, ir.Options{Clang: "no-such-clang"})
	cl := string(out["gompt_Hist.cl"])
	for _, want := range []string{
		"return (uint)((uint)atomic_add(a, d) + (uint)d);",
		"gompt_atomic_add_uint_at(h, gompt_len_h_, ",
		"gompt_atomic_add_long(&s[i], ",
		"#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable",
		"#define gompt_atom_add64(a, d) __sync_fetch_and_add(a, d)",
		"return gompt_atom_cas64(a, o, n) == o;",
		"gompt_atomic_load_int(&r[i])",
		"volatile __global const uint *a",
		"gompt_atomic_load_uint_const(&v[i])",
	} {
		assert.Contains(t, cl, want)
	}
	src := string(out[ir.GoFileName])
	assert.Contains(t, src, `gomptatomic "sync/atomic"`)
	assert.Contains(t, src, "gomptatomic.AddUint32((&h[")
	require.True(t, strings.Contains(src, "gomptatomic.CompareAndSwapInt64("), src)
}
