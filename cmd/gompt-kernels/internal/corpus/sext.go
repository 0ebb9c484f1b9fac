package corpus

import "math"

// bit is 1<<k if c holds, else 0.
//
//gompt:func
func bit(c bool, k int) int64 {
	if c {
		return 1 << k
	}
	return 0
}

// order orders x against the constants at the edges of the int32 range
// and near 0, each both ways round: one bit per comparison.
//
//gompt:func
func order(x int64) int64 {
	return bit(x < 0, 0) | bit(x <= 0, 1) | bit(x > 0, 2) | bit(x >= 0, 3) |
		bit(0 < x, 4) | bit(0 <= x, 5) | bit(0 > x, 6) | bit(0 >= x, 7) |
		bit(x < 5, 8) | bit(x <= 5, 9) | bit(x > 5, 10) | bit(x >= 5, 11) |
		bit(5 < x, 12) | bit(5 <= x, 13) | bit(5 > x, 14) | bit(5 >= x, 15) |
		bit(x < -5, 16) | bit(x <= -5, 17) | bit(x > -5, 18) | bit(x >= -5, 19) |
		bit(-5 < x, 20) | bit(-5 <= x, 21) | bit(-5 > x, 22) | bit(-5 >= x, 23) |
		bit(x < math.MaxInt32, 24) | bit(x <= math.MaxInt32, 25) | bit(x > math.MaxInt32, 26) | bit(x >= math.MaxInt32, 27) |
		bit(math.MaxInt32 < x, 28) | bit(math.MaxInt32 <= x, 29) | bit(math.MaxInt32 > x, 30) | bit(math.MaxInt32 >= x, 31) |
		bit(x < math.MinInt32, 32) | bit(x <= math.MinInt32, 33) | bit(x > math.MinInt32, 34) | bit(x >= math.MinInt32, 35) |
		bit(math.MinInt32 < x, 36) | bit(math.MinInt32 <= x, 37) | bit(math.MinInt32 > x, 38) | bit(math.MinInt32 >= x, 39) |
		bit(x < 1<<31, 40) | bit(x <= 1<<31, 41) | bit(x > 1<<31, 42) | bit(x >= 1<<31, 43) |
		bit(x < math.MinInt32-1, 44) | bit(x <= math.MinInt32-1, 45) | bit(x > math.MinInt32-1, 46) | bit(x >= math.MinInt32-1, 47) |
		bit(x == 5, 48) | bit(x != -5, 49) | bit(x == math.MinInt32, 50) | bit(x != math.MaxInt32, 51)
}

// less is x < y: a helper that its callers give a constant.
//
//gompt:func
func less(x, y int64) bool { return x < y }

// SignExtend orders values sign-extended to 64 bits against constants:
// int32, int16 and int8 elements, an int32 parameter, int32 arithmetic
// and a truncation to int32; in a helper given a constant, in min and
// max, in loops that end on a sign-extended bound (which a compiler may
// unroll, its counter then a constant), and in the lengths of buffers
// whose len= names an int32 and an int16 parameter (p, k). Mesa's OpenCL
// compiler gets such comparisons wrong (opencl.SextCompareDefine): with
// x an int32, int64(x) < 5 false and int64(x) > 5 true for every x.
// out[16*i:16*i+16] are order's bits for each source, then the rest.
//
//gompt:kernel dims=n len(out)=16*n len(w)=p len(v)=p*k
func SignExtend(i int, n int, m, p int32, k int16, a []int32, b []int16, c []int8, w, v []int64, out []int64) {
	x := int64(a[i])
	o := 16 * i
	out[o] = order(x)
	out[o+1] = order(int64(b[i]))
	out[o+2] = order(int64(c[i]))
	out[o+3] = order(int64(m))
	out[o+4] = order(int64(a[i] + 1))
	out[o+5] = order(int64(a[i] >> 1))
	out[o+6] = order(int64(int32(x * 3)))
	out[o+7] = bit(less(x, 0), 0) | bit(less(0, x), 1) | bit(less(x, -5), 2) | bit(less(5, x), 3) |
		bit(less(int64(c[i]), 0), 4) | bit(less(int64(m), 1), 5)
	out[o+8] = min(x, 5)
	out[o+9] = max(x, -5)
	out[o+10] = min(x, 5, int64(m)) + max(int64(b[i]), 0, int64(m))
	// Loops of at most 20 turns, on a sign-extended bound.
	var up, down, over int64
	for j := int64(0); j < x; j++ {
		up++
		if up == 20 {
			break
		}
	}
	for j := int64(0); j > x; j-- {
		down++
		if down == 20 {
			break
		}
	}
	for range x {
		over++
		if over == 20 {
			break
		}
	}
	out[o+11] = up
	out[o+12] = down
	out[o+13] = over
	out[o+14] = int64(len(w))
	out[o+15] = int64(len(v))
}
