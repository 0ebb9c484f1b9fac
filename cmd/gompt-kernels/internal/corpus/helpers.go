package corpus

// clampf limits v to [lo, hi].
//
//gompt:func
func clampf(v, lo, hi float32) float32 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// poly3 evaluates c0 + c1*x + c2*x^2 + c3*x^3 by Horner's rule, calling
// another helper.
//
//gompt:func
func poly3(x float32, c []float32) float32 {
	return clampf(((c[3]*x+c[2])*x+c[1])*x+c[0], -100, 100)
}

// bump adds v to h[j] when j is in range: a helper that writes a slice.
//
//gompt:func
func bump(h []int32, j int, v int32) {
	if j >= 0 && j < len(h) {
		h[j] += v
	}
}

// Helpers calls helpers with scalars and slices, and takes scalar
// parameters of every kind (passed as int32, uint32, int64, float32 or
// float64 and converted in the kernel).
//
//gompt:kernel dims=n len(c)=4 len(hist)=n
func Helpers(i int, n int, s8 int8, u8 uint8, s16 int16, u16 uint16, s32 int32, u32 uint32, u64 uint64, u uint, b bool, f64 float64,
	x, c []float32, hist []int32, out []float32) {
	y := poly3(x[i], c)
	if b {
		y = -y
	}
	bump(hist, i, int32(s8)+int32(u8)+int32(s16)+int32(u16)+s32)
	bump(hist, i, int32(u32%7)+int32(u64%5)+int32(u%3))
	bump(hist, i+n, 1000) // out of range: not done
	out[i] = y + float32(f64)
}

// take doubles h[j] and returns what it was: a helper with a result that
// writes the slice it is given.
//
//gompt:func
func take(h []int32, j int) int32 {
	v := h[j]
	h[j] = 2 * v
	return v
}

// CallFirst reads an element in the statement of a call that writes it:
// Go makes the call before it reads the element (gc hoists the call out of
// the expression), which the OpenCL C, whose operands are unsequenced,
// must do too.
//
//gompt:kernel dims=n len(h)=n len(out)=n
func CallFirst(i int, n int, h []int32, out []int32) {
	h[i] += take(h, i)
	x := h[i] - take(h, i)
	out[i] = x + h[i]*take(h, i)
}
