package load

import (
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"strconv"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

var (
	cIdent  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	lenTerm = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*|[0-9]+)$`)
)

// Collect finds the package's //gompt:kernel and //gompt:func functions,
// checks their directives and signatures, and returns them (kernels sorted
// by name). A directive anywhere else is an error.
func Collect(g *ir.Program) {
	attached := map[*ast.Comment]bool{}
	for _, f := range g.P.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Doc == nil {
				continue
			}
			var kdir, fdir, vdir *ast.Comment
			for _, c := range fd.Doc.List {
				switch {
				case c.Text == ir.VariantDirective || strings.HasPrefix(c.Text, ir.VariantDirective+" "):
					if vdir != nil {
						g.Errs.Add(c.Pos(), "a second //gompt:variant directive on %s; a kernel is a variant of one kernel", fd.Name.Name)
					}
					vdir = c
					attached[c] = true
				case c.Text == ir.KernelDirective || strings.HasPrefix(c.Text, ir.KernelDirective+" "):
					if kdir != nil {
						g.Errs.Add(c.Pos(), "a second //gompt:kernel directive on %s", fd.Name.Name)
					}
					kdir = c
					attached[c] = true
				case c.Text == ir.FuncDirective || strings.HasPrefix(c.Text, ir.FuncDirective+" "):
					fdir = c
					attached[c] = true
				}
			}
			if vdir != nil && kdir == nil {
				g.Errs.Add(vdir.Pos(), "//gompt:variant on %s, which is not marked //gompt:kernel; a variant is a kernel (//gompt:kernel, then //gompt:variant of=BASE device=...)", fd.Name.Name)
			}
			if kdir == nil && fdir == nil {
				continue
			}
			obj, _ := g.P.Info.Defs[fd.Name].(*types.Func)
			if kdir != nil && fdir != nil {
				g.Errs.Add(fdir.Pos(), "%s is marked both //gompt:kernel and //gompt:func; a kernel cannot be called from device code: move the shared code into a //gompt:func helper", fd.Name.Name)
				if obj != nil {
					g.Refused[obj] = ir.FuncDirective
				}
				continue
			}
			if fdir != nil {
				if rest, _, _ := strings.Cut(strings.TrimPrefix(fdir.Text, ir.FuncDirective), " //"); strings.TrimSpace(rest) != "" {
					g.Errs.Add(fdir.Pos(), "//gompt:func takes no arguments")
				}
			}
			f := newFn(g, fd)
			if f == nil {
				if obj != nil {
					g.Refused[obj] = ir.FuncDirective
					if kdir != nil {
						g.Refused[obj] = ir.KernelDirective
					}
				}
				continue
			}
			if kdir != nil {
				n := len(g.Kernels)
				newKernel(g, f, kdir)
				if len(g.Kernels) == n {
					g.Refused[obj] = ir.KernelDirective
				} else if vdir != nil {
					g.Kernels[n].LaunchPlan().VariantDir = vdir
				}
			} else {
				g.Funcs[f.Obj] = f
			}
		}
	}
	for _, f := range g.P.Files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "//gompt:") && !attached[c] {
					word, _, _ := strings.Cut(c.Text, " ")
					if word != ir.KernelDirective && word != ir.FuncDirective && word != ir.VariantDirective {
						g.Errs.Add(c.Pos(), "unknown directive %s; gompt-kernels knows //gompt:kernel, //gompt:variant and //gompt:func", word)
					} else {
						g.Errs.Add(c.Pos(), "%s must be in the doc comment of a top-level function (directly above func, no blank line between)", word)
					}
				}
			}
		}
	}
}

// newFn checks fd's signature: a plain function (no receiver, no type
// parameters, a body) whose parameters are scalars of the subset or slices
// of them, returning nothing or one scalar.
func newFn(g *ir.Program, fd *ast.FuncDecl) *ir.Fn {
	obj, _ := g.P.Info.Defs[fd.Name].(*types.Func)
	if obj == nil {
		return nil // a type error the compiler reports
	}
	switch {
	case fd.Recv != nil:
		g.Errs.Unsupported(fd.Pos(), "a method ("+fd.Name.Name+")", "mark a top-level function")
		return nil
	case fd.Type.TypeParams != nil:
		g.Errs.Unsupported(fd.Type.TypeParams.Pos(), "a generic function ("+fd.Name.Name+")", "")
		return nil
	case fd.Body == nil:
		g.Errs.Unsupported(fd.Pos(), "a function without a body ("+fd.Name.Name+")", "")
		return nil
	}
	f := &ir.Fn{Decl: fd, Obj: obj, Name: fd.Name.Name, Assigned: map[*types.Var]bool{}, ByObj: map[*types.Var]*ir.Param{}}
	sig := obj.Type().(*types.Signature)
	if sig.Variadic() {
		g.Errs.Unsupported(fd.Type.Params.Pos(), "a variadic parameter", "")
		return nil
	}
	ok := true
	for i := 0; i < sig.Params().Len(); i++ {
		v := sig.Params().At(i)
		p := &ir.Param{Obj: v, Name: v.Name(), Pos: v.Pos()}
		t := v.Type()
		if s, isSlice := t.(*types.Slice); isSlice {
			p.Slice = true
			t = s.Elem()
		}
		sc, isScalar := ir.ScalarOf(t)
		switch {
		case !isScalar:
			g.Errs.Unsupported(v.Pos(), "parameter "+v.Name()+" of type "+g.TypeString(v.Type()), ir.TypeHint(v.Type()))
			ok = false
		case p.Slice && sc.IsBool():
			g.Errs.Unsupported(v.Pos(), "parameter "+v.Name()+" of type []bool", "use []uint8 holding 0 and 1")
			ok = false
		case v.Name() == "" || v.Name() == "_":
			g.Errs.Add(v.Pos(), "parameter %d of %s has no name; every parameter of a gompt kernel or helper needs one", i, fd.Name.Name)
			ok = false
		}
		p.T = sc
		f.Params = append(f.Params, p)
		f.ByObj[v] = p
	}
	switch sig.Results().Len() {
	case 0:
	case 1:
		r := sig.Results().At(0)
		sc, isScalar := ir.ScalarOf(r.Type())
		if !isScalar {
			g.Errs.Unsupported(fd.Type.Results.Pos(), "a result of type "+g.TypeString(r.Type()), ir.TypeHint(r.Type()))
			ok = false
		} else if r.Name() != "" {
			g.Errs.Unsupported(fd.Type.Results.Pos(), "a named result", "return the value")
			ok = false
		}
		f.Result = &sc
	default:
		g.Errs.Unsupported(fd.Type.Results.Pos(), "more than one result ("+fd.Name.Name+")", "return one value; write a helper per result")
		ok = false
	}
	if !ok {
		return nil
	}
	return f
}

// newKernel parses the //gompt:kernel directive of f:
//
//	//gompt:kernel dims=nx[,ny[,nz]] [reduce=+|*|min|max] [len(buf)=EXPR ...] [name=NAME] [var=VAR]
func newKernel(g *ir.Program, f *ir.Fn, dir *ast.Comment) {
	k := &ir.Kernel{Fn: f, DirPos: dir.Pos(), Lens: map[*ir.Param]ir.LenExpr{}, Maps: map[*ir.Param]string{}, Proven: map[ast.Expr]bool{}}
	f.Kernel = k
	byName := map[string]*ir.Param{}
	for _, p := range f.Params {
		byName[p.Name] = p
	}
	bad := false
	fail := func(format string, args ...any) {
		g.Errs.Add(dir.Pos(), "//gompt:kernel: "+format, args...)
		bad = true
	}
	lenExprs := map[*ir.Param]string{}
	for _, kv := range ir.DirectiveFields(dir.Text, ir.KernelDirective, "dims, team, reduce, reduce(BUF), len(BUF), arg(PARAM), check, name and var", fail) {
		key, val := kv[0], kv[1]
		switch {
		case key == "dims":
			names := strings.Split(val, ",")
			if len(names) > 3 {
				fail("dims=%s names %d extents; a kernel has 1 to 3 dimensions", val, len(names))
				continue
			}
			for _, name := range names {
				p := byName[name]
				if p == nil || p.Slice || p.T.Kind() != types.Int {
					fail("dims=%s: %q is not an int parameter of %s", val, name, f.Name)
					continue
				}
				k.Dims = append(k.Dims, p)
			}
		case key == "reduce":
			switch val {
			case "+", "*", "min", "max":
				k.Reduce = val
			default:
				fail("reduce=%s: want reduce=+, reduce=*, reduce=min or reduce=max", val)
			}
		case key == "check":
			switch val {
			case "on":
			case "off":
				k.Nocheck = true
			default:
				fail("check=%s: want check=on (the default: indices and divisors checked as Go checks them) or check=off", val)
			}
		case strings.HasPrefix(key, "reduce(") && strings.HasSuffix(key, ")"):
			buf := key[7 : len(key)-1]
			p := byName[buf]
			if p == nil || !p.Slice {
				fail("%s=%s: %q is not a slice parameter of %s", key, val, buf, f.Name)
				continue
			}
			switch val {
			case "+", "*", "min", "max":
			default:
				fail("%s=%s: want %s=+, %s=*, %s=min or %s=max", key, val, key, key, key, key)
				continue
			}
			if k.ReduceArrays == nil {
				k.ReduceArrays = map[*ir.Param]string{}
			}
			k.ReduceArrays[p] = val
		case key == "team":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > ir.MaxTeamThreads {
				fail("team=%s: want the number of threads per team, 1 to %d", val, ir.MaxTeamThreads)
				continue
			}
			k.Team = n
		case key == "name":
			if !cIdent.MatchString(val) {
				fail("name=%s: a kernel name is a C identifier (letters, digits, _; not starting with a digit)", val)
			}
			k.Name = val
		case key == "var":
			if !token.IsIdentifier(val) {
				fail("var=%s is not a Go identifier", val)
			}
			k.VarName = val
		case strings.HasPrefix(key, "len(") && strings.HasSuffix(key, ")"):
			buf := key[4 : len(key)-1]
			p := byName[buf]
			if p == nil || !p.Slice {
				fail("%s=%s: %q is not a slice parameter of %s", key, val, buf, f.Name)
				continue
			}
			lenExprs[p] = val
		case strings.HasPrefix(key, "arg(") && strings.HasSuffix(key, ")"):
			if !argDirective(g, k, key, val, byName) {
				bad = true
			}
		default:
			fail("unknown key %q; the keys are dims, team, reduce, reduce(BUF), len(BUF), arg(PARAM), check, name and var", key)
		}
	}
	if len(k.Dims) == 0 && !bad {
		fail("no dims=; name the extents of the iteration space, as in dims=n or dims=nx,ny")
	}
	if bad {
		return
	}
	// The first len(dims) parameters are the point's indices.
	for i := range k.Dims {
		if i >= len(f.Params) || f.Params[i].Slice || f.Params[i].T.Kind() != types.Int {
			g.Errs.Add(f.Decl.Type.Params.Pos(), "kernel %s: its first %d parameters must be the point's int indices (one per extent of dims=), then the extents and the other parameters", f.Name, len(k.Dims))
			return
		}
		k.Index = append(k.Index, f.Params[i])
	}
	for _, d := range k.Dims {
		for _, ix := range k.Index {
			if d == ix {
				g.Errs.Add(dir.Pos(), "//gompt:kernel: dims=: %s is one of the point's indices, not an extent; the extents are int parameters after the indices", d.Name)
				return
			}
		}
	}
	for i, p := range f.Params {
		if i >= len(k.Dims) && p.Name == "partial" && k.Reduce != "" {
			g.Errs.Add(p.Pos, "kernel %s: a reduction's parameter cannot be named partial (the generated kernel's buffer of per-team results)", f.Name)
			return
		}
	}
	if k.Team > 0 && !teamKernel(g, k) {
		return
	}
	if len(k.ReduceArrays) > 0 && !reduceArrayKernel(g, k, lenExprs) {
		return
	}
	if k.Reduce == "" && f.Result != nil {
		g.Errs.Add(f.Decl.Type.Results.Pos(), "kernel %s returns a value but has no reduce=; a map kernel returns nothing, a reduction (reduce=+, *, min or max) returns the point's value", f.Name)
		return
	}
	if k.Reduce != "" && (f.Result == nil || f.Result.IsBool()) {
		g.Errs.Add(f.Decl.Type.Params.Pos(), "kernel %s has reduce=%s but does not return a number: a reduction returns the point's value", f.Name, k.Reduce)
		return
	}
	// Buffer lengths: the product of the extents, or len(buf)=EXPR.
	var extents []string
	for _, d := range k.Dims {
		extents = append(extents, d.Name)
	}
	for _, p := range k.Args() {
		if !p.Slice {
			continue
		}
		expr, ok := lenExprs[p]
		if !ok {
			k.Lens[p] = ir.LenExpr{{Terms: extents}}
			continue
		}
		e, ok := parseLen(g, k, p, expr, byName)
		if !ok {
			return
		}
		k.Lens[p] = e
	}
	if k.Name == "" {
		k.Name = f.Name
	}
	k.Entry = "gompt_" + k.Name
	if k.VarName == "" {
		k.VarName = f.Name + "Kernel"
	}
	k.RunName = "run" + ir.UpperFirst(k.VarName)
	if k.VarName == f.Name+"Kernel" {
		k.RunName = "run" + ir.UpperFirst(f.Name)
	}
	if ir.IsExported(k.VarName) {
		k.RunName = "R" + k.RunName[1:]
	}
	g.Kernels = append(g.Kernels, k)
}

// parseLen parses len(p)=expr: a sum and difference of products of
// whole numbers and signed integer parameters (not the indices), with Go's
// precedence and no spaces or parentheses; a mistake is an error at the
// directive.
func parseLen(g *ir.Program, k *ir.Kernel, p *ir.Param, expr string, byName map[string]*ir.Param) (ir.LenExpr, bool) {
	bad := func(format string, args ...any) (ir.LenExpr, bool) {
		g.Errs.Add(k.DirPos, "//gompt:kernel: len(%s)=%s: "+format, append([]any{p.Name, expr}, args...)...)
		return nil, false
	}
	var e ir.LenExpr
	sub := false
	for rest := expr; ; {
		end := strings.IndexAny(rest, "+-")
		prod := rest
		if end >= 0 {
			prod = rest[:end]
		}
		terms := strings.Split(prod, "*")
		for _, t := range terms {
			if !lenTerm.MatchString(t) {
				return bad("%q is not a term; a length is a sum or difference (+, -) of products (*) of whole numbers and signed integer parameters, as rows+1 or m*k-1", t)
			}
			if t[0] >= '0' && t[0] <= '9' {
				if _, err := strconv.ParseInt(t, 10, 64); err != nil {
					return bad("%q is not a whole number of an int64", t)
				}
				continue
			}
			q := byName[t]
			if q == nil || q.Slice || !q.T.IsInt() || q.T.Bits() == 64 && !q.T.Signed() || ir.IsIndex(k, q) {
				return bad("%q is not a signed integer parameter of %s (the indices do not count)", t, k.Fn.Name)
			}
		}
		e = append(e, ir.LenProd{Sub: sub, Terms: terms})
		if end < 0 {
			return e, true
		}
		sub = rest[end] == '-'
		rest = rest[end+1:]
	}
}
