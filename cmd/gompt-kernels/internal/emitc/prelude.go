package emitc

import (
	"fmt"
	"go/token"
	"sort"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/gompt/gompt/device"
)

// prelude collects the helper functions an OpenCL C file needs, each
// defined once, in a fixed order.
type prelude struct {
	defs map[string]string
}

func newPrelude() *prelude { return &prelude{defs: map[string]string{}} }

// need records helper name with its definition, and returns name.
func (p *prelude) need(name, def string) string {
	p.defs[name] = def
	return name
}

func (p *prelude) String() string {
	names := make([]string, 0, len(p.defs))
	for n := range p.defs {
		names = append(names, n)
	}
	// By name, but the failure of a check first: the checking helpers,
	// whatever their names, call it.
	sort.Slice(names, func(i, j int) bool {
		if fi, fj := names[i] == checkFail, names[j] == checkFail; fi != fj {
			return fi
		}
		return names[i] < names[j]
	})
	var sb strings.Builder
	for _, n := range names {
		sb.WriteString(strings.TrimSpace(p.defs[n]))
		sb.WriteString("\n")
	}
	return sb.String()
}

const inl = "static inline __attribute__((always_inline))"

// div returns the helper computing a / b (or a % b with rem) with Go's
// rules: truncated, MinInt / -1 == MinInt and MinInt % -1 == 0 (a trap in
// C); a zero divisor, which panics in Go, gives 0 on a device.
func (p *prelude) div(t ir.Scalar, rem bool) string {
	op, what := "/", "div"
	if rem {
		op, what = "%", "rem"
	}
	name := "gompt_" + what + "_" + t.C()
	var body string
	switch {
	case !t.Signed():
		body = fmt.Sprintf("return b == 0 ? (%[1]s)0 : (%[1]s)(a %[2]s b);", t.C(), op)
	case rem:
		body = fmt.Sprintf("return b == 0 || b == -1 ? (%[1]s)0 : (%[1]s)(a %% b);", t.C())
	default:
		body = fmt.Sprintf("return b == 0 ? (%[1]s)0 : b == -1 ? (%[1]s)((%[2]s)0 - (%[2]s)a) : (%[1]s)(a / b);", t.C(), t.CUnsigned())
	}
	return p.need(name, fmt.Sprintf("%s %s %s(%s a, %s b) { %s }", inl, t.C(), name, t.C(), t.C(), body))
}

// shift returns the helper computing a << s or a >> s with Go's rules: a
// count at or past the width gives 0, or -1 for a negative signed value
// shifted right.
func (p *prelude) shift(t ir.Scalar, left bool) string {
	w := t.Bits()
	var name, body string
	if left {
		name = "gompt_shl_" + t.C()
		body = fmt.Sprintf("return s >= %d ? (%s)0 : (%s)((%s)a << s);", w, t.C(), t.C(), t.CUnsigned())
	} else {
		name = "gompt_shr_" + t.C()
		if t.Signed() {
			body = fmt.Sprintf("return (%s)(a >> (s >= %d ? %d : s));", t.C(), w, w-1)
		} else {
			body = fmt.Sprintf("return s >= %d ? (%s)0 : (%s)(a >> s);", w, t.C(), t.C())
		}
	}
	return p.need(name, fmt.Sprintf("%s %s %s(%s a, ulong s) { %s }", inl, t.C(), name, t.C(), body))
}

// minmax returns the helper for Go's built-in min or max of two values of
// t. For floats it is what Go computes on amd64 (the reference for NaN
// payloads and signs): min(x, y) is MINSD(MINSD(x, y), x) | MINSD(x, y)
// (MINSD(a, b) = a < b ? a : b), and max(x, y) is -min(-x, -y); so a NaN
// operand gives a NaN, min(-0, +0) is -0 and max(-0, +0) is +0 (OpenCL's
// fmin and fmax return the other operand of a NaN).
func (p *prelude) minmax(t ir.Scalar, isMin bool) string {
	what := "max"
	if isMin {
		what = "min"
	}
	name := "gompt_" + what + "_" + t.C()
	var body string
	switch {
	case t.IsFloat():
		as, ut := "as_float", "as_uint"
		if t.Bits() == 64 {
			as, ut = "as_double", "as_ulong"
		}
		neg := ""
		if !isMin {
			body = "x = -x; y = -y; "
			neg = "-"
		}
		body += fmt.Sprintf("%[1]s m = x < y ? x : y; %[1]s u = m < x ? m : x; return %[4]s%[2]s(%[3]s(u) | %[3]s(m));", t.C(), as, ut, neg)
	case t.Signed() && t.Bits() == 64 && isMin:
		body = "return " + cmp64("y", token.LSS, "x") + " ? y : x;"
	case t.Signed() && t.Bits() == 64:
		body = "return " + cmp64("y", token.GTR, "x") + " ? y : x;"
	case isMin:
		body = "return y < x ? y : x;"
	default:
		body = "return y > x ? y : x;"
	}
	return p.need(name, fmt.Sprintf("%s %s %s(%s x, %s y) { %s }", inl, t.C(), name, t.C(), t.C(), body))
}

// mathMinMax is math.Min or math.Max (Go's amd64 code): an infinity of the
// right sign first, then a NaN (Go's NaN()), then the signed zeros.
func (p *prelude) mathMinMax(isMin bool) string {
	if isMin {
		return p.need("gompt_math_min", inl+` double gompt_math_min(double x, double y) {
  if (x == -INFINITY || y == -INFINITY) return -INFINITY;
  if (isnan(x) || isnan(y)) return as_double(0x7FF8000000000001UL);
  if (x == 0 && x == y) return signbit(x) ? x : y;
  return x < y ? x : y;
}`)
	}
	return p.need("gompt_math_max", inl+` double gompt_math_max(double x, double y) {
  if (x == INFINITY || y == INFINITY) return INFINITY;
  if (isnan(x) || isnan(y)) return as_double(0x7FF8000000000001UL);
  if (x == 0 && x == y) return signbit(x) ? y : x;
  return x > y ? x : y;
}`)
}

func (p *prelude) mathHelper(name string) {
	switch name {
	case "gompt_math_min":
		p.mathMinMax(true)
	case "gompt_math_max":
		p.mathMinMax(false)
	case "gompt_math_mod", "gompt_math_remainder":
		// Go's NaN() (not the driver's NaN, nor a NaN operand's bits) where
		// Go's Mod and Remainder give it
		f := strings.TrimPrefix(name, "gompt_math_")
		if f == "mod" {
			f = "fmod"
		}
		p.need(name, inl+` double `+name+`(double x, double y) {
  if (y == 0 || isinf(x) || isnan(x) || isnan(y)) return as_double(0x7FF8000000000001UL);
  return `+f+`(x, y);
}`)
	case "gompt_math_dim":
		p.need(name, inl+` double gompt_math_dim(double x, double y) { double v = x - y; return v <= 0 ? 0.0 : v; }`)
	case "gompt_math_isinf":
		p.need(name, inl+` bool gompt_math_isinf(double x, long s) { return `+cmp64("s", token.GTR, "0L")+` ? x == INFINITY : `+cmp64("s", token.LSS, "0L")+` ? x == -INFINITY : isinf(x) != 0; }`)
	case "gompt_math_inf":
		p.need(name, inl+` double gompt_math_inf(long s) { return `+cmp64("s", token.GEQ, "0L")+` ? INFINITY : -INFINITY; }`)
	}
}

// cvt returns the helper converting a float of type from to integer type
// t as Go does on amd64: truncated toward zero; a value out of range (or
// NaN), for which Go's result is implementation-specific, gives what amd64
// gives (the indefinite integer, MinInt64 or MinInt32 truncated) rather
// than C's undefined behaviour.
func (p *prelude) cvt(t, from ir.Scalar) string {
	f := from.C()
	sfx := ""
	if f == "float" {
		sfx = "f"
	}
	lim := func(e int) string { return "0x1p" + ir.Itoa(e) + sfx }
	long := fmt.Sprintf("(isnan(x) || x >= %s || x < -%s ? (long)0x8000000000000000UL : (long)x)", lim(63), lim(63))
	name := "gompt_cvt_" + t.C() + "_" + f
	var body string
	switch t.C() {
	case "long":
		body = "return " + long + ";"
	case "ulong":
		body = fmt.Sprintf("if (!(x >= %s)) return (ulong)%s; return x < %s ? (ulong)(long)(x - %s) ^ 0x8000000000000000UL : 0x8000000000000000UL;",
			lim(63), long, lim(64), lim(63))
	case "uint":
		body = "return (uint)" + long + ";"
	default: // int, short, char, ushort, uchar: through int32
		body = fmt.Sprintf("return (%s)(isnan(x) || x >= %s || x < -%s ? (int)0x80000000U : (int)x);", t.C(), lim(31), lim(31))
	}
	return p.need(name, fmt.Sprintf("%s %s %s(%s x) { %s }", inl, t.C(), name, f, body))
}

// lenPos is a Param.Len's value made a length: 0 where it is 0 or
// negative. Its name is not gompt_len_NAME, a buffer's length.
func (p *prelude) lenPos() string {
	return p.need("gompt_lenpos", inl+" long gompt_lenpos(long v) { return "+cmp64("v", token.GTR, "0L")+" ? v : 0; }")
}

// checkFail is the name of the helper that records a failed check.
const checkFail = "gompt_check_fail"

// fail returns the helper that records a failed check of kernel k in its
// fault record (device.FaultRecordSize: check number, index, length, the
// kernel's device.FaultTag), if it is the kernel's first (a 32-bit
// compare-and-swap of word 0, which the plugin zeroed: every OpenCL
// device has it), and sets the work-item's stop flag.
func (p *prelude) fail(k *ir.Kernel) string {
	return p.need(checkFail, fmt.Sprintf(`static void gompt_check_fail(__global long *f, int *stop, long site, long i, long n) {
  *stop = 1;
  if (atomic_cmpxchg((volatile __global int *)f, 0, (int)site) == 0) {
    f[1] = i;
    f[2] = n;
    f[3] = %dL;
  }
}`, device.FaultTag(k.Name)))
}

// loadChecked and storeChecked return the helpers for an element of a
// buffer whose index the generator could not prove in range: an index
// outside fails the check (the load gives 0, the store is dropped: a
// device never touches memory outside its buffer).
func (p *prelude) loadChecked(k *ir.Kernel, t ir.Scalar) string {
	p.fail(k)
	name := "gompt_ldc_" + t.CMem()
	return p.need(name, fmt.Sprintf("%s %s %s(__global const %s *p, long n, long i, __global long *f, int *stop, long site) { if ((ulong)i < (ulong)n) return p[i]; gompt_check_fail(f, stop, site, i, n); return (%s)0; }",
		inl, t.CMem(), name, t.CMem(), t.CMem()))
}

func (p *prelude) storeChecked(k *ir.Kernel, t ir.Scalar) string {
	p.fail(k)
	name := "gompt_stc_" + t.CMem()
	return p.need(name, fmt.Sprintf("%s void %s(__global %s *p, long n, long i, %s v, __global long *f, int *stop, long site) { if ((ulong)i < (ulong)n) p[i] = v; else gompt_check_fail(f, stop, site, i, n); }",
		inl, name, t.CMem(), t.CMem()))
}

// divChecked returns the helper computing a / b (or a % b) as div does,
// with a zero divisor failing the check.
func (p *prelude) divChecked(k *ir.Kernel, t ir.Scalar, rem bool) string {
	p.fail(k)
	what := "divc"
	if rem {
		what = "remc"
	}
	name := "gompt_" + what + "_" + t.C()
	return p.need(name, fmt.Sprintf("%s %s %s(%s a, %s b, __global long *f, int *stop, long site) { if (b == 0) { gompt_check_fail(f, stop, site, 0, 0); return (%s)0; } return %s(a, b); }",
		inl, t.C(), name, t.C(), t.C(), t.C(), p.div(t, rem)))
}
