package corpus

import "sync/atomic"

// Histogram counts v's values modulo 16 (and modulo 4 in the 64-bit
// counts) with atomic adds; its 64-bit bins also sum the values, and ok[i]
// says that the Add's result (the new count) was at least 1. The counts
// are the same in any order of the points.
//
//gompt:kernel dims=n len(h32)=16 len(h64)=8 len(neg)=4 len(s)=3
func Histogram(i int, n int, v []uint32, h32 []uint32, h64 []uint64, neg []int32, s []int64, ok []uint8) {
	b := v[i] % 16
	if atomic.AddUint32(&h32[b], 1) >= 1 {
		ok[i] = 1
	}
	atomic.AddUint64(&h64[v[i]%4], 1)
	atomic.AddUint64(&h64[4+v[i]%4], uint64(v[i])<<40)
	atomic.AddInt32(&neg[v[i]%4], -3)
	atomic.AddInt64(&s[0], int64(v[i])-8)
	atomic.AddInt64(&s[1+i%2], 1<<33)
}

// AtomicMax keeps, in m32 and m64, the largest of v's values (by
// compare-and-swap loops, 32- and 64-bit, signed and unsigned), and in
// hits the number of points whose value is odd through an index outside
// its proof (a CAS on an element the prover cannot place).
//
//gompt:kernel dims=n len(m32)=2 len(m64)=2 len(u32)=7 len(i64)=1 len(hits)=16
func AtomicMax(i int, n int, v []int32, m32 []int32, m64 []uint64, u32 []uint32, i64 []int64, hits []uint32) {
	x := v[i]
	for {
		old := atomic.LoadInt32(&m32[0])
		if old >= x || atomic.CompareAndSwapInt32(&m32[0], old, x) {
			break
		}
	}
	for {
		old := atomic.LoadUint64(&m64[1])
		if old >= uint64(x)<<35 || atomic.CompareAndSwapUint64(&m64[1], old, uint64(x)<<35) {
			break
		}
	}
	for {
		old := atomic.LoadUint32(&u32[i%len(u32)])
		if old >= uint32(x) || atomic.CompareAndSwapUint32(&u32[i%len(u32)], old, uint32(x)) {
			break
		}
	}
	for {
		old := atomic.LoadInt64(&i64[0])
		if old <= -int64(x)<<40 || atomic.CompareAndSwapInt64(&i64[0], old, -int64(x)<<40) {
			break
		}
	}
	if x%2 == 1 {
		for {
			old := atomic.LoadUint32(&hits[x])
			if atomic.CompareAndSwapUint32(&hits[x], old, old+1) {
				break
			}
		}
	}
}
