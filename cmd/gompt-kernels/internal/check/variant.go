package check

import (
	"fmt"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// CheckLaunchers resolves every kernel's arg(PARAM)= functions and
// //gompt:variant directives, once all kernels are known.
func CheckLaunchers(g *ir.Program, o ir.Options) {
	byFunc := map[string]*ir.Kernel{}
	for _, k := range g.Kernels {
		byFunc[k.Fn.Name] = k
	}
	for _, k := range g.Kernels {
		if k.Launch == nil {
			continue
		}
		for _, p := range k.Params {
			if name, ok := k.Launch.ArgText[p]; ok {
				resolveArg(g, k, p, name, o)
			}
		}
	}
	for _, k := range g.Kernels {
		if k.Launch != nil && k.Launch.VariantDir != nil {
			parseVariant(g, k, byFunc)
		}
	}
	for _, k := range g.Kernels {
		if k.Launch != nil && k.Launch.Base != nil {
			checkVariant(g, k)
		}
	}
}

// resolveArg checks arg(p)=name: name is a function of the package (not
// a kernel or helper) whose parameters are named as, and have the types
// of, parameters of k the caller passes, and whose one result has p's
// type.
func resolveArg(g *ir.Program, k *ir.Kernel, p *ir.Param, name string, o ir.Options) {
	bad := func(format string, args ...any) {
		g.Errs.Add(k.DirPos, "//gompt:kernel: arg(%s)=%s: "+format, append([]any{p.Name, name}, args...)...)
	}
	if ir.IsIndex(k, p) {
		bad("%s is one of the point's indices; arg() computes a parameter the launcher passes", p.Name)
		return
	}
	f, _ := g.P.Types.Scope().Lookup(name).(*types.Func)
	if f == nil {
		bad("%s is not a function of package %s", name, g.P.Name)
		return
	}
	for _, other := range g.Kernels {
		if other.Fn.Obj == f {
			bad("%s is a kernel; name an ordinary Go function, which the launcher calls on the host", name)
			return
		}
	}
	if _, ok := g.Funcs[f]; ok {
		bad("%s is a //gompt:func helper; name an ordinary Go function, which the launcher calls on the host", name)
		return
	}
	sig := f.Type().(*types.Signature)
	if sig.Recv() != nil || sig.TypeParams() != nil || sig.Variadic() {
		bad("%s must be a plain function (no receiver, type parameters or variadic parameter)", name)
		return
	}
	if sig.Results().Len() != 1 || !types.Identical(sig.Results().At(0).Type(), p.Obj.Type()) {
		got := fmt.Sprintf("%d results", sig.Results().Len())
		if sig.Results().Len() == 1 {
			got = g.TypeString(sig.Results().At(0).Type())
		}
		bad("%s must return one %s (the type of %s), not %s", name, ir.GoType(p), p.Name, got)
		return
	}
	if g.LaunchDir != "" && !f.Exported() {
		bad("-launchers puts the launchers in another package, which calls %s: export it", name)
		return
	}
	byName := map[string]*ir.Param{}
	for _, q := range k.Args() {
		byName[q.Name] = q
	}
	d := &ir.Derivation{Fn: f}
	for i := 0; i < sig.Params().Len(); i++ {
		v := sig.Params().At(i)
		q := byName[v.Name()]
		switch {
		case q == nil:
			bad("%s's parameter %s names no parameter of %s; its parameters are named as the kernel's, which the launcher passes", name, v.Name(), k.Fn.Name)
			return
		case q == p || k.Launch.ArgText[q] != "":
			bad("%s's parameter %s is computed by arg() too; it may take only parameters the caller passes", name, v.Name())
			return
		case !types.Identical(v.Type(), q.Obj.Type()):
			bad("%s's parameter %s is %s, %s's is %s", name, v.Name(), g.TypeString(v.Type()), k.Fn.Name, ir.GoType(q))
			return
		}
		d.Args = append(d.Args, q)
	}
	if k.Launch.Derived == nil {
		k.Launch.Derived = map[*ir.Param]*ir.Derivation{}
	}
	k.Launch.Derived[p] = d
}

// parseVariant parses k's //gompt:variant of=BASE device=SEL[,SEL...].
func parseVariant(g *ir.Program, k *ir.Kernel, byFunc map[string]*ir.Kernel) {
	lp := k.Launch
	dir := lp.VariantDir
	fail := func(format string, args ...any) {
		g.Errs.Add(dir.Pos(), "//gompt:variant: "+format, args...)
	}
	failed := false
	fields := ir.DirectiveFields(dir.Text, ir.VariantDirective, "of and device", func(format string, args ...any) {
		fail(format, args...)
		failed = true
	})
	if failed {
		return
	}
	for _, kv := range fields {
		key, val := kv[0], kv[1]
		switch key {
		case "of":
			lp.Of = val
		case "device":
			for _, s := range strings.Split(val, ",") {
				known := false
				for _, n := range ir.SelectorNames {
					known = known || s == n
				}
				if !known {
					fail("device=%s: %q is not a device selector; they are %s (backends, device types, the initial device)", val, s, strings.Join(ir.SelectorNames, ", "))
					return
				}
				lp.Selectors = append(lp.Selectors, s)
			}
		default:
			fail("unknown key %q; the keys are of (the base kernel's function) and device (where this variant runs)", key)
			return
		}
	}
	if lp.Of == "" || len(lp.Selectors) == 0 {
		fail("want of=BASE (the kernel this one is a variant of) and device=SEL[,SEL...] (%s)", strings.Join(ir.SelectorNames, ", "))
		return
	}
	base := byFunc[lp.Of]
	switch {
	case base == k:
		fail("of=%s: a kernel is not a variant of itself", lp.Of)
		return
	case base == nil:
		fail("of=%s: %s is not a //gompt:kernel function of package %s", lp.Of, lp.Of, g.P.Name)
		return
	case base.Launch != nil && base.Launch.VariantDir != nil:
		fail("of=%s: %s is itself a variant (of %s); name the base kernel", lp.Of, lp.Of, strings.TrimPrefix(strings.Fields(base.Launch.VariantDir.Text)[1], "of="))
		return
	}
	for _, other := range base.Variants() {
		for _, s := range lp.Selectors {
			for _, t := range other.Launch.Selectors {
				if s == t {
					fail("%s and %s are both variants of %s for device=%s; a device selector picks one variant", other.Fn.Name, k.Fn.Name, base.Fn.Name, s)
					return
				}
			}
		}
	}
	lp.Base = base
	base.LaunchPlan().Variants = append(base.LaunchPlan().Variants, k)
}

// checkVariant checks that variant k's launchers take what its base's
// take and return what they return, naming the first difference.
func checkVariant(g *ir.Program, k *ir.Kernel) {
	base := k.Launch.Base
	fail := func(format string, args ...any) {
		g.Errs.Add(k.Launch.VariantDir.Pos(), "//gompt:variant of=%s: kernel %s: "+format, append([]any{base.Fn.Name, k.Fn.Name}, args...)...)
	}
	vp, bp := k.LaunchParams(), base.LaunchParams()
	hint := " (a variant's launchers take its base's parameters, in order: its own less those arg(PARAM)=FUNC computes)"
	for i := 0; i < max(len(vp), len(bp)); i++ {
		switch {
		case i >= len(vp):
			fail("it lacks %s's parameter %s %s%s", base.Fn.Name, bp[i].Name, ir.GoType(bp[i]), hint)
			return
		case i >= len(bp):
			fail("its parameter %s %s is not one of %s's; compute it with arg(%s)=FUNC%s", vp[i].Name, ir.GoType(vp[i]), base.Fn.Name, vp[i].Name, hint)
			return
		case vp[i].Name != bp[i].Name || ir.GoType(vp[i]) != ir.GoType(bp[i]):
			fail("its parameter %d is %s %s where %s's is %s %s%s", i+1, vp[i].Name, ir.GoType(vp[i]), base.Fn.Name, bp[i].Name, ir.GoType(bp[i]), hint)
			return
		}
	}
	result := func(k *ir.Kernel) string {
		if k.Reduce == "" {
			return "nothing (a map or team kernel)"
		}
		return fmt.Sprintf("a %s (reduce=%s)", k.Result.GoName(), k.Reduce)
	}
	if (k.Reduce == "") != (base.Reduce == "") || k.Reduce != "" && k.Result.GoName() != base.Result.GoName() {
		fail("its launcher returns %s, %s's %s; a variant computes what its base computes", result(k), base.Fn.Name, result(base))
	}
}
