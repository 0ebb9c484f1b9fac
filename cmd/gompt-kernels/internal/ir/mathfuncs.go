package ir

import (
	"sort"
)

// mathFunc is a function of package math that kernels may call: its
// arguments (f: float64, i: int, in the order of Go's signature), its
// result, the OpenCL C that computes it (%[1]s... are the arguments), and
// whether that is exact: correctly rounded, or with no rounding at all, so
// that every device gives Go's bits. The others (exp, log, sin...) are
// within a few units in the last place of Go's on every device, not equal
// to them.
type mathFunc struct {
	Args   string // "f", "ff", "fi", "fff", "i", "" ...
	Result string // "f", "b" (bool), "u32", "u64", "f32"
	C      string
	Exact  bool
}

var MathFuncs = map[string]mathFunc{
	// Exact.
	"Sqrt":            {"f", "f", "sqrt(%[1]s)", true},
	"Abs":             {"f", "f", "fabs(%[1]s)", true},
	"Floor":           {"f", "f", "floor(%[1]s)", true},
	"Ceil":            {"f", "f", "ceil(%[1]s)", true},
	"Trunc":           {"f", "f", "trunc(%[1]s)", true},
	"Round":           {"f", "f", "round(%[1]s)", true},
	"RoundToEven":     {"f", "f", "rint(%[1]s)", true},
	"FMA":             {"fff", "f", "fma(%[1]s, %[2]s, %[3]s)", true},
	"Copysign":        {"ff", "f", "copysign(%[1]s, %[2]s)", true},
	"Mod":             {"ff", "f", "gompt_math_mod(%[1]s, %[2]s)", true},
	"Remainder":       {"ff", "f", "gompt_math_remainder(%[1]s, %[2]s)", true},
	"Min":             {"ff", "f", "gompt_math_min(%[1]s, %[2]s)", true},
	"Max":             {"ff", "f", "gompt_math_max(%[1]s, %[2]s)", true},
	"Dim":             {"ff", "f", "gompt_math_dim(%[1]s, %[2]s)", true},
	"Signbit":         {"f", "b", "(signbit(%[1]s) != 0)", true},
	"IsNaN":           {"f", "b", "(isnan(%[1]s) != 0)", true},
	"IsInf":           {"fi", "b", "gompt_math_isinf(%[1]s, %[2]s)", true},
	"Inf":             {"i", "f", "gompt_math_inf(%[1]s)", true},
	"NaN":             {"", "f", "as_double(0x7FF8000000000001UL)", true},
	"Float32bits":     {"f32", "u32", "as_uint(%[1]s)", true},
	"Float32frombits": {"u32", "f32", "as_float(%[1]s)", true},
	"Float64bits":     {"f", "u64", "as_ulong(%[1]s)", true},
	"Float64frombits": {"u64", "f", "as_double(%[1]s)", true},
	// Within a few ulps.
	"Exp":   {"f", "f", "exp(%[1]s)", false},
	"Exp2":  {"f", "f", "exp2(%[1]s)", false},
	"Expm1": {"f", "f", "expm1(%[1]s)", false},
	"Log":   {"f", "f", "log(%[1]s)", false},
	"Log2":  {"f", "f", "log2(%[1]s)", false},
	"Log10": {"f", "f", "log10(%[1]s)", false},
	"Log1p": {"f", "f", "log1p(%[1]s)", false},
	"Pow":   {"ff", "f", "pow(%[1]s, %[2]s)", false},
	"Sin":   {"f", "f", "sin(%[1]s)", false},
	"Cos":   {"f", "f", "cos(%[1]s)", false},
	"Tan":   {"f", "f", "tan(%[1]s)", false},
	"Asin":  {"f", "f", "asin(%[1]s)", false},
	"Acos":  {"f", "f", "acos(%[1]s)", false},
	"Atan":  {"f", "f", "atan(%[1]s)", false},
	"Atan2": {"ff", "f", "atan2(%[1]s, %[2]s)", false},
	"Sinh":  {"f", "f", "sinh(%[1]s)", false},
	"Cosh":  {"f", "f", "cosh(%[1]s)", false},
	"Tanh":  {"f", "f", "tanh(%[1]s)", false},
	"Asinh": {"f", "f", "asinh(%[1]s)", false},
	"Acosh": {"f", "f", "acosh(%[1]s)", false},
	"Atanh": {"f", "f", "atanh(%[1]s)", false},
	"Cbrt":  {"f", "f", "cbrt(%[1]s)", false},
	"Hypot": {"ff", "f", "hypot(%[1]s, %[2]s)", false},
	"Erf":   {"f", "f", "erf(%[1]s)", false},
	"Erfc":  {"f", "f", "erfc(%[1]s)", false},
}

// MathNames lists the supported math functions, exact ones first, for
// messages and the usage text.
func MathNames() (exact, approx []string) {
	for name, f := range MathFuncs {
		if f.Exact {
			exact = append(exact, name)
		} else {
			approx = append(approx, name)
		}
	}
	sort.Strings(exact)
	sort.Strings(approx)
	return exact, approx
}
