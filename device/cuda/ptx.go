package cuda

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gompt/gompt/device"
)

// minCompute is the oldest compute capability (major*10+minor) the shipped
// PTX (.target sm_75) can be JIT-compiled for: Turing. Not Volta (sm_70):
// NVIDIA's driver branches after 580 may drop it.
const minCompute = 75

// errNoEntry is wrapped by ptxEntryParamSizes when the PTX has no .entry of
// the name asked for.
var errNoEntry = errors.New("no .entry")

// ptxEntryParamSizes returns the byte sizes of the parameters of the .entry
// called entry in the PTX text src, in order. It errors when the entry is
// missing or a parameter is not a scalar of 1 to 8 bytes (aggregates such as
// ".param .align 8 .b8 p[16]" are not something the plugin passes).
func ptxEntryParamSizes(src, entry string) ([]int, error) {
	ps, err := ptxEntryParams(src, entry)
	var sizes []int
	for _, p := range ps {
		sizes = append(sizes, p.size)
	}
	return sizes, err
}

// ptxParam is one parameter of a PTX .entry: its size in bytes, whether
// its type is a float (.f32, .f64), the state space of a .ptr
// attribute ("global", "shared"...; "" when it has none: clang's PTX for
// OpenCL C and CUDA C declares pointers as plain .u64), and its name.
type ptxParam struct {
	size  int
	float bool
	space string
	name  string
}

// sourceName reports whether a PTX parameter's name is the source's, and
// so is compared with the declared parameter's (checkPTXParams). clang
// (from OpenCL C, as kernels/gen.sh and gompt-kernels make PTX, or from
// CUDA C) and nvcc name every parameter ENTRY_param_N, ENTRY being the
// entry's (mangled, for a C++ entry) name and N its position: those carry
// no source name and are not compared, nor is any name ending in _param_
// and digits. Any other name is present, as PTX written by hand has them.
func (p ptxParam) sourceName() bool {
	i := strings.LastIndex(p.name, "_param_")
	if i < 0 {
		return p.name != ""
	}
	digits := p.name[i+len("_param_"):]
	return digits == "" || strings.TrimLeft(digits, "0123456789") != ""
}

// ptxEntryParams returns the parameters of the .entry called entry in the
// PTX text src, in order; see ptxEntryParamSizes.
func ptxEntryParams(src, entry string) ([]ptxParam, error) {
	var list string
	found := false
	for _, e := range ptxEntries(src) {
		if e.name == entry && e.params >= 0 {
			list, found = src[e.params:], true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("%w %s in the PTX", errNoEntry, entry)
	}
	end := strings.IndexByte(list, ')')
	if end < 0 {
		return nil, fmt.Errorf(".entry %s: parameter list not closed", entry)
	}
	var params []ptxParam
	for _, p := range strings.Split(list[:end], ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		size, ok := scalarParamSize(p)
		if !ok {
			return nil, fmt.Errorf(".entry %s: parameter %d %q is not a scalar .param", entry, len(params), p)
		}
		pp := ptxParam{size: size, float: strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(p, ".param")), ".f")}
		if _, attrs, ok := strings.Cut(p, ".ptr"); ok {
			if f := strings.Fields(attrs); len(f) > 0 && f[0] != "" && f[0][0] == '.' && f[0] != ".align" {
				pp.space = f[0][1:]
			}
		}
		if f := strings.Fields(p); len(f) > 1 {
			pp.name = f[len(f)-1]
		}
		params = append(params, pp)
	}
	return params, nil
}

// ptxEntry is one ".entry NAME" of a PTX text: its name and the offset just
// past the "(" that opens its parameter list (-1 when none follows).
type ptxEntry struct {
	name   string
	params int
}

// ptxEntries returns the entries of the PTX text src in order: each
// ".entry" followed by white space and an identifier ([A-Za-z_$][\w$]*).
func ptxEntries(src string) []ptxEntry {
	var out []ptxEntry
	for i := 0; ; {
		j := strings.Index(src[i:], ".entry")
		if j < 0 {
			return out
		}
		i += j + len(".entry")
		k := skipSpace(src, i)
		if k == i || k == len(src) || !identStart(src[k]) {
			continue
		}
		n := k + 1
		for n < len(src) && identPart(src[n]) {
			n++
		}
		e := ptxEntry{name: src[k:n], params: -1}
		if p := skipSpace(src, n); p < len(src) && src[p] == '(' {
			e.params = p + 1
		}
		out = append(out, e)
		i = n
	}
}

// scalarParamSize returns the byte size of a PTX parameter declared as
// ".param .TN name" with T one of b, u, s, f and N one of 8, 16, 32, 64
// (attributes such as ".ptr .global .align N" may follow), and false for
// anything else.
func scalarParamSize(p string) (int, bool) {
	rest, ok := strings.CutPrefix(p, ".param")
	if !ok {
		return 0, false
	}
	i := skipSpace(rest, 0)
	if i == 0 || i+2 > len(rest) || rest[i] != '.' || !strings.ContainsRune("busf", rune(rest[i+1])) {
		return 0, false
	}
	rest = rest[i+2:]
	for _, bits := range []string{"8", "16", "32", "64"} {
		if after, ok := strings.CutPrefix(rest, bits); ok && (after == "" || !identPart(after[0])) {
			n, _ := strconv.Atoi(bits)
			return n / 8, true
		}
	}
	return 0, false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v') {
		i++
	}
	return i
}

func identStart(c byte) bool {
	return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func identPart(c byte) bool { return identStart(c) || '0' <= c && c <= '9' }

// checkPTXParams reports an error unless the PTX entry takes exactly the
// parameters of k, each of the size the plugin passes (device.ParamKind.Size:
// 8 for buffers and 64-bit scalars, 4 for 32-bit ones), a float type
// (.f32, .f64) exactly where k declares a float scalar, and, where the PTX
// says a parameter is a pointer (.ptr), a buffer of global memory.
// cuLaunchKernel copies each parameter's size from its slot as the module
// declares it, so a mismatch would otherwise show only as wrong values on
// the device. PTX from clang declares pointers as plain .u64, so a buffer
// and an int64 in each other's place are not caught here; the OpenCL
// plugin catches them in the OpenCL C the PTX is made from.
//
// Where a parameter's PTX name is the source's (ptxParam.sourceName: not
// one of the ENTRY_param_N that clang and nvcc give), each of k.Params must
// also be named so: two parameters of one type in the wrong order agree in
// everything else. The fault record of a checked kernel is the plugin's,
// not a declared parameter: its name is not compared.
func checkPTXParams(k *device.Kernel, src, entry string) error {
	params, err := ptxEntryParams(src, entry)
	if err != nil {
		return err
	}
	declared := k.DeviceParams()
	if len(params) != len(declared) {
		what := ""
		if k.Checked() {
			what = " and its fault record, as its Faults ask"
		}
		return fmt.Errorf("PTX entry %s takes %d parameters, kernel %s declares %d%s", entry, len(params), k.Name, len(k.Params), what)
	}
	for i, p := range declared {
		pp := params[i]
		isFloat := p.Kind == device.ParamFloat32 || p.Kind == device.ParamFloat64
		switch {
		case pp.size != p.Kind.Size():
			return fmt.Errorf("PTX entry %s parameter %d is %d bytes, kernel %s declares %s %s (%d bytes)",
				entry, i, pp.size, k.Name, p.Name, p.Kind, p.Kind.Size())
		case pp.float != isFloat:
			what := map[bool]string{true: "a float", false: "an integer or pointer"}
			return fmt.Errorf("PTX entry %s parameter %d is %s, kernel %s declares %s %s: the parameters are in another order, or the declaration is wrong",
				entry, i, what[pp.float], k.Name, p.Name, p.Kind)
		case pp.space != "" && p.Kind != device.ParamBuffer:
			return fmt.Errorf("PTX entry %s parameter %d is a pointer (.ptr .%s), kernel %s declares %s %s", entry, i, pp.space, k.Name, p.Name, p.Kind)
		case pp.space != "" && pp.space != "global":
			return fmt.Errorf("PTX entry %s parameter %d is a pointer to .%s memory, kernel %s declares %s a buffer, which is global memory", entry, i, pp.space, k.Name, p.Name)
		case i < len(k.Params) && pp.sourceName() && pp.name != p.Name:
			fix := "Params must name the parameters as the PTX does"
			for _, q := range params {
				if q.name == p.Name {
					fix = "Params must list the parameters in the PTX's order"
					break
				}
			}
			return fmt.Errorf("PTX entry %s's parameter %d is named %q but the Kernel's parameter %d is %q; %s", entry, i, pp.name, i, p.Name, fix)
		}
	}
	return nil
}
