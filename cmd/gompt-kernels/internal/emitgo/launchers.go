package emitgo

import (
	"fmt"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// launcher writes the kernel's typed launchers: RunK, which runs it and
// returns when it has run, and RunKNowait, its nowait form, which returns
// the task (a *target.Result for a reduction) and takes depend items; for
// a kernel with variants also KVariant, which says which kernel they run
// on a device. kp qualifies the kernel variables and the package's
// functions (another package's launchers).
func launcher(g *ir.Program, w *goWriter, k *ir.Kernel, kp string) {
	l := newLaunch(g, k, kp)
	l.sync(w)
	l.nowait(w)
	if len(k.Variants()) > 0 {
		l.selector(w)
	}
}

// launch is what the launchers of one kernel share.
type launch struct {
	g          *ir.Program
	k          *ir.Kernel
	kp         string   // qualifies the kernel's package ("" or "gomptkernels.")
	qual       string   // the kernel's package name and a dot, for the doc comments
	dev, deps  string   // the names of the device and depend-item parameters
	params     []string // "name type" of the launchers' own parameters
	names      []string // their names
	dims       []string // the extents' names
	resultType string   // a reduction's Go type; "" for none
}

func newLaunch(g *ir.Program, k *ir.Kernel, kp string) *launch {
	l := &launch{g: g, k: k, kp: kp}
	if kp != "" {
		l.qual = g.P.Name + "."
	}
	used := map[string]bool{}
	for _, p := range k.Args() {
		used[p.Name] = true
	}
	for _, p := range k.LaunchParams() {
		l.params = append(l.params, p.Name+" "+ir.GoType(p))
		l.names = append(l.names, p.Name)
	}
	fresh := func(n string) string {
		for used[n] {
			n = "gompt" + ir.UpperFirst(n)
		}
		return n
	}
	l.dev, l.deps = fresh("dev"), fresh("deps")
	for _, d := range k.Dims {
		l.dims = append(l.dims, d.Name)
	}
	if k.Reduce != "" {
		l.resultType = k.Result.GoName()
	}
	return l
}

// doc writes what both forms' comments say: the kernel, the space, the
// maps, what it computes, what it derives and where a variant runs.
func (l *launch) doc(w *goWriter, name, subject string) {
	k := l.k
	w.p("// %s runs %s%s (%s) on device %s over [0, %s), mapping each slice by how the kernel uses it:", subject, l.qual, k.VarName, k.Fn.Name, l.dev, strings.Join(l.dims, ")x[0, "))
	var maps []string
	for _, p := range k.Args() {
		if p.Slice {
			maps = append(maps, p.Name+" "+strings.ToLower(k.Maps[p]))
		}
	}
	if len(maps) == 0 {
		w.p("// it has no slices.")
	} else {
		w.p("// %s.", strings.Join(maps, ", "))
	}
	if k.Reduce != "" {
		w.p("// It returns the %s of the points' values (reduce=%s).", map[string]string{"+": "sum", "*": "product", "min": "least", "max": "greatest"}[k.Reduce], k.Reduce)
	}
	for _, p := range k.Args() {
		if d := k.DerivedParam(p); d != nil {
			w.p("// It computes %s as %s (arg(%s)=%s).", p.Name, l.derived(d, l.qual), p.Name, d.Fn.Name())
		}
	}
	if vs := k.Variants(); len(vs) > 0 {
		for _, v := range vs {
			w.p("// On a device that matches %s it runs %s%s (%s) instead, as %s does (//gompt:variant).", strings.Join(v.Launch.Selectors, " or "), l.qual, v.VarName, v.Fn.Name, l.runName(v, name != k.RunName))
		}
		w.p("// %s says which kernel runs on a device.", ir.VariantFunc(k))
	}
}

// runName is the name of v's synchronous or nowait launcher.
func (l *launch) runName(v *ir.Kernel, nowait bool) string {
	if nowait {
		return v.RunName + "Nowait"
	}
	return v.RunName
}

// derived is the call that computes a parameter, qualified by q.
func (l *launch) derived(d *ir.Derivation, q string) string {
	var args []string
	for _, a := range d.Args {
		args = append(args, a.Name)
	}
	return q + d.Fn.Name() + "(" + strings.Join(args, ", ") + ")"
}

// sync writes RunK.
func (l *launch) sync(w *goWriter) {
	k := l.k
	ret := "error"
	if l.resultType != "" {
		ret = "(" + l.resultType + ", error)"
	}
	l.doc(w, k.RunName, k.RunName)
	w.p("func %s(%s gompttarget.DeviceClause, %s) %s {", k.RunName, l.dev, strings.Join(l.params, ", "), ret)
	region := l.prologue(w, "", false)
	if l.resultType == "" {
		w.p("return gompttarget.Target(%s)", region)
		w.p("}")
		w.p("")
		return
	}
	w.p("if err := gompttarget.Target(%s); err != nil {", region)
	w.p("return gomptZero, err")
	w.p("}")
	w.p("return %s, nil", l.combine())
	w.p("}")
	w.p("")
}

// nowait writes RunKNowait.
func (l *launch) nowait(w *goWriter) {
	k := l.k
	name := k.RunName + "Nowait"
	ret := "*gompttarget.Task"
	if l.resultType != "" {
		ret = "*gompttarget.Result[" + l.resultType + "]"
	}
	w.p("// %s is %s's nowait form: it starts the launch and returns at once. %s are depend items", name, k.RunName, l.deps)
	w.p("// (target.DependIn, DependOut, DependInOut, DependOn), which order it as they order target.TargetNowait.")
	if l.resultType == "" {
		w.p("// Leave the slices alone until the task's Wait returns %s's error (one found before the launch,", k.RunName)
		w.p("// such as a short slice, included). An empty space runs nothing but still waits for %s.", l.deps)
	} else {
		w.p("// Leave the slices alone until the Result's Wait returns %s's value and error (one found before", k.RunName)
		w.p("// the launch included); the value is read only through Wait, so never before the kernel has run.")
		w.p("// Result.Task is the task, for DependOn. An empty space runs nothing but still waits for %s.", l.deps)
	}
	w.p("//")
	l.doc(w, name, "It")
	w.p("func %s(%s gompttarget.DeviceClause, %s) %s {", name, l.dev, strings.Join(append(l.params, l.deps+" ...gompttarget.Map"), ", "), ret)
	region := l.prologue(w, l.deps, true)
	if l.resultType == "" {
		w.p("return gompttarget.TargetNowait(%s)", region)
		w.p("}")
		w.p("")
		return
	}
	w.p("gomptTask := gompttarget.TargetNowait(%s)", region)
	w.p("return gompttarget.NewResult(gomptTask, func() %s { return %s })", l.resultType, l.combine())
	w.p("}")
	w.p("")
}

// dispatch writes the switch that runs a variant's launcher on a device
// its selectors match.
func (l *launch) dispatch(w *goWriter, nowait bool) {
	vs := l.k.Variants()
	if len(vs) == 0 {
		return
	}
	args := l.dev + ", " + strings.Join(l.names, ", ")
	if nowait {
		args += ", " + l.deps + "..."
	}
	w.p("switch %s(%s) {", ir.VariantFunc(l.k), l.dev)
	for _, v := range vs {
		w.p("case %s%s:", l.kp, v.VarName)
		w.p("return %s(%s)", l.runName(v, nowait), args)
	}
	w.p("}")
}

// prologue writes what both forms do before the launch: compute derived
// parameters, return at once for an empty space, run a variant where the
// device matches (the base's empty space is the variant's too), cut the
// slices to their lengths, make a reduction's partial results. It returns
// the Region literal, with deps (a variadic parameter's name, or "")
// appended to its maps.
func (l *launch) prologue(w *goWriter, deps string, nowait bool) string {
	k := l.k
	for _, p := range k.Args() {
		if d := k.DerivedParam(p); d != nil {
			w.p("%s := %s", p.Name, l.derived(d, l.kp))
		}
	}
	if l.resultType != "" {
		w.p("gomptZero := %s(%s)", l.resultType, goIdentity(w, k.Reduce, *k.Result))
	}
	var empty []string
	for _, d := range k.Dims {
		empty = append(empty, d.Name+" <= 0")
	}
	w.p("if %s {", strings.Join(empty, " || "))
	switch {
	case deps == "" && l.resultType == "":
		w.p("return nil")
	case deps == "":
		w.p("return gomptZero, nil")
	case l.resultType == "":
		w.p("return gompttarget.Go(func() error { return nil }, %s...)", deps)
	default:
		w.p("return gompttarget.NewResult(gompttarget.Go(func() error { return nil }, %s...), func() %s { return gomptZero })", deps, l.resultType)
	}
	w.p("}")
	l.dispatch(w, nowait)
	var maplist, args []string
	for _, p := range k.Args() {
		if !p.Slice {
			args = append(args, scalarArg(p))
			continue
		}
		w.p("%s = gomptrt.Head(%s, gomptrt.Len(%s))", p.Name, p.Name, lenArgs(k, p))
		maplist = append(maplist, fmt.Sprintf("gompttarget.%s(%s)", k.Maps[p], p.Name))
		args = append(args, "gompttarget.Slice("+p.Name+")")
	}
	size := []string{"1", "1", "1"}
	for i, d := range k.Dims {
		size[i] = d.Name
	}
	shape := "gompttarget.Shape{Size: [3]int{" + strings.Join(size, ", ") + "}"
	if k.Team > 0 {
		shape += fmt.Sprintf(", Teams: %s, Threads: %d", l.dims[0], k.Team)
	}
	if len(k.ReduceArrays) > 0 {
		shape += fmt.Sprintf(", Teams: gomptrt.TeamsFor(%s.Teams(), %s), Threads: gomptrt.MaxThreads", l.dev, l.dims[0])
	}
	if l.resultType != "" {
		w.p("gomptTeams := gomptrt.TeamsFor(%s.Teams(), gomptrt.Len(%s))", l.dev, strings.Join(l.dims, ", "))
		w.p("gomptPartial := make([]%s, gomptTeams)", l.resultType)
		maplist = append(maplist, "gompttarget.From(gomptPartial)")
		args = append(args, "gompttarget.Slice(gomptPartial)")
		shape += ", Teams: gomptTeams, Threads: gomptrt.MaxThreads"
	}
	shape += "}"
	maps := "[]gompttarget.Map{" + strings.Join(maplist, ", ") + "}"
	if deps != "" {
		maps = "append(" + maps + ", " + deps + "...)"
	}
	return fmt.Sprintf("gompttarget.Region{Device: %s, Kernel: %s%s, Shape: %s,\nMaps: %s,\nArgs: []gompttarget.Arg{%s}}",
		l.dev, l.kp, k.VarName, shape, maps, strings.Join(args, ", "))
}

// combine is the expression that combines a reduction's partial results.
func (l *launch) combine() string {
	k := l.k
	t := *k.Result
	switch {
	case k.Reduce == "min":
		return "gomptrt.Min(gomptZero, gomptPartial)"
	case k.Reduce == "max":
		return "gomptrt.Max(gomptZero, gomptPartial)"
	case t.IsFloat() && k.Reduce == "+":
		return "gomptrt.SumFloats(gomptPartial)"
	case t.IsFloat():
		return "gomptrt.ProdFloats(gomptPartial)"
	case k.Reduce == "+":
		return "gomptrt.SumInts(gomptPartial)"
	}
	return "gomptrt.ProdInts(gomptPartial)"
}

// selector writes KVariant: the kernel k's launchers run on a device, as
// OpenMP's declare variant picks by the device's traits.
func (l *launch) selector(w *goWriter) {
	k := l.k
	name := ir.VariantFunc(k)
	w.p("// %s returns the kernel %s and %sNowait run on device %s (OpenMP's declare variant):", name, k.RunName, k.RunName, l.dev)
	for _, v := range k.Variants() {
		w.p("// %s%s (%s) on a device that matches %s (//gompt:variant device=%s, target.MatchDevice),", l.qual, v.VarName, v.Fn.Name, strings.Join(v.Launch.Selectors, " or "), strings.Join(v.Launch.Selectors, ","))
	}
	w.p("// else %s%s (%s). A device clause that names no device gets %s%s, whose launch reports it.", l.qual, k.VarName, k.Fn.Name, l.qual, k.VarName)
	w.p("func %s(%s gompttarget.DeviceClause) *gompttarget.Kernel {", name, l.dev)
	for _, v := range k.Variants() {
		var sel []string
		for _, s := range v.Launch.Selectors {
			sel = append(sel, fmt.Sprintf("%q", s))
		}
		w.p("if gompttarget.MatchDevice(%s, %s) {", l.dev, strings.Join(sel, ", "))
		w.p("return %s%s", l.kp, v.VarName)
		w.p("}")
	}
	w.p("return %s%s", l.kp, k.VarName)
	w.p("}")
	w.p("")
}

// scalarArg is the target.Arg of scalar parameter p.
func scalarArg(p *ir.Param) string {
	switch {
	case p.T.IsBool():
		return "gompttarget.Int(gomptrt.Bool(" + p.Name + "))"
	case p.T.GoName() == "float32":
		return "gompttarget.Float32(" + p.Name + ")"
	case p.T.GoName() == "float64":
		return "gompttarget.Float64(" + p.Name + ")"
	case p.T.GoName() == "int":
		return "gompttarget.Int(" + p.Name + ")"
	}
	return "gompttarget.Int(int(" + p.Name + "))"
}
