package load

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"go/types"
	"strconv"
	"strings"
)

// reduceArrayKernel checks a kernel's reduce(buf)= arrays: a 1-D map
// kernel, each a buffer of 32- or 64-bit integers or floats with a
// constant len(buf)=.
func reduceArrayKernel(g *ir.Program, k *ir.Kernel, lenExprs map[*ir.Param]string) bool {
	if k.Reduce != "" || k.Team > 0 || len(k.Dims) != 1 {
		for _, p := range k.Args() {
			if op := k.ReduceArrays[p]; op != "" {
				g.Errs.Add(k.DirPos, "//gompt:kernel: reduce(%s)=%s: an array reduction is a map kernel with one dimension (dims=n), without reduce= or team=", p.Name, op)
				break
			}
		}
		return false
	}
	k.ReduceLen = map[*ir.Param]int{}
	bytes := 0
	for _, p := range k.Args() {
		op := k.ReduceArrays[p]
		if op == "" {
			continue
		}
		switch p.T.Kind() {
		case types.Int32, types.Uint32, types.Int64, types.Uint64, types.Int, types.Uint, types.Float32, types.Float64:
		default:
			g.Errs.Add(k.DirPos, "//gompt:kernel: reduce(%s)=%s: %s is a []%s; an array reduction's elements are int32, uint32, int64, uint64, int, uint, float32 or float64", p.Name, op, p.Name, p.T.GoName())
			return false
		}
		n := 1
		expr, ok := lenExprs[p]
		if ok {
			for _, t := range strings.Split(expr, "*") {
				v, err := strconv.Atoi(t)
				if err != nil || v <= 0 || n*v > ir.MaxReduceLen {
					ok = false
					break
				}
				n *= v
			}
		}
		if !ok {
			g.Errs.Add(k.DirPos, "//gompt:kernel: reduce(%s)=%s needs len(%s)=N, a whole number from 1 to %d (a team's private copy is in local memory)", p.Name, op, p.Name, ir.MaxReduceLen)
			return false
		}
		k.ReduceLen[p] = n
		bytes += n * p.T.Bits() / 8
		// The launcher maps it both ways and the entry merges into it,
		// whatever the body does (an empty one included).
		p.Read, p.Written = true, true
	}
	if bytes > ir.MaxReduceBytes {
		g.Errs.Add(k.DirPos, "//gompt:kernel: the array reductions' private copies take %d bytes of local memory per team, more than %d (48 KiB, the most a CUDA block has without opting in); make len(BUF)= smaller", bytes, ir.MaxReduceBytes)
		return false
	}
	return true
}
