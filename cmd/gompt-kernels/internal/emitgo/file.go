// Package emitgo writes the generated Go file from the kernels' plans:
// each device.Kernel, its Go image (host:0 and the initial device run
// it), its sample, and the typed launchers.
package emitgo

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/types"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
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
	head.WriteString(ir.GeneratedHeader + "\n")
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
	if _, ok := w.imports["unsafe"]; ok {
		// a kernel's lanes function may take its bases and then reach
		// every element through a row: the import stays used whatever
		// the file's kernels write
		head.WriteString("var _ unsafe.Pointer\n\n")
	}
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

// GoFile is the package's generated Go file: per kernel, its variable, its
// Go image, its Sample and (without -launchers) its launcher.
func GoFile(g *ir.Program, out ir.Output) ([]byte, error) {
	w := &goWriter{imports: map[string]string{ir.DevicePkg: "gomptdevice", ir.RtPkg: "gomptrt"}, name: ir.GoFileName}
	embed := false
	for _, k := range g.Kernels {
		kernelVar(g, w, k, out)
		if _, ok := out[k.Entry+".cl"]; ok {
			embed = true
		}
		hostImage(g, w, k)
		sample(g, w, k)
		if g.LaunchDir == "" {
			w.imports[ir.TargetPkg] = "gompttarget"
			launcher(g, w, k, "")
		}
	}
	if embed {
		w.imports["embed"] = "_"
	}
	return w.file(g.P.Name, "package "+g.P.Path)
}

// LauncherFile is the -launchers package's file.
func LauncherFile(g *ir.Program) ([]byte, error) {
	w := &goWriter{imports: map[string]string{ir.RtPkg: "gomptrt", ir.TargetPkg: "gompttarget", g.P.Path: "gomptkernels"}}
	for _, k := range g.Kernels {
		launcher(g, w, k, "gomptkernels.")
	}
	return w.file(g.LaunchName, "package "+g.P.Path)
}

func goIdent(prefix, name string) string { return prefix + ir.UpperFirst(name) }

func kernelVar(g *ir.Program, w *goWriter, k *ir.Kernel, out ir.Output) {
	dims := make([]string, len(k.Dims))
	for i, d := range k.Dims {
		dims[i] = d.Name
	}
	what := "map kernel"
	if k.Team > 0 {
		what = fmt.Sprintf("team kernel (team=%d)", k.Team)
	}
	if k.Reduce != "" {
		what = "reduction (reduce=" + k.Reduce + ")"
	}
	w.p("// %s is the gompt %s of %s (%s), over [0, %s).", k.VarName, what, k.Fn.Name, g.Rel(k.Decl.Pos()), strings.Join(dims, ")x[0, "))
	if k.Reduce != "" {
		w.p("// Its last parameter, partial, receives one %s per team (Shape.Teams of them), to combine on the host; %s does.", k.Result.GoName(), k.RunName)
	}
	// Params are named as the OpenCL C entry's arguments, which the
	// OpenCL plugin checks by name: a Go name C cannot take (global,
	// min) is the entry's (global_) in Params and their Lens too.
	_, cnames := ir.EntryParams(k)
	var renamed []string
	for _, p := range k.Args() {
		if cnames[p] != p.Name {
			renamed = append(renamed, p.Name+" is "+cnames[p])
		}
	}
	if len(renamed) > 0 {
		w.p("// Its Params name the parameters as its OpenCL C does, where OpenCL C cannot take the Go name: %s.", strings.Join(renamed, ", "))
	}
	w.p("var %s = &gomptdevice.Kernel{", k.VarName)
	w.p("Name: %q,", k.Name)
	w.p("Params: []gomptdevice.Param{")
	for _, p := range k.Args() {
		if p.Slice {
			w.p("{Name: %q, Kind: gomptdevice.ParamBuffer, Elem: gomptdevice.%s, Len: %q},", cnames[p], p.T.ElemKind(), k.LenString(p, cnames))
		} else {
			w.p("{Name: %q, Kind: gomptdevice.%s},", cnames[p], p.T.ParamKind())
		}
	}
	if k.Reduce != "" {
		w.p("{Name: \"partial\", Kind: gomptdevice.ParamBuffer, Elem: gomptdevice.%s, Len: \"Shape.Teams\"},", k.Result.ElemKind())
	}
	w.p("},")
	w.p("Dims: %d,", len(k.Dims))
	extents := make([]string, len(k.Dims))
	for i, d := range k.Dims {
		extents[i] = strconv.Itoa(slices.Index(k.Args(), d))
	}
	w.p("Extents: []int{%s},", strings.Join(extents, ", "))
	if len(k.Bounds) > 0 {
		bounds := make([]string, len(k.Bounds))
		for i, e := range k.Bounds {
			bounds[i] = strconv.Quote(k.ExprString(e, cnames))
		}
		slices.Sort(bounds)
		w.p("Bounds: []string{%s},", strings.Join(bounds, ", "))
	}
	if len(k.Work) > 0 {
		w.p("Work: %q,", k.WorkString(cnames))
	}
	if k.Reduce != "" {
		w.p("MaxThreads: gomptrt.MaxThreads,")
	}
	if len(k.Sites) > 0 {
		w.p("Faults: []gomptdevice.FaultSite{")
		for _, s := range k.Sites {
			if s.Unsigned {
				w.p("{Kind: gomptdevice.%s, Pos: %q, Unsigned: true},", s.Kind, s.Pos)
			} else {
				w.p("{Kind: gomptdevice.%s, Pos: %q},", s.Kind, s.Pos)
			}
		}
		w.p("},")
	}
	if k.Team > 0 {
		w.p("MaxThreads: %d,", k.Team)
	}
	if len(k.Needs) > 0 {
		w.p("Needs: []gomptdevice.Need{")
		for _, n := range k.Needs {
			amount := ""
			if n.Amount != 0 {
				amount = fmt.Sprintf(" Amount: %d,", n.Amount)
			}
			w.p("{Kind: gomptdevice.%s,%s Use: %q, Pos: %q},", n.Kind, amount, n.Use, n.Pos)
		}
		w.p("},")
	}
	w.p("Images: []gomptdevice.Image{")
	w.p("{Kind: gomptdevice.ImageHost, Entry: %q, Host: %s},", k.Entry, goIdent("gomptHost", k.Fn.Name))
	if _, ok := out[k.Entry+".cl"]; ok {
		w.p("{Kind: %q, Entry: %q, Source: %s, Options: %q},", ir.ImageC, k.Entry, goIdent("gomptCL", k.Fn.Name), ir.ClOptions)
	}
	if _, ok := out[k.Entry+".ptx"]; ok {
		w.p("{Kind: %q, Entry: %q, Source: %s},", ir.ImagePTX, k.Entry, goIdent("gomptPTX", k.Fn.Name))
	}
	w.p("},")
	w.p("Sample: %s,", goIdent("gomptSample", k.Fn.Name))
	w.p("}")
	w.p("")
	if _, ok := out[k.Entry+".cl"]; ok {
		w.p("//go:embed %s.cl", k.Entry)
		w.p("var %s string", goIdent("gomptCL", k.Fn.Name))
		w.p("")
	}
	if _, ok := out[k.Entry+".ptx"]; ok {
		w.p("//go:embed %s.ptx", k.Entry)
		w.p("var %s string", goIdent("gomptPTX", k.Fn.Name))
		w.p("")
	}
}

// lenArgs are the arguments of gomptrt.Len for buffer p, in terms of the
// Go variables named as the kernel's parameters: a product's terms, or the
// sum as one Go expression.
func lenArgs(k *ir.Kernel, p *ir.Param) string {
	term := func(t string) string {
		q := ir.ParamNamed(k, t)
		switch {
		case q == nil:
			return t
		case q.T.GoName() == "int":
			return q.Name
		}
		return "int(" + q.Name + ")"
	}
	if terms, ok := k.Lens[p].Product(); ok {
		return ir.LenExpr{{Terms: terms}}.Format(term, ", ", "", "")
	}
	return k.Lens[p].Format(term, "*", "+", "-")
}

// hostArgs declares the kernel's parameters (less the indices) as Go
// locals from a *device.HostArgs named a.
func hostArgs(w *goWriter, k *ir.Kernel, a string) {
	for j, p := range k.Args() {
		if p.Slice {
			continue
		}
		var v string
		switch p.T.ParamKind() {
		case "ParamFloat32":
			v = a + ".Float32(" + ir.Itoa(j) + ")"
		case "ParamFloat64":
			v = a + ".Float64(" + ir.Itoa(j) + ")"
		default:
			v = a + ".Int(" + ir.Itoa(j) + ")"
			switch {
			case p.T.IsBool():
				v += " != 0"
			case p.T.GoName() != "int":
				v = p.T.GoName() + "(" + v + ")"
			}
		}
		w.p("%s := %s", p.Name, v)
	}
	for j, p := range k.Args() {
		if p.Slice {
			w.p("%s := gomptrt.View[%s](%s.Bufs[%d], gomptrt.Len(%s))", p.Name, p.T.GoName(), a, j, lenArgs(k, p))
		}
	}
}

// hostImage writes the kernel's Go image: the Go function's body, pasted
// into loops over the team's range (see gobody).
func hostImage(g *ir.Program, w *goWriter, k *ir.Kernel) {
	name := goIdent("gomptHost", k.Fn.Name)
	w.p("// %s is %s's Go image: the body of %s at each point of the team's range.", name, k.VarName, k.Fn.Name)
	team := "_"
	if k.Reduce != "" {
		team = "gomptTeam"
	}
	if len(k.Decl.Body.List) == 0 && k.Reduce == "" {
		w.p("func %s(*gomptdevice.HostArgs, gomptdevice.Range, int, int) {} // an empty body", name)
		w.p("")
		return
	}
	w.p("func %s(gomptA *gomptdevice.HostArgs, gomptR gomptdevice.Range, %s, _ int) {", name, team)
	hostArgs(w, k, "gomptA")
	if k.Team > 0 {
		teamHost(g, w, k)
		w.p("}")
		w.p("")
		return
	}
	merge := reduceArraysHost(g, w, k)
	// The base addresses of the buffers the body reaches without a
	// bounds test (in a lockstep image, its lanes function's).
	ls, resliced := k.Lanes, k.Resliced
	for _, p := range k.Args() {
		if p.Slice && viaBase(g, k, p) && ls == nil && !resliced[p] {
			w.imports["unsafe"] = "unsafe"
			w.p("%s := unsafe.Pointer(unsafe.SliceData(%s))", base(p), p.Name)
		}
	}
	used := map[*types.Var]bool{}
	var lanesFn strings.Builder
	for d := range k.Dims {
		w.p("gomptLo%d, gomptHi%d := gomptR.Clamp(%d, %s)", d, d, d, k.Dims[d].Name)
	}
	for _, p := range k.Args() {
		if resliced[p] {
			w.p("%s = %s[:gomptHi0] // so that Go drops its bounds tests of %s[%s] in the loop below", p.Name, p.Name, p.Name, k.Index[0].Name)
		}
	}
	if k.Reduce == "" {
		for d := len(k.Dims) - 1; d >= 1; d-- {
			ix := k.Index[d].Name
			w.p("for %s := gomptLo%d; %s < gomptHi%d; %s++ {", ix, d, ix, d, ix)
		}
		// points writes a loop over dimension 0 from lo to hi running the
		// statements list at each point, through the rows rs (nil for
		// none).
		label := 0
		points := func(lo, hi string, list []ast.Stmt, rs *ir.Rows) {
			body := &gobody{g: g, k: k, w: w, used: used, depth: 0, resliced: resliced, rows: rs}
			l := fmt.Sprintf("gomptPoint%d", label)
			label++
			labelled := false
			body.ret = func() string { labelled = true; return "continue " + l }
			body.copies()
			for _, s := range list {
				body.stmt(s)
				if rs != nil {
					for _, v := range rs.Dead[s] {
						body.line("_ = %s", v.Name())
					}
				}
			}
			ix := k.Index[0].Name
			if rs != nil {
				rowsLoop(body, lo, hi, l, labelled)
				return
			}
			if labelled {
				w.p("%s:", l)
			}
			w.p("for %s := %s; %s < %s; %s++ {", ix, lo, ix, hi, ix)
			w.sb.WriteString(body.sb.String())
			w.p("}")
		}
		if ls != nil {
			emit(ls, g, w, used, &lanesFn)
		} else if k.Split != nil {
			splitLoops(&gobody{g: g, k: k, w: w, used: used}, k.Split, points)
		} else {
			points("gomptLo0", "gomptHi0", k.Decl.Body.List, k.Rows)
		}
		for d := 1; d < len(k.Dims); d++ {
			w.p("}")
		}
	} else {
		reduceHost(g, w, k, used)
	}
	merge()
	// A parameter the body does not use is still declared.
	for _, p := range k.Args() {
		if !used[p.Obj] && !(p.Slice && viaBase(g, k, p) && ls == nil && !resliced[p]) {
			w.p("_ = %s", p.Name)
		}
	}
	w.p("}")
	w.p("")
	w.sb.WriteString(lanesFn.String())
}

// copies makes the pasted body's own copies of the parameters it assigns,
// as a call would.
func (b *gobody) copies() {
	for _, p := range b.k.Params {
		if b.k.Assigned[p.Obj] {
			b.line("%s := %s", p.Name, p.Name)
		}
	}
}

// viaBase reports whether k's image (its loops over points) reaches
// buffer p through its base address: an element proven in range that
// a loop does not reach through a row (plan.RowsOf, plan.LoopRows).
func viaBase(g *ir.Program, k *ir.Kernel, p *ir.Param) bool {
	// The loops: the whole body, or a split's interior and edge.
	type loop struct {
		in   map[ast.Node]bool
		rows *ir.Rows
	}
	var loops []loop
	add := func(list []ast.Stmt, rows *ir.Rows) {
		in := map[ast.Node]bool{}
		for _, s := range list {
			ast.Inspect(s, func(n ast.Node) bool {
				in[n] = true
				return true
			})
		}
		loops = append(loops, loop{in, rows})
	}
	if k.Split != nil {
		add(k.Split.Interior, k.Split.InRows)
		add(k.Split.Edge, k.Split.EdgeRows)
	} else {
		add(k.Decl.Body.List, k.Rows)
	}
	for ix := range k.Proven {
		ix := ix.(*ast.IndexExpr)
		if id, ok := ast.Unparen(ix.X).(*ast.Ident); !ok || g.P.Info.Uses[id] != p.Obj {
			continue
		}
		for _, l := range loops {
			if l.in[ix] && l.rows.Row(ix) == nil && loopRow(k, ix) == nil {
				return true
			}
		}
	}
	return false
}

// loopRow is the row of a counted loop through which the image reaches
// ix (plan.LoopRows), nil for none.
func loopRow(k *ir.Kernel, ix *ast.IndexExpr) *ir.Row {
	for _, rs := range k.LoopRows {
		if r := rs.Row(ix); r != nil {
			return r
		}
	}
	return nil
}

// provenIn reports whether k's body reaches buffer p through an index
// proven in range.
func provenIn(g *ir.Program, k *ir.Kernel, p *ir.Param) bool {
	for ix := range k.Proven {
		if id, ok := ast.Unparen(ix.(*ast.IndexExpr).X).(*ast.Ident); ok && g.P.Info.Uses[id] == p.Obj {
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
func reduceHost(g *ir.Program, w *goWriter, k *ir.Kernel, used map[*types.Var]bool) {
	t := *k.Result
	acc := t.GoName()
	if t.IsFloat() && (k.Reduce == "+" || k.Reduce == "*") {
		acc = "float64"
	}
	id := goIdentity(w, k.Reduce, *k.Result)
	combine := func(a, b string) string {
		switch k.Reduce {
		case "min", "max":
			return k.Reduce + "(" + a + ", " + b + ")"
		}
		return a + " " + k.Reduce + " " + b
	}
	conv := func(v string) string {
		if acc != t.GoName() {
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
		x := k.Index[0].Name
		body.line("{")
		body.depth++
		if u > 0 {
			body.line("%s := %s + %d", x, x, u)
		} else if k.Assigned[k.Index[0].Obj] {
			body.line("%s := %s", x, x)
		}
		for _, p := range k.Params[1:] {
			if k.Assigned[p.Obj] {
				body.line("%s := %s", p.Name, p.Name)
			}
		}
		body.stmts(k.Decl.Body.List)
		body.depth--
		body.line("}")
		w.sb.WriteString(body.sb.String())
		w.p("%s:", l)
		w.p("gomptS%d = %s", s, combine(fmt.Sprintf("gomptS%d", s), conv("gomptV")))
	}
	w.p("gomptPartial := gomptrt.View[%s](gomptA.Bufs[%d], gomptTeam+1)", t.GoName(), len(k.Args()))
	w.p("gomptS0, gomptS1, gomptS2, gomptS3 := %s(%s), %s(%s), %s(%s), %s(%s)", acc, id, acc, id, acc, id, acc, id)
	w.p("var gomptV %s", t.GoName())
	for d := len(k.Dims) - 1; d >= 1; d-- {
		ix := k.Index[d].Name
		w.p("for %s := gomptLo%d; %s < gomptHi%d; %s++ {", ix, d, ix, d, ix)
	}
	x := k.Index[0].Name
	w.p("%s := gomptLo0", x)
	w.p("for ; %s+4 <= gomptHi0; %s += 4 {", x, x)
	for u := range 4 {
		instance(u, u)
	}
	w.p("}")
	w.p("for ; %s < gomptHi0; %s++ {", x, x)
	instance(0, 0)
	w.p("}")
	for d := 1; d < len(k.Dims); d++ {
		w.p("}")
	}
	w.p("gomptPartial[gomptTeam] = %s(%s)", t.GoName(), combine("("+combine("gomptS0", "gomptS1")+")", "("+combine("gomptS2", "gomptS3")+")"))
}

// goIdentity is the reduction's identity as a Go expression of type acc.
func goIdentity(w *goWriter, op string, t ir.Scalar) string {
	switch op {
	case "+":
		return "0"
	case "*":
		return "1"
	}
	isMin := op == "min"
	if t.IsFloat() {
		w.imports["math"] = "gomptmath"
		if isMin {
			return "gomptmath.Inf(1)"
		}
		return "gomptmath.Inf(-1)"
	}
	w.imports["math"] = "gomptmath"
	name := strings.ToUpper(t.GoName()[:1]) + t.GoName()[1:]
	if isMin {
		return "gomptmath.Max" + name
	}
	if !t.Signed() {
		return "0"
	}
	return "gomptmath.Min" + name
}

// sample writes the kernel's Sample: extents for about n points, random
// scalars and buffers, deterministic for (n, seed).
func sample(g *ir.Program, w *goWriter, k *ir.Kernel) {
	name := goIdent("gomptSample", k.Fn.Name)
	tol, why := tolerance(g, k)
	w.p("// %s is %s's Sample: about n points, random arguments.%s", name, k.VarName, why)
	w.p("func %s(gomptN int, gomptSeed int64) gomptdevice.Sample {", name)
	random := false
	for _, p := range k.Args() {
		if p.Slice || !isDimOf(k, p) {
			random = true
		}
	}
	if random {
		w.p("gomptR := gomptrt.Rand(%q, gomptN, gomptSeed)", k.Name)
	} else {
		w.p("_ = gomptSeed")
	}
	sampleFit(w, k)
	shape := "gomptdevice.Shape{Size: gomptExt}"
	if k.Team > 0 {
		// About n threads: n/team teams.
		w.p("gomptExt := gomptrt.Extents(max(gomptN/%d, 1), 1)", k.Team)
		shape = fmt.Sprintf("gomptdevice.Shape{Size: gomptExt, Teams: gomptExt[0], Threads: %d}", k.Team)
	} else {
		w.p("gomptExt := gomptrt.Extents(gomptN, %d)", len(k.Dims))
	}
	if k.Reduce != "" {
		w.p("gomptShape := gomptrt.ReduceShape(gomptExt, %d)", len(k.Dims))
		w.p("gomptExt = gomptShape.Size")
		shape = "gomptShape"
	}
	isDim := map[*ir.Param]int{}
	for i, d := range k.Dims {
		isDim[d] = i + 1
	}
	var bufs, args []string
	for _, p := range k.Args() {
		if p.Slice {
			continue
		}
		if d := isDim[p]; d > 0 {
			w.p("%s := gomptExt[%d]", p.Name, d-1)
		} else {
			switch {
			case p.T.IsBool():
				w.p("%s := gomptR.IntN(2) == 1", p.Name)
			case p.T.IsFloat():
				w.p("%s := %s(0.5 + gomptR.Float64())", p.Name, p.T.GoName())
			default:
				w.p("%s := %s(1 + gomptR.IntN(8))", p.Name, p.T.GoName())
			}
		}
	}
	lo, hi := "0.5", "1.5"
	if k.Reduce == "*" {
		lo, hi = "0.984375", "1.015625"
	}
	for _, p := range k.Args() {
		if !p.Slice {
			bufs = append(bufs, "nil")
			args = append(args, sampleArg(p))
			continue
		}
		args = append(args, "{}")
		n := "gomptrt.Len(" + lenArgs(k, p) + ")"
		if p.T.IsFloat() {
			bufs = append(bufs, fmt.Sprintf("gomptrt.Floats[%s](gomptR, %s, %s, %s)", p.T.GoName(), n, lo, hi))
		} else {
			bufs = append(bufs, fmt.Sprintf("gomptrt.Ints[%s](gomptR, %s, 0, 16)", p.T.GoName(), n))
		}
	}
	if k.Reduce != "" {
		bufs = append(bufs, fmt.Sprintf("gomptrt.Zeros[%s](gomptShape.Teams)", k.Result.GoName()))
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

// sampleFit writes, for a map kernel with a buffer whose length grows
// faster than its points (a product of more extents than it has
// dimensions), the line of its Sample that halves n until its
// buffers take at most kernelrt.SampleBytes (kernelrt.FitSample): their
// lengths at the extents Extents gives n, the other integer parameters at
// 8, the largest a Sample draws. A buffer of n*n*n elements for a 1-D
// kernel of n points took gigabytes at the sizes kerneltest runs.
func sampleFit(w *goWriter, k *ir.Kernel) {
	if k.Team > 0 || k.Reduce != "" {
		return
	}
	grows, used := false, map[string]bool{}
	for _, p := range k.Args() {
		if !p.Slice {
			continue
		}
		for _, prod := range k.Lens[p] {
			extents := 0
			for _, t := range prod.Terms {
				used[t] = true
				if q := ir.ParamNamed(k, t); q != nil && dimIndex(k, q) >= 0 {
					extents++
				}
			}
			if extents > len(k.Dims) { // n*n for n points: more than a buffer a point
				grows = true
			}
		}
	}
	if !grows {
		return
	}
	w.p("gomptN = gomptrt.FitSample(gomptN, func(gomptN int) int64 {")
	w.p("gomptExt := gomptrt.Extents(gomptN, %d)", len(k.Dims))
	for _, p := range k.Args() {
		if p.Slice || !used[p.Name] {
			continue
		}
		if d := dimIndex(k, p); d >= 0 {
			w.p("%s := gomptExt[%d]", p.Name, d)
		} else {
			w.p("%s := %s(8)", p.Name, p.T.GoName())
		}
	}
	var sum []string
	for _, p := range k.Args() {
		if p.Slice {
			sum = append(sum, fmt.Sprintf("gomptrt.Bytes(gomptrt.Len(%s), %d)", lenArgs(k, p), p.T.Bits()/8))
		}
	}
	w.p("return gomptrt.Total(%s)", strings.Join(sum, ", "))
	w.p("})")
}

// dimIndex is p's place among k's extents, -1 where it is not one.
func dimIndex(k *ir.Kernel, p *ir.Param) int {
	for i, d := range k.Dims {
		if d == p {
			return i
		}
	}
	return -1
}

// tolerance is the relative tolerance of k's Sample, and a sentence saying
// why: 0 (every device gives the Go function's bits) unless k combines
// floats in a reduction (whose order differs between devices) or calls a
// math function with no correctly rounded device counterpart.
func tolerance(g *ir.Program, k *ir.Kernel) (float64, string) {
	f32 := false
	for _, p := range k.Args() {
		if p.Slice && p.Written && p.T.Kind() == types.Float32 {
			f32 = true
		}
	}
	if k.Result != nil && k.Result.GoName() == "float32" {
		f32 = true
	}
	var tol float64
	var why []string
	if k.Approx {
		if f32 {
			tol = 1e-6
		} else {
			tol = 1e-12
		}
		why = append(why, "it calls math functions that are within a few ulps of Go's, not equal")
	}
	if k.Reduce == "+" || k.Reduce == "*" {
		if k.Result.IsFloat() {
			if k.Result.GoName() == "float32" {
				tol = max(tol, 1e-4)
			} else {
				tol = max(tol, 1e-10)
			}
			why = append(why, "its float "+map[string]string{"+": "sums", "*": "products"}[k.Reduce]+" are combined in another order on each device")
		}
	}
	for _, p := range k.Args() {
		if op := k.ReduceArrays[p]; p.T.IsFloat() && (op == "+" || op == "*") {
			if p.T.Kind() == types.Float32 {
				tol = max(tol, 1e-4)
			} else {
				tol = max(tol, 1e-10)
			}
			why = append(why, "the float "+map[string]string{"+": "sums", "*": "products"}[op]+" into "+p.Name+" are combined in another order on each device")
		}
	}
	if tol == 0 {
		return 0, " Tol 0: every device gives the Go function's bits."
	}
	return tol, fmt.Sprintf(" Tol %g: %s.", tol, strings.Join(why, "; "))
}

func isDimOf(k *ir.Kernel, p *ir.Param) bool { return dimIndex(k, p) >= 0 }

// sampleArg is the device.Arg of scalar parameter p in a Sample.
func sampleArg(p *ir.Param) string {
	switch {
	case p.T.IsBool():
		return "gomptrt.Int(int64(gomptrt.Bool(" + p.Name + ")))"
	case p.T.GoName() == "float32":
		return "gomptrt.Float32(" + p.Name + ")"
	case p.T.GoName() == "float64":
		return "gomptrt.Float64(" + p.Name + ")"
	}
	return "gomptrt.Int(int64(" + p.Name + "))"
}
