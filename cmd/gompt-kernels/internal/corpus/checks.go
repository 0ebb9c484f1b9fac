package corpus

import "sync/atomic"

// The kernels of the run-time checks' tests (checks_test.go): indices
// the generator cannot prove in range, and divisors that may be 0, in a
// map kernel, a helper, a reduction, and with check=off.

// Gather reads src at the indices idx holds: an index outside src fails
// the launch with Go's message on every device.
//
//gompt:kernel dims=n len(src)=m
func Gather(i int, n, m int, idx []int, src, dst []float32) {
	dst[i] = src[idx[i]]
}

// GatherUnchecked is Gather with check=off: no run-time check on the
// device and no bounds test in the Go image.
//
//gompt:kernel dims=n len(src)=m check=off
func GatherUnchecked(i int, n, m int, idx []int, src, dst []float32) {
	dst[i] = src[idx[i]]
}

// Scatter writes through a helper at the indices idx holds.
//
//gompt:kernel dims=n len(dst)=m
func Scatter(i int, n, m int, idx []int, src, dst []float32) {
	put(dst, idx[i], src[i])
}

//gompt:func
func put(dst []float32, j int, v float32) {
	dst[j] = v
}

// Quotient divides elementwise: a zero divisor fails the launch.
//
//gompt:kernel dims=n
func Quotient(i int, n int, a, b, q []int32) {
	q[i] = a[i] / b[i]
}

// GatherSum is the sum of src at the indices idx holds.
//
//gompt:kernel dims=n len(src)=m reduce=+
func GatherSum(i int, n, m int, idx []int, src []float32) float32 {
	return src[idx[i]]
}

// Seek walks from idx[i] until it finds a zero in src: with no zero
// before the end it reads past it, and the loop must stop there rather
// than run on reading zeros.
//
//gompt:kernel dims=n len(src)=m
func Seek(i int, n, m int, idx []int, src []int32, pos []int) {
	j := idx[i]
	for src[j] != 0 {
		j++
	}
	pos[i] = j
}

// AtomicCount counts the indices idx holds, atomically: an index outside
// h fails as any element access does.
//
//gompt:kernel dims=n len(h)=m
func AtomicCount(i int, n, m int, idx []int, h []uint32) {
	atomic.AddUint32(&h[idx[i]], 1)
}
