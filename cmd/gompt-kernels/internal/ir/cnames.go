package ir

import (
	"fmt"
	"regexp"
	"strings"
)

// cReserved are names a Go identifier cannot keep in the OpenCL C: C and
// OpenCL C keywords and types, and the built-in functions the translation
// calls (a local variable of that name would hide them).
var cReserved = map[string]bool{}

var cVectorType = regexp.MustCompile(`^(bool|char|uchar|short|ushort|int|uint|long|ulong|float|double|half|size_t|ptrdiff_t|intptr_t|uintptr_t|void|image[123]d_t|sampler_t|event_t)(2|3|4|8|16)?$`)

func init() {
	for _, w := range strings.Fields(`
		auto break case char const continue default do double else enum extern float for goto if inline int long
		register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
		_Bool _Complex _Imaginary bool true false half uchar ushort uint ulong size_t ptrdiff_t intptr_t uintptr_t
		__global global __local local __constant constant __private private __kernel kernel __read_only read_only
		__write_only write_only __read_write read_write __attribute__ uniform pipe complex imaginary
		sqrt fabs floor ceil trunc round rint fma copysign fmod remainder signbit isnan isinf isfinite
		exp exp2 expm1 log log2 log10 log1p pow sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh
		cbrt hypot erf erfc min max clamp select barrier mem_fence abs dot cross length distance normalize
		get_global_id get_global_size get_local_id get_local_size get_group_id get_num_groups get_work_dim
		get_global_offset printf main`) {
		cReserved[w] = true
	}
}

// CName returns a C identifier for the Go name, unique among used (which
// it updates): the name itself where C allows it, else with a suffix.
func CName(name string, used map[string]bool) string {
	base := name
	if cReserved[name] || cVectorType.MatchString(name) || strings.HasPrefix(name, "gompt_") || strings.HasPrefix(name, "__") ||
		strings.HasPrefix(name, "as_") || strings.HasPrefix(name, "convert_") || cMacro.MatchString(name) {
		base = name + "_"
	}
	// Go identifiers may hold letters C does not take.
	var sb strings.Builder
	for _, r := range base {
		if r < 128 && (r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			sb.WriteRune(r)
		} else {
			fmt.Fprintf(&sb, "_u%04x", r)
		}
	}
	base = sb.String()
	c := base
	for i := 2; used[c]; i++ {
		c = base + "_" + Itoa(i)
	}
	used[c] = true
	return c
}

// cMacro matches the names of OpenCL C's predefined macros (INT_MAX,
// FLT_EPSILON, M_PI, CLK_LOCAL_MEM_FENCE, INFINITY...), which a variable
// cannot take.
var cMacro = regexp.MustCompile(`^((CHAR|SCHAR|UCHAR|SHRT|USHRT|INT|UINT|LONG|ULONG|FLT|DBL|HALF|M|CLK|CL|FP|FLOAT|ENDIAN|IMAGE|MAXFLOAT)_[A-Z0-9_]*|INFINITY|NAN|MAXFLOAT|HUGE_VAL|HUGE_VALF|NULL|EOF|OPENCL_VERSION|kernel_exec|vec_step)$`)

func Itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for i > 0 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	return string(b)
}
