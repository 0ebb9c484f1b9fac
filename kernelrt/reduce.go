package kernelrt

import (
	"sync/atomic"
	"unsafe"
)

// Number is an element type a generated reduction combines.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Integer is an integer element type.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Float is a floating-point element type.
type Float interface{ ~float32 | ~float64 }

// SumInts returns the sum of the partial sums of an integer reduction,
// wrapping as Go's integer addition does (so the result does not depend on
// how the points were split into teams).
func SumInts[T Integer](partial []T) T {
	var s T
	for _, v := range partial {
		s += v
	}
	return s
}

// ProdInts returns the product of the partial products of an integer
// reduction, wrapping as Go's multiplication does.
func ProdInts[T Integer](partial []T) T {
	s := T(1)
	for _, v := range partial {
		s *= v
	}
	return s
}

// SumFloats returns the sum of the partial sums of a float reduction,
// added in order from 0 in float64 and then converted to T.
func SumFloats[T Float](partial []T) T {
	var s float64
	for _, v := range partial {
		s += float64(v)
	}
	return T(s)
}

// ProdFloats returns the product of the partial products of a float
// reduction, multiplied in order from 1 in float64 and then converted to T.
func ProdFloats[T Float](partial []T) T {
	s := 1.0
	for _, v := range partial {
		s *= float64(v)
	}
	return T(s)
}

// Min returns the least of the partial minima, from first, with Go's min
// (a NaN wins; -0 is less than +0).
func Min[T Number](first T, partial []T) T {
	s := first
	for _, v := range partial {
		s = min(s, v)
	}
	return s
}

// Max returns the greatest of the partial maxima, from first, with Go's max.
func Max[T Number](first T, partial []T) T {
	s := first
	for _, v := range partial {
		s = max(s, v)
	}
	return s
}

// MergeSum adds a team's private copy priv of an array reduction into buf,
// element by element, each add atomic (the teams merge at the same time);
// elements with the bits of the identity id are skipped (a float sum's
// identity is -0). T is 32 or 64 bits wide.
func MergeSum[T Number](buf, priv []T, id T) {
	one := T(1)
	if one/2 != 0 { // a float
		merge(buf, priv, id, func(a, b T) T { return a + b })
		return
	}
	// An integer: the device's add (two's complement: the unsigned add
	// of the bits), which contended teams pay less for than a
	// compare-and-swap loop (a histogram of 2^24 values on host:0: 5.0
	// ms, 5.6-6.0 ms with the loop).
	for i, v := range priv[:len(buf)] {
		if sameBits(v, id) {
			continue
		}
		switch unsafe.Sizeof(v) {
		case 4:
			atomic.AddUint32((*uint32)(unsafe.Pointer(&buf[i])), *(*uint32)(unsafe.Pointer(&v)))
		case 8:
			atomic.AddUint64((*uint64)(unsafe.Pointer(&buf[i])), *(*uint64)(unsafe.Pointer(&v)))
		default:
			update(&buf[i], v, func(a, b T) T { return a + b })
		}
	}
}

// MergeProd multiplies a team's private copy into buf, as MergeSum adds.
func MergeProd[T Number](buf, priv []T, id T) {
	merge(buf, priv, id, func(a, b T) T { return a * b })
}

// MergeMin lowers buf's elements to a team's private copy's, with Go's
// min (a NaN wins; -0 is less than +0), as MergeSum adds.
func MergeMin[T Number](buf, priv []T, id T) {
	merge(buf, priv, id, func(a, b T) T { return min(a, b) })
}

// MergeMax raises buf's elements to a team's private copy's, with Go's
// max, as MergeSum adds.
func MergeMax[T Number](buf, priv []T, id T) {
	merge(buf, priv, id, func(a, b T) T { return max(a, b) })
}

func merge[T Number](buf, priv []T, id T, combine func(a, b T) T) {
	for i, v := range priv[:len(buf)] {
		if !sameBits(v, id) {
			update(&buf[i], v, combine)
		}
	}
}

// sameBits reports whether a and b have the same bits: a float sum's
// identity is -0, and a copy holding +0 must still be merged (-0 + +0 is
// +0).
func sameBits[T Number](a, b T) bool {
	switch unsafe.Sizeof(a) {
	case 4:
		return *(*uint32)(unsafe.Pointer(&a)) == *(*uint32)(unsafe.Pointer(&b))
	case 8:
		return *(*uint64)(unsafe.Pointer(&a)) == *(*uint64)(unsafe.Pointer(&b))
	}
	return a == b
}

// update sets *p to combine(*p, v) with a compare-and-swap loop on its
// bits (sync/atomic has no float operations, and no min or max).
func update[T Number](p *T, v T, combine func(a, b T) T) {
	switch unsafe.Sizeof(v) {
	case 4:
		casLoop((*uint32)(unsafe.Pointer(p)), v, combine, atomic.LoadUint32, atomic.CompareAndSwapUint32)
	case 8:
		casLoop((*uint64)(unsafe.Pointer(p)), v, combine, atomic.LoadUint64, atomic.CompareAndSwapUint64)
	default:
		panic("kernelrt: an array reduction's elements are 32 or 64 bits wide, not " + itoa(int(unsafe.Sizeof(v))*8))
	}
}

// casLoop is update on the bits u of a T as wide as U.
func casLoop[U uint32 | uint64, T Number](u *U, v T, combine func(a, b T) T, load func(*U) U, cas func(*U, U, U) bool) {
	for {
		o := load(u)
		n := combine(*(*T)(unsafe.Pointer(&o)), v)
		nb := *(*U)(unsafe.Pointer(&n))
		if nb == o || cas(u, o, nb) {
			return
		}
	}
}
