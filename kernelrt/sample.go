package kernelrt

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"unsafe"

	"github.com/gompt/gompt/device"
)

// Rand returns the random source of kernel name's Sample(n, seed):
// deterministic for (name, n, seed), different between kernels.
func Rand(name string, n int, seed int64) *rand.Rand {
	h := uint64(14695981039346656037) // FNV-1a of the name keeps kernels apart
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(uint64(seed), h^uint64(n)))
}

// Extents returns the extents of a generated Sample of about n points over
// dims dimensions (1 to 3): n itself in one dimension (at least 1); in two
// and three, sides of at least 3 whose product is about n, the first the
// longest, so that a stencil has interior points.
func Extents(n, dims int) [3]int {
	n = max(n, 1)
	switch dims {
	case 2:
		nx := max(isqrt(n)+3, 3)
		return [3]int{nx, max(n/nx, 3), 1}
	case 3:
		c := max(int(math.Cbrt(float64(n))), 3)
		nx := c + 2
		ny := c
		return [3]int{nx, ny, max(n/(nx*ny), 3)}
	}
	return [3]int{n, 1, 1}
}

func isqrt(n int) int {
	s := int(math.Sqrt(float64(n)))
	for s*s > n {
		s--
	}
	for (s+1)*(s+1) <= n {
		s++
	}
	return s
}

// Floats returns n random elements of T uniform in [lo, hi), as bytes.
func Floats[T Float](r *rand.Rand, n int, lo, hi float64) []byte {
	s := make([]T, max(n, 0))
	for i := range s {
		s[i] = T(lo + (hi-lo)*r.Float64())
	}
	return bytesOf(s)
}

// Ints returns n random elements of T uniform in [lo, hi), as bytes.
func Ints[T Integer](r *rand.Rand, n int, lo, hi int64) []byte {
	s := make([]T, max(n, 0))
	for i := range s {
		s[i] = T(lo + r.Int64N(hi-lo))
	}
	return bytesOf(s)
}

// Zeros returns n zero elements of T, as bytes (a reduction's partials).
func Zeros[T any](n int) []byte {
	return bytesOf(make([]T, max(n, 0)))
}

// bytesOf is device.Bytes, but never nil: a buffer of a Sample is non-nil
// even when empty.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// ReduceShape returns the launch shape of a generated reduction's Sample
// over ext (the extents of dims dimensions): teams that divide the
// outermost extent (trimmed to a multiple of them), so that every device
// splits the points into the same teams, and MaxThreads threads.
func ReduceShape(ext [3]int, dims int) device.Shape {
	outer := max(dims, 1) - 1
	total := 1
	for d := 0; d < max(dims, 1); d++ {
		total *= max(ext[d], 1)
	}
	teams := min(Teams(total), max(ext[outer], 1))
	ext[outer] -= ext[outer] % teams
	return device.Shape{Size: ext, Teams: teams, Threads: MaxThreads}
}

// SampleBytes is the most bytes of buffers a generated Sample makes: a
// kernel whose buffers grow faster than its points (a 3-D grid per point
// of a 1-D kernel, n*n*n elements for n points) gets fewer points instead
// of gigabytes (FitSample).
const SampleBytes = 64 << 20

// FitSample returns the problem size a generated Sample uses for n: n,
// halved until bytes, the bytes of its buffers at a size, is at most
// SampleBytes, and at least 1.
func FitSample(n int, bytes func(n int) int64) int {
	for n > 1 && bytes(n) > SampleBytes {
		n /= 2
	}
	return n
}

// Bytes is the bytes of a buffer of n elements of size bytes, the largest
// int64 where that overflows.
func Bytes(n, size int) int64 {
	hi, lo := bits.Mul64(uint64(max(n, 0)), uint64(size))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// Total is the sum of bytes, the largest int64 where it overflows.
func Total(bytes ...int64) int64 {
	var t int64
	for _, b := range bytes {
		if b > math.MaxInt64-t {
			return math.MaxInt64
		}
		t += b
	}
	return t
}
