package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// Launchers that choose and compute (the plan; launchers.go emits it).
//
// arg(PARAM)=FUNC in a //gompt:kernel directive makes the launchers
// compute scalar parameter PARAM as FUNC(...) of the kernel's other
// parameters (FUNC's parameters are named as the kernel's), so that the
// caller does not pass it: a team kernel's number of teams, say.
//
// //gompt:variant of=BASE device=SEL[,SEL...], beside the //gompt:kernel
// directive of kernel V, makes V a variant of kernel BASE, as OpenMP's
//
//	#pragma omp declare variant(V) match(device={arch(SEL,...)})
//
// on BASE does: BASE's launchers run V on a device that matches one of
// the selectors, BASE elsewhere. The launchers of both take the same
// parameters (V's less those its arg(PARAM)= computes), checked here.

// launchPlan is what a kernel's launchers do beyond mapping and launching.
type launchPlan struct {
	argText map[*param]string      // arg(PARAM)=FUNC as written
	derived map[*param]*derivation // resolved by checkLaunchers

	variantDir *ast.Comment // its //gompt:variant, nil for none
	of         string       // of=: the base kernel's Go function name
	selectors  []string     // device=
	base       *kernel      // the kernel it is a variant of
	variants   []*kernel    // the kernels that are variants of it, in source order
}

// derivation is a parameter the launchers compute: fn(args...).
type derivation struct {
	fn   *types.Func
	args []*param
}

// selectorNames are the values of device=: backends (device.Info.Backend),
// device types (device.Info.Type), and the initial device, as
// target.MatchDevice reads them.
var selectorNames = []string{"host", "opencl", "cuda", "gpu", "cpu", "accelerator", "initial"}

func (k *kernel) launchPlan() *launchPlan {
	if k.launch == nil {
		k.launch = &launchPlan{}
	}
	return k.launch
}

// derivedParam returns how the launchers compute p, nil when the caller
// passes it.
func (k *kernel) derivedParam(p *param) *derivation {
	if k.launch == nil {
		return nil
	}
	return k.launch.derived[p]
}

// launchParams are the launchers' parameters: the kernel's args less
// those the launchers compute.
func (k *kernel) launchParams() []*param {
	var ps []*param
	for _, p := range k.args() {
		if k.derivedParam(p) == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// variants are the kernels whose //gompt:variant names k, in source order.
func (k *kernel) variants() []*kernel {
	if k.launch == nil {
		return nil
	}
	return k.launch.variants
}

// argDirective records arg(PARAM)=FUNC of k's directive (resolved later by
// checkLaunchers, once every function is known).
func (g *gen) argDirective(k *kernel, key, val string, byName map[string]*param) bool {
	name := key[4 : len(key)-1]
	p := byName[name]
	if p == nil || p.slice {
		g.errs.add(k.dirPos, "//gompt:kernel: %s=%s: %q is not a scalar parameter of %s", key, val, name, k.fn.name)
		return false
	}
	if !token.IsIdentifier(val) {
		g.errs.add(k.dirPos, "//gompt:kernel: %s=%s: want the name of a function of this package, as arg(teams)=TilesOf", key, val)
		return false
	}
	lp := k.launchPlan()
	if lp.argText == nil {
		lp.argText = map[*param]string{}
	}
	lp.argText[p] = val
	return true
}

// checkLaunchers resolves every kernel's arg(PARAM)= functions and
// //gompt:variant directives, once all kernels are known.
func (g *gen) checkLaunchers(o options) {
	byFunc := map[string]*kernel{}
	for _, k := range g.kernels {
		byFunc[k.fn.name] = k
	}
	for _, k := range g.kernels {
		if k.launch == nil {
			continue
		}
		for _, p := range k.params {
			if name, ok := k.launch.argText[p]; ok {
				g.resolveArg(k, p, name, o)
			}
		}
	}
	for _, k := range g.kernels {
		if k.launch != nil && k.launch.variantDir != nil {
			g.parseVariant(k, byFunc)
		}
	}
	for _, k := range g.kernels {
		if k.launch != nil && k.launch.base != nil {
			g.checkVariant(k)
		}
	}
}

// resolveArg checks arg(p)=name: name is a function of the package (not
// a kernel or helper) whose parameters are named as, and have the types
// of, parameters of k the caller passes, and whose one result has p's
// type.
func (g *gen) resolveArg(k *kernel, p *param, name string, o options) {
	bad := func(format string, args ...any) {
		g.errs.add(k.dirPos, "//gompt:kernel: arg(%s)=%s: "+format, append([]any{p.name, name}, args...)...)
	}
	if isIndex(k, p) {
		bad("%s is one of the point's indices; arg() computes a parameter the launcher passes", p.name)
		return
	}
	f, _ := g.p.types.Scope().Lookup(name).(*types.Func)
	if f == nil {
		bad("%s is not a function of package %s", name, g.p.name)
		return
	}
	for _, other := range g.kernels {
		if other.fn.obj == f {
			bad("%s is a kernel; name an ordinary Go function, which the launcher calls on the host", name)
			return
		}
	}
	if _, ok := g.funcs[f]; ok {
		bad("%s is a //gompt:func helper; name an ordinary Go function, which the launcher calls on the host", name)
		return
	}
	sig := f.Type().(*types.Signature)
	if sig.Recv() != nil || sig.TypeParams() != nil || sig.Variadic() {
		bad("%s must be a plain function (no receiver, type parameters or variadic parameter)", name)
		return
	}
	if sig.Results().Len() != 1 || !types.Identical(sig.Results().At(0).Type(), p.obj.Type()) {
		got := fmt.Sprintf("%d results", sig.Results().Len())
		if sig.Results().Len() == 1 {
			got = g.typeString(sig.Results().At(0).Type())
		}
		bad("%s must return one %s (the type of %s), not %s", name, goType(p), p.name, got)
		return
	}
	if g.launchDir != "" && !f.Exported() {
		bad("-launchers puts the launchers in another package, which calls %s: export it", name)
		return
	}
	byName := map[string]*param{}
	for _, q := range k.args() {
		byName[q.name] = q
	}
	d := &derivation{fn: f}
	for i := 0; i < sig.Params().Len(); i++ {
		v := sig.Params().At(i)
		q := byName[v.Name()]
		switch {
		case q == nil:
			bad("%s's parameter %s names no parameter of %s; its parameters are named as the kernel's, which the launcher passes", name, v.Name(), k.fn.name)
			return
		case q == p || k.launch.argText[q] != "":
			bad("%s's parameter %s is computed by arg() too; it may take only parameters the caller passes", name, v.Name())
			return
		case !types.Identical(v.Type(), q.obj.Type()):
			bad("%s's parameter %s is %s, %s's is %s", name, v.Name(), g.typeString(v.Type()), k.fn.name, goType(q))
			return
		}
		d.args = append(d.args, q)
	}
	if k.launch.derived == nil {
		k.launch.derived = map[*param]*derivation{}
	}
	k.launch.derived[p] = d
}

// parseVariant parses k's //gompt:variant of=BASE device=SEL[,SEL...].
func (g *gen) parseVariant(k *kernel, byFunc map[string]*kernel) {
	lp := k.launch
	dir := lp.variantDir
	fail := func(format string, args ...any) {
		g.errs.add(dir.Pos(), "//gompt:variant: "+format, args...)
	}
	text := strings.TrimPrefix(dir.Text, variantDirective)
	if i := strings.Index(text, " //"); i >= 0 {
		text = text[:i]
	}
	seen := map[string]bool{}
	for _, field := range strings.Fields(text) {
		key, val, ok := strings.Cut(field, "=")
		if !ok || val == "" {
			fail("%q is not KEY=VALUE; the keys are of and device", field)
			return
		}
		if seen[key] {
			fail("%s given twice", key)
			return
		}
		seen[key] = true
		switch key {
		case "of":
			lp.of = val
		case "device":
			for _, s := range strings.Split(val, ",") {
				known := false
				for _, n := range selectorNames {
					known = known || s == n
				}
				if !known {
					fail("device=%s: %q is not a device selector; they are %s (backends, device types, the initial device)", val, s, strings.Join(selectorNames, ", "))
					return
				}
				lp.selectors = append(lp.selectors, s)
			}
		default:
			fail("unknown key %q; the keys are of (the base kernel's function) and device (where this variant runs)", key)
			return
		}
	}
	if lp.of == "" || len(lp.selectors) == 0 {
		fail("want of=BASE (the kernel this one is a variant of) and device=SEL[,SEL...] (%s)", strings.Join(selectorNames, ", "))
		return
	}
	base := byFunc[lp.of]
	switch {
	case base == k:
		fail("of=%s: a kernel is not a variant of itself", lp.of)
		return
	case base == nil:
		fail("of=%s: %s is not a //gompt:kernel function of package %s", lp.of, lp.of, g.p.name)
		return
	case base.launch != nil && base.launch.variantDir != nil:
		fail("of=%s: %s is itself a variant (of %s); name the base kernel", lp.of, lp.of, strings.TrimPrefix(strings.Fields(base.launch.variantDir.Text)[1], "of="))
		return
	}
	for _, other := range base.variants() {
		for _, s := range lp.selectors {
			for _, t := range other.launch.selectors {
				if s == t {
					fail("%s and %s are both variants of %s for device=%s; a device selector picks one variant", other.fn.name, k.fn.name, base.fn.name, s)
					return
				}
			}
		}
	}
	lp.base = base
	base.launchPlan().variants = append(base.launchPlan().variants, k)
}

// checkVariant checks that variant k's launchers take what its base's
// take and return what they return, naming the first difference.
func (g *gen) checkVariant(k *kernel) {
	base := k.launch.base
	fail := func(format string, args ...any) {
		g.errs.add(k.launch.variantDir.Pos(), "//gompt:variant of=%s: kernel %s: "+format, append([]any{base.fn.name, k.fn.name}, args...)...)
	}
	vp, bp := k.launchParams(), base.launchParams()
	hint := " (a variant's launchers take its base's parameters, in order: its own less those arg(PARAM)=FUNC computes)"
	for i := 0; i < max(len(vp), len(bp)); i++ {
		switch {
		case i >= len(vp):
			fail("it lacks %s's parameter %s %s%s", base.fn.name, bp[i].name, goType(bp[i]), hint)
			return
		case i >= len(bp):
			fail("its parameter %s %s is not one of %s's; compute it with arg(%s)=FUNC%s", vp[i].name, goType(vp[i]), base.fn.name, vp[i].name, hint)
			return
		case vp[i].name != bp[i].name || goType(vp[i]) != goType(bp[i]):
			fail("its parameter %d is %s %s where %s's is %s %s%s", i+1, vp[i].name, goType(vp[i]), base.fn.name, bp[i].name, goType(bp[i]), hint)
			return
		}
	}
	result := func(k *kernel) string {
		if k.reduce == "" {
			return "nothing (a map or team kernel)"
		}
		return fmt.Sprintf("a %s (reduce=%s)", k.result.goName(), k.reduce)
	}
	if (k.reduce == "") != (base.reduce == "") || k.reduce != "" && k.result.goName() != base.result.goName() {
		fail("its launcher returns %s, %s's %s; a variant computes what its base computes", result(k), base.fn.name, result(base))
	}
}

// variantFunc is the name of the function that says which kernel k's
// launchers run on a device (a kernel with variants): RunMatmul's is
// MatmulVariant.
func variantFunc(k *kernel) string {
	rest := k.runName[3:]
	if k.runName[0] == 'r' {
		return strings.ToLower(rest[:1]) + rest[1:] + "Variant"
	}
	return rest + "Variant"
}
