package kernelrt

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
