package main

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// The generated Go file imports these packages under names no user
// identifier takes, so that the generated functions may name their locals
// as the kernel's parameters.
const (
	devicePkg = "github.com/gompt/gompt/device"
	rtPkg     = "github.com/gompt/gompt/kernelrt"
	targetPkg = "github.com/gompt/gompt/target"
)

// goWriter builds a generated Go file.
type goWriter struct {
	sb      strings.Builder
	imports map[string]string // path -> name
	name    string            // the file's name, for its //line directives
}

// posMark ends a line of a Go image that comes from a statement of the
// kernel's source, followed by its position; goWriter.file turns it into
// //line directives.
const posMark = "//gompt:pos "

// linePositions turns the position marks of a formatted Go file into
// //line directives, written only where the position changes: a marked
// line is at the kernel's source line it names, and needs a directive only
// where the line before it does not lead there (the line after a
// directive is one further, as in the kernel's own source); an unmarked
// line of a function's body after a marked one (a closing brace, a loop
// over lanes) goes on from there; the first line at column 0 after them
// (the function's closing brace) is back at its own place in the generated
// file (name). So the compiler's and the runtime's positions (a bounds
// check's panic) name the line of the Go function a kernel was written
// as, and a debugger steps through its lines.
func linePositions(src []byte, name string) []byte {
	var out strings.Builder
	n := 1              // the number of the next line written
	file, line := "", 0 // the position of the next line written, where it is not its own (file "")
	put := func(s string) {
		out.WriteString(s)
		out.WriteByte('\n')
		n++
		if file != "" {
			line++
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
	for _, ln := range lines {
		i := strings.Index(ln, posMark)
		if i < 0 {
			if file != "" && ln != "" && !strings.HasPrefix(ln, "\t") {
				file = ""
				put("//line " + name + ":" + strconv.Itoa(n+1))
			}
			put(ln)
			continue
		}
		pos := strings.TrimSpace(ln[i+len(posMark):])
		c := strings.LastIndex(pos, ":")
		f, l := pos[:c], pos[c+1:]
		if f != file || l != strconv.Itoa(line) {
			file = f
			line, _ = strconv.Atoi(l)
			line--
			put("//line " + pos)
		}
		put(strings.TrimRight(ln[:i], " \t"))
	}
	return []byte(out.String())
}

func (w *goWriter) p(format string, args ...any) {
	fmt.Fprintf(&w.sb, format, args...)
	w.sb.WriteByte('\n')
}

func (w *goWriter) file(pkgName, from string) ([]byte, error) {
	var head strings.Builder
	head.WriteString(generatedHeader + "\n")
	fmt.Fprintf(&head, "// Generated from %s by gompt-kernels (go doc github.com/gompt/gompt/cmd/gompt-kernels).\n\n", from)
	fmt.Fprintf(&head, "package %s\n\nimport (\n", pkgName)
	var paths []string
	for p := range w.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&head, "\t%s %q\n", w.imports[p], p)
	}
	head.WriteString(")\n\n")
	src := head.String() + w.sb.String()
	out, err := format.Source([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("gompt-kernels wrote Go that does not parse (a bug; please report it): %v\n%s", err, src)
	}
	if strings.Contains(string(out), posMark) {
		out = linePositions(out, w.name)
	}
	return out, nil
}

// goFile is the package's generated Go file: per kernel, its variable, its
// Go image, its Sample and (without -launchers) its launcher.
func (g *gen) goFile(out output) ([]byte, error) {
	w := &goWriter{imports: map[string]string{devicePkg: "gomptdevice", rtPkg: "gomptrt"}, name: goFileName}
	embed := false
	for _, k := range g.kernels {
		g.kernelVar(w, k, out)
		if _, ok := out[k.entry+".cl"]; ok {
			embed = true
		}
		g.hostImage(w, k)
		g.sample(w, k)
		if g.launchDir == "" {
			w.imports[targetPkg] = "gompttarget"
			g.launcher(w, k, "")
		}
	}
	if embed {
		w.imports["embed"] = "_"
	}
	return w.file(g.p.name, "package "+g.p.path)
}

// launcherFile is the -launchers package's file.
func (g *gen) launcherFile() ([]byte, error) {
	w := &goWriter{imports: map[string]string{rtPkg: "gomptrt", targetPkg: "gompttarget", g.p.path: "gomptkernels"}}
	for _, k := range g.kernels {
		g.launcher(w, k, "gomptkernels.")
	}
	return w.file(g.launchName, "package "+g.p.path)
}

func goIdent(prefix, name string) string { return prefix + upperFirst(name) }

func (g *gen) kernelVar(w *goWriter, k *kernel, out output) {
	dims := make([]string, len(k.dims))
	for i, d := range k.dims {
		dims[i] = d.name
	}
	what := "map kernel"
	if k.team > 0 {
		what = fmt.Sprintf("team kernel (team=%d)", k.team)
	}
	if k.reduce != "" {
		what = "reduction (reduce=" + k.reduce + ")"
	}
	w.p("// %s is the gompt %s of %s (%s), over [0, %s).", k.varName, what, k.fn.name, g.rel(k.decl.Pos()), strings.Join(dims, ")x[0, "))
	if k.reduce != "" {
		w.p("// Its last parameter, partial, receives one %s per team (Shape.Teams of them), to combine on the host; %s does.", k.result.goName(), k.runName)
	}
	// Params are named as the OpenCL C entry's arguments, which the
	// OpenCL plugin checks by name: a Go name C cannot take (global,
	// min) is the entry's (global_) in Params and their Lens too.
	_, cnames := entryParams(k)
	var renamed []string
	for _, p := range k.args() {
		if cnames[p] != p.name {
			renamed = append(renamed, p.name+" is "+cnames[p])
		}
	}
	if len(renamed) > 0 {
		w.p("// Its Params name the parameters as its OpenCL C does, where OpenCL C cannot take the Go name: %s.", strings.Join(renamed, ", "))
	}
	w.p("var %s = &gomptdevice.Kernel{", k.varName)
	w.p("Name: %q,", k.name)
	w.p("Params: []gomptdevice.Param{")
	for _, p := range k.args() {
		if p.slice {
			w.p("{Name: %q, Kind: gomptdevice.ParamBuffer, Elem: gomptdevice.%s, Len: %q},", cnames[p], p.t.elemKind(), k.lenString(p, cnames))
		} else {
			w.p("{Name: %q, Kind: gomptdevice.%s},", cnames[p], p.t.paramKind())
		}
	}
	if k.reduce != "" {
		w.p("{Name: \"partial\", Kind: gomptdevice.ParamBuffer, Elem: gomptdevice.%s, Len: \"Shape.Teams\"},", k.result.elemKind())
	}
	w.p("},")
	w.p("Dims: %d,", len(k.dims))
	if k.reduce != "" {
		w.p("MaxThreads: gomptrt.MaxThreads,")
	}
	if len(k.sites) > 0 {
		w.p("Faults: []gomptdevice.FaultSite{")
		for _, s := range k.sites {
			w.p("{Kind: gomptdevice.%s, Pos: %q},", s.kind, s.pos)
		}
		w.p("},")
	}
	if k.team > 0 {
		w.p("MaxThreads: %d,", k.team)
	}
	if len(k.needs) > 0 {
		w.p("Needs: []gomptdevice.Need{")
		for _, n := range k.needs {
			amount := ""
			if n.amount != 0 {
				amount = fmt.Sprintf(" Amount: %d,", n.amount)
			}
			w.p("{Kind: gomptdevice.%s,%s Use: %q, Pos: %q},", n.kind, amount, n.use, n.pos)
		}
		w.p("},")
	}
	w.p("Images: []gomptdevice.Image{")
	w.p("{Kind: gomptdevice.ImageHost, Entry: %q, Host: %s},", k.entry, goIdent("gomptHost", k.fn.name))
	if _, ok := out[k.entry+".cl"]; ok {
		w.p("{Kind: gomptdevice.ImageOpenCL, Entry: %q, Source: %s, Options: %q},", k.entry, goIdent("gomptCL", k.fn.name), clOptions)
	}
	if _, ok := out[k.entry+".ptx"]; ok {
		w.p("{Kind: gomptdevice.ImagePTX, Entry: %q, Source: %s},", k.entry, goIdent("gomptPTX", k.fn.name))
	}
	w.p("},")
	w.p("Sample: %s,", goIdent("gomptSample", k.fn.name))
	w.p("}")
	w.p("")
	if _, ok := out[k.entry+".cl"]; ok {
		w.p("//go:embed %s.cl", k.entry)
		w.p("var %s string", goIdent("gomptCL", k.fn.name))
		w.p("")
	}
	if _, ok := out[k.entry+".ptx"]; ok {
		w.p("//go:embed %s.ptx", k.entry)
		w.p("var %s string", goIdent("gomptPTX", k.fn.name))
		w.p("")
	}
}

// goType is p's Go type.
func goType(p *param) string {
	if p.slice {
		return "[]" + p.t.goName()
	}
	return p.t.goName()
}

// lenArgs are the arguments of gomptrt.Len for buffer p, in terms of the
// Go variables named as the kernel's parameters: a product's terms, or the
// sum as one Go expression.
func lenArgs(k *kernel, p *param) string {
	term := func(t string) string {
		q := paramNamed(k, t)
		switch {
		case q == nil:
			return t
		case q.t.goName() == "int":
			return q.name
		}
		return "int(" + q.name + ")"
	}
	if terms, ok := k.lens[p].product(); ok {
		return lenExpr{{terms: terms}}.format(term, ", ", "", "")
	}
	return k.lens[p].format(term, "*", "+", "-")
}

// hostArgs declares the kernel's parameters (less the indices) as Go
// locals from a *device.HostArgs named a.
func hostArgs(w *goWriter, k *kernel, a string) {
	for j, p := range k.args() {
		if p.slice {
			continue
		}
		var v string
		switch p.t.paramKind() {
		case "ParamFloat32":
			v = a + ".Float32(" + itoa(j) + ")"
		case "ParamFloat64":
			v = a + ".Float64(" + itoa(j) + ")"
		default:
			v = a + ".Int(" + itoa(j) + ")"
			switch {
			case p.t.isBool():
				v += " != 0"
			case p.t.goName() != "int":
				v = p.t.goName() + "(" + v + ")"
			}
		}
		w.p("%s := %s", p.name, v)
	}
	for j, p := range k.args() {
		if p.slice {
			w.p("%s := gomptrt.View[%s](%s.Bufs[%d], gomptrt.Len(%s))", p.name, p.t.goName(), a, j, lenArgs(k, p))
		}
	}
}

// hostImage writes the kernel's Go image: the Go function's body, pasted
// into loops over the team's range (see gobody).
func (g *gen) hostImage(w *goWriter, k *kernel) {
	name := goIdent("gomptHost", k.fn.name)
	w.p("// %s is %s's Go image: the body of %s at each point of the team's range.", name, k.varName, k.fn.name)
	team := "_"
	if k.reduce != "" {
		team = "gomptTeam"
	}
	if len(k.decl.Body.List) == 0 && k.reduce == "" {
		w.p("func %s(*gomptdevice.HostArgs, gomptdevice.Range, int, int) {} // an empty body", name)
		w.p("")
		return
	}
	w.p("func %s(gomptA *gomptdevice.HostArgs, gomptR gomptdevice.Range, %s, _ int) {", name, team)
	hostArgs(w, k, "gomptA")
	if k.team > 0 {
		g.teamHost(w, k)
		w.p("}")
		w.p("")
		return
	}
	merge := g.reduceArraysHost(w, k)
	// The base addresses of the buffers the body reaches without a
	// bounds test (in a lockstep image, its lanes function's).
	var ls *lockstep
	if k.reduce == "" {
		ls = g.planLockstep(k)
	}
	var resliced map[*param]bool
	if ls == nil {
		resliced = g.reslicedAtPoint(k)
	}
	for _, p := range k.args() {
		if p.slice && g.provenIn(k, p) && ls == nil && !resliced[p] {
			w.imports["unsafe"] = "unsafe"
			w.p("%s := unsafe.Pointer(unsafe.SliceData(%s))", base(p), p.name)
		}
	}
	used := map[*types.Var]bool{}
	var lanesFn strings.Builder
	for d := range k.dims {
		w.p("gomptLo%d, gomptHi%d := gomptR.Clamp(%d, %s)", d, d, d, k.dims[d].name)
	}
	for _, p := range k.args() {
		if resliced[p] {
			w.p("%s = %s[:gomptHi0] // so that Go drops its bounds tests of %s[%s] in the loop below", p.name, p.name, p.name, k.index[0].name)
		}
	}
	if k.reduce == "" {
		for d := len(k.dims) - 1; d >= 1; d-- {
			ix := k.index[d].name
			w.p("for %s := gomptLo%d; %s < gomptHi%d; %s++ {", ix, d, ix, d, ix)
		}
		// points writes a loop over dimension 0 from lo to hi running the
		// statements list at each point.
		label := 0
		points := func(lo, hi string, list []ast.Stmt) {
			body := &gobody{g: g, k: k, w: w, used: used, depth: 0, resliced: resliced}
			l := fmt.Sprintf("gomptPoint%d", label)
			label++
			labelled := false
			body.ret = func() string { labelled = true; return "continue " + l }
			body.copies()
			body.stmts(list)
			if labelled {
				w.p("%s:", l)
			}
			ix := k.index[0].name
			w.p("for %s := %s; %s < %s; %s++ {", ix, lo, ix, hi, ix)
			w.sb.WriteString(body.sb.String())
			w.p("}")
		}
		if ls != nil {
			ls.emit(g, w, used, &lanesFn)
		} else if sp, ok := g.boundarySplit(k, &gobody{g: g, k: k, w: w, used: used}); ok {
			g.splitLoops(w, sp, k.decl.Body.List, points)
		} else {
			points("gomptLo0", "gomptHi0", k.decl.Body.List)
		}
		for d := 1; d < len(k.dims); d++ {
			w.p("}")
		}
	} else {
		g.reduceHost(w, k, used)
	}
	merge()
	// A parameter the body does not use is still declared.
	for _, p := range k.args() {
		if !used[p.obj] && !(p.slice && g.provenIn(k, p) && ls == nil && !resliced[p]) {
			w.p("_ = %s", p.name)
		}
	}
	w.p("}")
	w.p("")
	w.sb.WriteString(lanesFn.String())
}

// splitLoops writes dimension 0's loops split at the interior's ends:
// [lo, a) and [b, hi) run the whole body, [a, b) the interior.
func (g *gen) splitLoops(w *goWriter, sp *split, whole []ast.Stmt, points func(lo, hi string, list []ast.Stmt)) {
	a, b := "gomptLo0", "gomptHi0"
	if len(sp.lo) > 0 {
		a = "min(max(gomptLo0, " + strings.Join(sp.lo, ", ") + "), gomptHi0)"
	}
	if len(sp.hi) > 0 {
		b = "max(gomptIn0, min(gomptHi0, " + strings.Join(sp.hi, ", ") + "))"
	} else {
		b = "max(gomptIn0, gomptHi0)"
	}
	w.p("// The interior [gomptIn0, gomptIn1), where the boundary test is false.")
	w.p("gomptIn0, gomptIn1 := gomptLo0, gomptLo0")
	if sp.row != "" {
		w.p("if !(%s) { %s%s", sp.row, posMark, sp.pos)
	} else {
		w.p("{")
	}
	w.p("gomptIn0 = %s %s%s", a, posMark, sp.pos)
	w.p("gomptIn1 = %s %s%s", b, posMark, sp.pos)
	w.p("}")
	points("gomptLo0", "gomptIn0", whole)
	points("gomptIn0", "gomptIn1", sp.interior)
	points("gomptIn1", "gomptHi0", whole)
}

// copies makes the pasted body's own copies of the parameters it assigns,
// as a call would.
func (b *gobody) copies() {
	for _, p := range b.k.params {
		if b.k.assigned[p.obj] {
			b.line("%s := %s", p.name, p.name)
		}
	}
}

// provenIn reports whether k's body reaches buffer p through an index
// proven in range.
func (g *gen) provenIn(k *kernel, p *param) bool {
	for ix := range k.proven {
		if id, ok := ast.Unparen(ix.(*ast.IndexExpr).X).(*ast.Ident); ok && g.p.info.Uses[id] == p.obj {
			return true
		}
	}
	return false
}

// reduceHost writes a reduction's loops: the body at each point, its value
// combined from the identity, in float64 for + and * of floats, with four
// accumulators over dimension 0 (an order of its own: float results differ
// from a device's in the last bits, as the device's differ between team
// sizes).
func (g *gen) reduceHost(w *goWriter, k *kernel, used map[*types.Var]bool) {
	t := *k.result
	acc := t.goName()
	if t.isFloat() && (k.reduce == "+" || k.reduce == "*") {
		acc = "float64"
	}
	id := goIdentity(w, k.reduce, *k.result)
	combine := func(a, b string) string {
		switch k.reduce {
		case "min", "max":
			return k.reduce + "(" + a + ", " + b + ")"
		}
		return a + " " + k.reduce + " " + b
	}
	conv := func(v string) string {
		if acc != t.goName() {
			return acc + "(" + v + ")"
		}
		return v
	}
	label := 0
	// instance writes the body at the point whose dimension 0 index is
	// x+u, its value combined into accumulator s.
	instance := func(u, s int) {
		body := &gobody{g: g, k: k, w: w, used: used, depth: 0, retVal: "gomptV"}
		l := fmt.Sprintf("gomptR%d", label)
		label++
		body.ret = func() string { return "goto " + l }
		x := k.index[0].name
		body.line("{")
		body.depth++
		if u > 0 {
			body.line("%s := %s + %d", x, x, u)
		} else if k.assigned[k.index[0].obj] {
			body.line("%s := %s", x, x)
		}
		for _, p := range k.params[1:] {
			if k.assigned[p.obj] {
				body.line("%s := %s", p.name, p.name)
			}
		}
		body.stmts(k.decl.Body.List)
		body.depth--
		body.line("}")
		w.sb.WriteString(body.sb.String())
		w.p("%s:", l)
		w.p("gomptS%d = %s", s, combine(fmt.Sprintf("gomptS%d", s), conv("gomptV")))
	}
	w.p("gomptPartial := gomptrt.View[%s](gomptA.Bufs[%d], gomptTeam+1)", t.goName(), len(k.args()))
	w.p("gomptS0, gomptS1, gomptS2, gomptS3 := %s(%s), %s(%s), %s(%s), %s(%s)", acc, id, acc, id, acc, id, acc, id)
	w.p("var gomptV %s", t.goName())
	for d := len(k.dims) - 1; d >= 1; d-- {
		ix := k.index[d].name
		w.p("for %s := gomptLo%d; %s < gomptHi%d; %s++ {", ix, d, ix, d, ix)
	}
	x := k.index[0].name
	w.p("%s := gomptLo0", x)
	w.p("for ; %s+4 <= gomptHi0; %s += 4 {", x, x)
	for u := range 4 {
		instance(u, u)
	}
	w.p("}")
	w.p("for ; %s < gomptHi0; %s++ {", x, x)
	instance(0, 0)
	w.p("}")
	for d := 1; d < len(k.dims); d++ {
		w.p("}")
	}
	w.p("gomptPartial[gomptTeam] = %s(%s)", t.goName(), combine("("+combine("gomptS0", "gomptS1")+")", "("+combine("gomptS2", "gomptS3")+")"))
}

// goIdentity is the reduction's identity as a Go expression of type acc.
func goIdentity(w *goWriter, op string, t scalar) string {
	switch op {
	case "+":
		return "0"
	case "*":
		return "1"
	}
	isMin := op == "min"
	if t.isFloat() {
		w.imports["math"] = "gomptmath"
		if isMin {
			return "gomptmath.Inf(1)"
		}
		return "gomptmath.Inf(-1)"
	}
	w.imports["math"] = "gomptmath"
	name := strings.ToUpper(t.goName()[:1]) + t.goName()[1:]
	if isMin {
		return "gomptmath.Max" + name
	}
	if !t.signed() {
		return "0"
	}
	return "gomptmath.Min" + name
}

// sample writes the kernel's Sample: extents for about n points, random
// scalars and buffers, deterministic for (n, seed).
func (g *gen) sample(w *goWriter, k *kernel) {
	name := goIdent("gomptSample", k.fn.name)
	tol, why := g.tolerance(k)
	w.p("// %s is %s's Sample: about n points, random arguments.%s", name, k.varName, why)
	w.p("func %s(gomptN int, gomptSeed int64) gomptdevice.Sample {", name)
	random := false
	for _, p := range k.args() {
		if p.slice || !isDimOf(k, p) {
			random = true
		}
	}
	if random {
		w.p("gomptR := gomptrt.Rand(%q, gomptN, gomptSeed)", k.name)
	} else {
		w.p("_ = gomptSeed")
	}
	shape := "gomptdevice.Shape{Size: gomptExt}"
	if k.team > 0 {
		// About n threads: n/team teams.
		w.p("gomptExt := gomptrt.Extents(max(gomptN/%d, 1), 1)", k.team)
		shape = fmt.Sprintf("gomptdevice.Shape{Size: gomptExt, Teams: gomptExt[0], Threads: %d}", k.team)
	} else {
		w.p("gomptExt := gomptrt.Extents(gomptN, %d)", len(k.dims))
	}
	if k.reduce != "" {
		w.p("gomptShape := gomptrt.ReduceShape(gomptExt, %d)", len(k.dims))
		w.p("gomptExt = gomptShape.Size")
		shape = "gomptShape"
	}
	isDim := map[*param]int{}
	for i, d := range k.dims {
		isDim[d] = i + 1
	}
	var bufs, args []string
	for _, p := range k.args() {
		if p.slice {
			continue
		}
		if d := isDim[p]; d > 0 {
			w.p("%s := gomptExt[%d]", p.name, d-1)
		} else {
			switch {
			case p.t.isBool():
				w.p("%s := gomptR.IntN(2) == 1", p.name)
			case p.t.isFloat():
				w.p("%s := %s(0.5 + gomptR.Float64())", p.name, p.t.goName())
			default:
				w.p("%s := %s(1 + gomptR.IntN(8))", p.name, p.t.goName())
			}
		}
	}
	lo, hi := "0.5", "1.5"
	if k.reduce == "*" {
		lo, hi = "0.984375", "1.015625"
	}
	for _, p := range k.args() {
		if !p.slice {
			bufs = append(bufs, "nil")
			args = append(args, sampleArg(p))
			continue
		}
		args = append(args, "{}")
		n := "gomptrt.Len(" + lenArgs(k, p) + ")"
		if p.t.isFloat() {
			bufs = append(bufs, fmt.Sprintf("gomptrt.Floats[%s](gomptR, %s, %s, %s)", p.t.goName(), n, lo, hi))
		} else {
			bufs = append(bufs, fmt.Sprintf("gomptrt.Ints[%s](gomptR, %s, 0, 16)", p.t.goName(), n))
		}
	}
	if k.reduce != "" {
		bufs = append(bufs, fmt.Sprintf("gomptrt.Zeros[%s](gomptShape.Teams)", k.result.goName()))
		args = append(args, "{}")
	}
	w.p("return gomptdevice.Sample{")
	w.p("Shape: %s,", shape)
	w.p("Bufs: [][]byte{%s},", strings.Join(bufs, ", "))
	w.p("Args: []gomptdevice.Arg{%s},", strings.Join(args, ", "))
	if tol != 0 {
		w.p("Tol: %s,", strconv.FormatFloat(tol, 'g', -1, 64))
	}
	w.p("}")
	w.p("}")
	w.p("")
}

// tolerance is the relative tolerance of k's Sample, and a sentence saying
// why: 0 (every device gives the Go function's bits) unless k combines
// floats in a reduction (whose order differs between devices) or calls a
// math function with no correctly rounded device counterpart.
func (g *gen) tolerance(k *kernel) (float64, string) {
	f32 := false
	for _, p := range k.args() {
		if p.slice && p.written && p.t.kind() == types.Float32 {
			f32 = true
		}
	}
	if k.result != nil && k.result.goName() == "float32" {
		f32 = true
	}
	var tol float64
	var why []string
	if k.approx {
		if f32 {
			tol = 1e-6
		} else {
			tol = 1e-12
		}
		why = append(why, "it calls math functions that are within a few ulps of Go's, not equal")
	}
	if k.reduce == "+" || k.reduce == "*" {
		if k.result.isFloat() {
			if k.result.goName() == "float32" {
				tol = max(tol, 1e-4)
			} else {
				tol = max(tol, 1e-10)
			}
			why = append(why, "its float "+map[string]string{"+": "sums", "*": "products"}[k.reduce]+" are combined in another order on each device")
		}
	}
	for _, p := range k.args() {
		if op := k.reduceArrays[p]; p.t.isFloat() && (op == "+" || op == "*") {
			if p.t.kind() == types.Float32 {
				tol = max(tol, 1e-4)
			} else {
				tol = max(tol, 1e-10)
			}
			why = append(why, "the float "+map[string]string{"+": "sums", "*": "products"}[op]+" into "+p.name+" are combined in another order on each device")
		}
	}
	if tol == 0 {
		return 0, " Tol 0: every device gives the Go function's bits."
	}
	return tol, fmt.Sprintf(" Tol %g: %s.", tol, strings.Join(why, "; "))
}

func identOf(e ast.Expr) *ast.Ident { return ast.Unparen(e).(*ast.Ident) }

func isDimOf(k *kernel, p *param) bool {
	for _, d := range k.dims {
		if d == p {
			return true
		}
	}
	return false
}

// sampleArg is the device.Arg of scalar parameter p in a Sample.
func sampleArg(p *param) string {
	switch {
	case p.t.isBool():
		return "gomptrt.Int(int64(gomptrt.Bool(" + p.name + ")))"
	case p.t.goName() == "float32":
		return "gomptrt.Float32(" + p.name + ")"
	case p.t.goName() == "float64":
		return "gomptrt.Float64(" + p.name + ")"
	}
	return "gomptrt.Int(int64(" + p.name + "))"
}
