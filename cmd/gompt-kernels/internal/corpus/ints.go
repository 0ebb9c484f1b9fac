package corpus

// Int64Ops writes, for a[i] and b[i], the results of every int operator:
// out[9*i+k]. Division and remainder by 0, which panic in Go, are left
// out by the kernel itself.
//
//gompt:kernel dims=n len(out)=9*n
func Int64Ops(i int, n int, a, b []int64, out []int64) {
	x, y := a[i], b[i]
	o := 9 * i
	out[o] = x + y
	out[o+1] = x - y
	out[o+2] = x * y
	if y != 0 {
		out[o+3] = x / y
		out[o+4] = x % y
	}
	out[o+5] = -x
	out[o+6] = x &^ y
	out[o+7] = x ^ y | x&y
	out[o+8] = ^x
}

// IntOps is Int64Ops for Go's int, with op-assignments.
//
//gompt:kernel dims=n len(out)=6*n
func IntOps(i int, n int, a, b []int, out []int) {
	x, y := a[i], b[i]
	o := 6 * i
	s := x
	s += y
	out[o] = s
	s -= 2 * y
	out[o+1] = s
	s *= y
	out[o+2] = s
	if y != 0 {
		s /= y
		out[o+3] = s
		s %= y
		out[o+4] = s
	}
	s++
	s--
	s--
	out[o+5] = s
}

// Uint64Ops: unsigned wrap-around, division and remainder.
//
//gompt:kernel dims=n len(out)=6*n
func Uint64Ops(i int, n int, a, b []uint64, out []uint64) {
	x, y := a[i], b[i]
	o := 6 * i
	out[o] = x + y
	out[o+1] = x - y
	out[o+2] = x * y
	if y != 0 {
		out[o+3] = x / y
		out[o+4] = x % y
	}
	out[o+5] = -x
}

// Shifts shifts a[i] by s[i] in every way: left and right, signed and
// unsigned, by counts at and past the width.
//
//gompt:kernel dims=n len(out)=10*n
func Shifts(i int, n int, a []int64, s []uint64, out []int64) {
	x, c := a[i], s[i]
	u := uint64(x)
	o := 10 * i
	out[o] = x << c
	out[o+1] = x >> c
	out[o+2] = int64(u << c)
	out[o+3] = int64(u >> c)
	out[o+4] = int64(int32(x) >> c)
	out[o+5] = int64(uint32(x) >> c)
	out[o+6] = int64(int8(x) << c)
	out[o+7] = int64(int16(x) >> c)
	out[o+8] = x>>63 + x<<63>>1 + int64(uint8(x)>>7)
	k := int(c)
	if k >= 0 {
		out[o+9] = x >> k
	}
	x <<= 1
	x >>= 2
	u >>= c
	out[o] += x + int64(u)
}

// Narrow computes with the narrow integer types, which wrap at their own
// width, and converts between them.
//
//gompt:kernel dims=n len(out)=12*n
func Narrow(i int, n int, a, b []int8, c, d []uint16, out []int64) {
	x, y := a[i], b[i]
	u, v := c[i], d[i]
	o := 12 * i
	out[o] = int64(x + y)
	out[o+1] = int64(x * y)
	out[o+2] = int64(-x)
	if y != 0 {
		out[o+3] = int64(x / y)
		out[o+4] = int64(x % y)
	}
	out[o+5] = int64(u * v)
	out[o+6] = int64(u - v)
	out[o+7] = int64(uint8(u) + uint8(v))
	out[o+8] = int64(int16(u) * int16(v))
	out[o+9] = int64(int32(x)*int32(u)*65537 + int32(v))
	out[o+10] = int64(uint32(x) * uint32(v))
	out[o+11] = int64(int8(int64(u)*3)) + int64(uint16(x))
}

// Conversions converts between integer and float types, in range.
//
//gompt:kernel dims=n len(out)=8*n
func Conversions(i int, n int, a []int64, f []float64, out []float64) {
	x, y := a[i], f[i]
	o := 8 * i
	out[o] = float64(float32(x))
	out[o+1] = float64(x)
	out[o+2] = float64(uint64(x))
	out[o+3] = float64(int64(y))
	out[o+4] = float64(int32(y / 4))
	out[o+5] = float64(float32(y))
	out[o+6] = float64(uint8(y/1e15) + 1)
	out[o+7] = float64(int16(-y/1e15)) + float64(uint32(y/1e10))
}

// ShiftAt shifts elements whose index the prover cannot place (it does
// not follow n-1-i) by 64-bit counts, some past 2^32: the count keeps its
// type (a count of 2^32 narrowed to the element's int32 would shift by 0).
//
//gompt:kernel dims=n
func ShiftAt(i int, n int, k []uint64, x []int32, y []uint16) {
	j := n - 1 - i
	x[j] <<= k[i]
	y[j] >>= k[i]
}
