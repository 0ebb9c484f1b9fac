package corpus

import "math"

// Tricky uses names C reserves, shadowing, parallel post statements,
// op-assignments on elements, narrow loop counters and early returns in
// loops.
//
//gompt:kernel dims=n len(out)=8*n
func Tricky(i int, n int, global float64, kernel []int64, out []int64) {
	o := 8 * i
	long := kernel[i]
	double := float64(long) * global
	sqrt := math.Sqrt(math.Abs(double))
	out[o] = int64(sqrt * 1000)
	{
		n := 3 // shadows the extent
		out[o+1] = int64(n) + long
	}
	var a, b int = 0, 10
	for a, b = 0, 10; a < b; a, b = a+1, b-2 {
		out[o+2] += int64(a*b) ^ long
	}
	out[o+3] = long
	out[o+3] <<= 2
	out[o+3] &^= 5
	out[o+3]++
	out[o+3] %= 1000003
	var cnt uint8
	for k := range uint8(200) {
		cnt += k
	}
	out[o+4] = int64(cnt) + int64(^uint8(long))
	half, flag := long > 0, !(long%2 == 0)
	if half == flag {
		out[o+5] = 1
	}
	out[o+6] = min(long, int64(a), int64(b), 7) + max(long, -3)
	for j := range 5 {
		if int64(j) == long%5 {
			out[o+7] = int64(j) + int64(math.Pi*100*float64(j+1)) + int64(1e18)
			return
		}
	}
	out[o+7] = -long
}
