package cuda

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gompt/gompt/device"
)

// minCompute is the oldest compute capability (major*10+minor) the shipped
// PTX (.target sm_75) can be JIT-compiled for: Turing. Not Volta (sm_70):
// NVIDIA's driver branches after 580 may drop it.
const minCompute = 75

// ptxParamRE matches one parameter of a PTX .entry: ".param .u64 name",
// ".param .f32 name", optionally with ".ptr .global .align N" attributes.
var ptxParamRE = regexp.MustCompile(`^\.param\s+\.([busf])(8|16|32|64)\b`)

// errNoEntry is wrapped by ptxEntryParamSizes when the PTX has no .entry of
// the name asked for.
var errNoEntry = errors.New("no .entry")

// ptxEntryParamSizes returns the byte sizes of the parameters of the .entry
// called entry in the PTX text src, in order. It errors when the entry is
// missing or a parameter is not a scalar of 1 to 8 bytes (aggregates such as
// ".param .align 8 .b8 p[16]" are not something the plugin passes).
func ptxEntryParamSizes(src, entry string) ([]int, error) {
	re := regexp.MustCompile(`\.entry\s+` + regexp.QuoteMeta(entry) + `\s*\(`)
	loc := re.FindStringIndex(src)
	if loc == nil {
		return nil, fmt.Errorf("%w %s in the PTX", errNoEntry, entry)
	}
	rest := src[loc[1]:]
	end := strings.IndexByte(rest, ')')
	if end < 0 {
		return nil, fmt.Errorf(".entry %s: parameter list not closed", entry)
	}
	var sizes []int
	for _, p := range strings.Split(rest[:end], ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		m := ptxParamRE.FindStringSubmatch(p)
		if m == nil {
			return nil, fmt.Errorf(".entry %s: parameter %d %q is not a scalar .param", entry, len(sizes), p)
		}
		var bits int
		fmt.Sscan(m[2], &bits)
		sizes = append(sizes, bits/8)
	}
	return sizes, nil
}

// checkPTXParams reports an error unless the PTX entry takes exactly the
// parameters of k, each of the size the plugin passes (device.ParamKind.Size:
// 8 for buffers and 64-bit scalars, 4 for 32-bit ones). cuLaunchKernel
// copies each parameter's size from its slot as the module declares it, so
// a mismatch would otherwise show only as wrong values on the device.
func checkPTXParams(k *device.Kernel, src, entry string) error {
	sizes, err := ptxEntryParamSizes(src, entry)
	if err != nil {
		return err
	}
	if len(sizes) != len(k.Params) {
		return fmt.Errorf("PTX entry %s takes %d parameters, kernel %s declares %d", entry, len(sizes), k.Name, len(k.Params))
	}
	for i, p := range k.Params {
		if sizes[i] != p.Kind.Size() {
			return fmt.Errorf("PTX entry %s parameter %d is %d bytes, kernel %s declares %s %s (%d bytes)",
				entry, i, sizes[i], k.Name, p.Name, p.Kind, p.Kind.Size())
		}
	}
	return nil
}
