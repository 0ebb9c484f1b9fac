package load

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"go/token"
)

// argDirective records arg(PARAM)=FUNC of k's directive (resolved later by
// checkLaunchers, once every function is known).
func argDirective(g *ir.Program, k *ir.Kernel, key, val string, byName map[string]*ir.Param) bool {
	name := key[4 : len(key)-1]
	p := byName[name]
	if p == nil || p.Slice {
		g.Errs.Add(k.DirPos, "//gompt:kernel: %s=%s: %q is not a scalar parameter of %s", key, val, name, k.Fn.Name)
		return false
	}
	if !token.IsIdentifier(val) {
		g.Errs.Add(k.DirPos, "//gompt:kernel: %s=%s: want the name of a function of this package, as arg(teams)=TilesOf", key, val)
		return false
	}
	lp := k.LaunchPlan()
	if lp.ArgText == nil {
		lp.ArgText = map[*ir.Param]string{}
	}
	lp.ArgText[p] = val
	return true
}
