package corpus

import "math"

// FloatOps: the float32 operators and exact math, which every device
// computes bit for bit as Go does (no contraction of a*b+c).
//
//gompt:kernel dims=n len(out)=12*n
func FloatOps(i int, n int, a, b, c []float32, out []float32) {
	x, y, z := a[i], b[i], c[i]
	o := 12 * i
	out[o] = x*y + z
	out[o+1] = x*y - z*x
	out[o+2] = x / y
	out[o+3] = -x + y
	out[o+4] = float32(math.Sqrt(float64(x)))
	out[o+5] = float32(math.FMA(float64(x), float64(y), float64(z)))
	out[o+6] = x * 0.1
	out[o+7] = float32(math.Floor(float64(x*7))) + float32(math.Ceil(float64(y*7))) + float32(math.Trunc(float64(-z*7)))
	out[o+8] = float32(math.Round(float64(x*2.5))) - float32(math.RoundToEven(float64(y*2.5)))
	out[o+9] = float32(math.Abs(float64(z-x))) + float32(math.Copysign(float64(x), float64(z-y)))
	out[o+10] = float32(math.Mod(float64(x*10), float64(y)))
	s := x
	s += y
	s *= z
	s /= x
	s -= y
	out[o+11] = s
}

// Float64Ops: float64 arithmetic and division, bit for bit.
//
//gompt:kernel dims=n len(out)=4*n
func Float64Ops(i int, n int, a, b []float64, out []float64) {
	x, y := a[i], b[i]
	o := 4 * i
	out[o] = x*y + x
	out[o+1] = x / y
	out[o+2] = math.Sqrt(x*y) - 1/3.0
	out[o+3] = math.Remainder(x*100, y) + math.Dim(x, y) + math.Dim(y, x)
}

// ModRem: math.Mod and math.Remainder at their special cases (a zero
// divisor, an infinite or NaN operand), where Go gives its NaN(), not the
// driver's NaN nor an operand's bits.
//
//gompt:kernel dims=n len(out)=4*n
func ModRem(i int, n int, a, b []float64, out []float64) {
	x, y := a[i], b[i]
	out[4*i] = math.Mod(x, y)
	out[4*i+1] = math.Remainder(x, y)
	out[4*i+2] = math.Mod(y, x)
	out[4*i+3] = math.Remainder(y, x)
}

// MinMax: Go's min and max builtins (a NaN wins; -0 < +0) and math.Min
// and math.Max (an infinity wins over a NaN), over values that include
// NaN, infinities and both zeros.
//
//gompt:kernel dims=n len(out)=8*n
func MinMax(i int, n int, a, b []float64, c, d []float32, out []float64) {
	x, y := a[i], b[i]
	u, v := c[i], d[i]
	o := 8 * i
	out[o] = min(x, y)
	out[o+1] = max(x, y)
	out[o+2] = math.Min(x, y)
	out[o+3] = math.Max(x, y)
	out[o+4] = float64(min(u, v))
	out[o+5] = float64(max(u, v, 0.5))
	out[o+6] = float64(min(int64(x), 3, int64(y)))
	out[o+7] = float64(max(uint8(u), uint8(v)))
}

// Classify: NaN and infinity tests, bits and signs.
//
//gompt:kernel dims=n len(out)=8*n
func Classify(i int, n int, a []float64, out []uint64) {
	x := a[i]
	o := 8 * i
	var flags uint64
	if math.IsNaN(x) {
		flags |= 1
	}
	if math.IsInf(x, 1) {
		flags |= 2
	}
	if math.IsInf(x, -1) {
		flags |= 4
	}
	if math.IsInf(x, 0) {
		flags |= 8
	}
	if math.Signbit(x) {
		flags |= 16
	}
	out[o] = flags
	out[o+1] = math.Float64bits(x)
	out[o+2] = uint64(math.Float32bits(float32(x)))
	out[o+3] = math.Float64bits(math.Inf(1)) ^ math.Float64bits(math.Inf(-1))
	out[o+4] = math.Float64bits(math.NaN())
	out[o+5] = math.Float64bits(math.Float64frombits(math.Float64bits(x) ^ 1<<63))
	out[o+6] = uint64(math.Float32bits(math.Float32frombits(uint32(i) | 0x3f800000)))
	out[o+7] = math.Float64bits(x * 0)
}

// Transcendental: math functions with no correctly rounded counterpart
// on a device: within a few ulps of Go's (the Sample's tolerance).
//
//gompt:kernel dims=n
func Transcendental(i int, n int, a []float64, out []float32) {
	x := a[i]
	v := math.Exp(x) + math.Log(x) + math.Pow(x, 1.5) + math.Sin(x) + math.Cos(x) + math.Tanh(x)
	v += math.Exp2(x) + math.Log2(x) + math.Log10(x) + math.Log1p(x) + math.Expm1(x) + math.Atan2(x, 2)
	v += math.Atan(x) + math.Asin(x/4) + math.Acos(x/4) + math.Sinh(x) + math.Cosh(x) + math.Tan(x)
	v += math.Cbrt(x) + math.Hypot(x, 3) + math.Erf(x) + math.Erfc(x) + math.Asinh(x) + math.Acosh(x+1) + math.Atanh(x/4)
	out[i] = float32(v)
}
