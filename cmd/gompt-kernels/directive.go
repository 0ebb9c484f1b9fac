package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	kernelDirective  = "//gompt:kernel"
	funcDirective    = "//gompt:func"
	variantDirective = "//gompt:variant" // variant.go
)

var (
	cIdent  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	lenTerm = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*|[0-9]+)$`)
)

// collect finds the package's //gompt:kernel and //gompt:func functions,
// checks their directives and signatures, and returns them (kernels sorted
// by name). A directive anywhere else is an error.
func (g *gen) collect() {
	attached := map[*ast.Comment]bool{}
	for _, f := range g.p.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Doc == nil {
				continue
			}
			var kdir, fdir, vdir *ast.Comment
			for _, c := range fd.Doc.List {
				switch {
				case c.Text == variantDirective || strings.HasPrefix(c.Text, variantDirective+" "):
					if vdir != nil {
						g.errs.add(c.Pos(), "a second //gompt:variant directive on %s; a kernel is a variant of one kernel", fd.Name.Name)
					}
					vdir = c
					attached[c] = true
				case c.Text == kernelDirective || strings.HasPrefix(c.Text, kernelDirective+" "):
					if kdir != nil {
						g.errs.add(c.Pos(), "a second //gompt:kernel directive on %s", fd.Name.Name)
					}
					kdir = c
					attached[c] = true
				case c.Text == funcDirective || strings.HasPrefix(c.Text, funcDirective+" "):
					fdir = c
					attached[c] = true
				}
			}
			if vdir != nil && kdir == nil {
				g.errs.add(vdir.Pos(), "//gompt:variant on %s, which is not marked //gompt:kernel; a variant is a kernel (//gompt:kernel, then //gompt:variant of=BASE device=...)", fd.Name.Name)
			}
			if kdir == nil && fdir == nil {
				continue
			}
			obj, _ := g.p.info.Defs[fd.Name].(*types.Func)
			if kdir != nil && fdir != nil {
				g.errs.add(fdir.Pos(), "%s is marked both //gompt:kernel and //gompt:func; a kernel cannot be called from device code: move the shared code into a //gompt:func helper", fd.Name.Name)
				if obj != nil {
					g.refused[obj] = funcDirective
				}
				continue
			}
			if fdir != nil {
				if rest, _, _ := strings.Cut(strings.TrimPrefix(fdir.Text, funcDirective), " //"); strings.TrimSpace(rest) != "" {
					g.errs.add(fdir.Pos(), "//gompt:func takes no arguments")
				}
			}
			f := g.newFn(fd)
			if f == nil {
				if obj != nil {
					g.refused[obj] = funcDirective
					if kdir != nil {
						g.refused[obj] = kernelDirective
					}
				}
				continue
			}
			if kdir != nil {
				n := len(g.kernels)
				g.newKernel(f, kdir)
				if len(g.kernels) == n {
					g.refused[obj] = kernelDirective
				} else if vdir != nil {
					g.kernels[n].launchPlan().variantDir = vdir
				}
			} else {
				g.funcs[f.obj] = f
			}
		}
	}
	for _, f := range g.p.files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "//gompt:") && !attached[c] {
					word, _, _ := strings.Cut(c.Text, " ")
					if word != kernelDirective && word != funcDirective && word != variantDirective {
						g.errs.add(c.Pos(), "unknown directive %s; gompt-kernels knows //gompt:kernel, //gompt:variant and //gompt:func", word)
					} else {
						g.errs.add(c.Pos(), "%s must be in the doc comment of a top-level function (directly above func, no blank line between)", word)
					}
				}
			}
		}
	}
}

// newFn checks fd's signature: a plain function (no receiver, no type
// parameters, a body) whose parameters are scalars of the subset or slices
// of them, returning nothing or one scalar.
func (g *gen) newFn(fd *ast.FuncDecl) *fn {
	obj, _ := g.p.info.Defs[fd.Name].(*types.Func)
	if obj == nil {
		return nil // a type error the compiler reports
	}
	switch {
	case fd.Recv != nil:
		g.errs.unsupported(fd.Pos(), "a method ("+fd.Name.Name+")", "mark a top-level function")
		return nil
	case fd.Type.TypeParams != nil:
		g.errs.unsupported(fd.Type.TypeParams.Pos(), "a generic function ("+fd.Name.Name+")", "")
		return nil
	case fd.Body == nil:
		g.errs.unsupported(fd.Pos(), "a function without a body ("+fd.Name.Name+")", "")
		return nil
	}
	f := &fn{decl: fd, obj: obj, name: fd.Name.Name, assigned: map[*types.Var]bool{}, byObj: map[*types.Var]*param{}}
	sig := obj.Type().(*types.Signature)
	if sig.Variadic() {
		g.errs.unsupported(fd.Type.Params.Pos(), "a variadic parameter", "")
		return nil
	}
	ok := true
	for i := 0; i < sig.Params().Len(); i++ {
		v := sig.Params().At(i)
		p := &param{obj: v, name: v.Name(), pos: v.Pos()}
		t := v.Type()
		if s, isSlice := t.(*types.Slice); isSlice {
			p.slice = true
			t = s.Elem()
		}
		sc, isScalar := scalarOf(t)
		switch {
		case !isScalar:
			g.errs.unsupported(v.Pos(), "parameter "+v.Name()+" of type "+g.typeString(v.Type()), typeHint(v.Type()))
			ok = false
		case p.slice && sc.isBool():
			g.errs.unsupported(v.Pos(), "parameter "+v.Name()+" of type []bool", "use []uint8 holding 0 and 1")
			ok = false
		case v.Name() == "" || v.Name() == "_":
			g.errs.add(v.Pos(), "parameter %d of %s has no name; every parameter of a gompt kernel or helper needs one", i, fd.Name.Name)
			ok = false
		}
		p.t = sc
		f.params = append(f.params, p)
		f.byObj[v] = p
	}
	switch sig.Results().Len() {
	case 0:
	case 1:
		r := sig.Results().At(0)
		sc, isScalar := scalarOf(r.Type())
		if !isScalar {
			g.errs.unsupported(fd.Type.Results.Pos(), "a result of type "+g.typeString(r.Type()), typeHint(r.Type()))
			ok = false
		} else if r.Name() != "" {
			g.errs.unsupported(fd.Type.Results.Pos(), "a named result", "return the value")
			ok = false
		}
		f.result = &sc
	default:
		g.errs.unsupported(fd.Type.Results.Pos(), "more than one result ("+fd.Name.Name+")", "return one value; write a helper per result")
		ok = false
	}
	if !ok {
		return nil
	}
	return f
}

// typeHint says what to use instead of an unsupported type.
func typeHint(t types.Type) string {
	switch u := t.(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return "strings are not device data"
		case u.Info()&types.IsComplex != 0:
			return "use two float slices"
		case u.Kind() == types.Uintptr || u.Kind() == types.UnsafePointer:
			return "pointers are not device data"
		}
	case *types.Named, *types.Alias:
		if _, ok := t.Underlying().(*types.Basic); ok {
			return "use its underlying type " + t.Underlying().String()
		}
		return "kernels take bool, int, int8-int64, uint8-uint64, float32 and float64 scalars and slices of them"
	case *types.Pointer:
		return "pointers are not device data; pass a slice"
	case *types.Map:
		return "maps are not device data"
	case *types.Slice:
		return "slices of bool, integer and float types only"
	case *types.Array:
		return "arrays are not supported; pass a slice"
	case *types.Chan:
		return "channels are not device data"
	case *types.Signature:
		return "function values are not supported; call a //gompt:func helper"
	case *types.Struct:
		return "structs are not supported; pass one slice per field"
	case *types.Interface:
		return "interfaces are not device data"
	}
	return "kernels take bool, int, int8-int64, uint8-uint64, float32 and float64 scalars and slices of them"
}

// newKernel parses the //gompt:kernel directive of f:
//
//	//gompt:kernel dims=nx[,ny[,nz]] [reduce=+|*|min|max] [len(buf)=EXPR ...] [name=NAME] [var=VAR]
func (g *gen) newKernel(f *fn, dir *ast.Comment) {
	k := &kernel{fn: f, dirPos: dir.Pos(), lens: map[*param]lenExpr{}, maps: map[*param]string{}, proven: map[ast.Expr]bool{}}
	f.kernel = k
	byName := map[string]*param{}
	for _, p := range f.params {
		byName[p.name] = p
	}
	bad := false
	fail := func(format string, args ...any) {
		g.errs.add(dir.Pos(), "//gompt:kernel: "+format, args...)
		bad = true
	}
	seen := map[string]bool{}
	lenExprs := map[*param]string{}
	text := strings.TrimPrefix(dir.Text, kernelDirective)
	if i := strings.Index(text, " //"); i >= 0 { // a comment after the directive
		text = text[:i]
	}
	for _, field := range strings.Fields(text) {
		key, val, ok := strings.Cut(field, "=")
		if !ok || val == "" {
			fail("%q is not KEY=VALUE; the keys are dims, team, reduce, reduce(BUF), len(BUF), arg(PARAM), check, name and var", field)
			continue
		}
		if seen[key] {
			fail("%s given twice", key)
			continue
		}
		seen[key] = true
		switch {
		case key == "dims":
			names := strings.Split(val, ",")
			if len(names) > 3 {
				fail("dims=%s names %d extents; a kernel has 1 to 3 dimensions", val, len(names))
				continue
			}
			for _, name := range names {
				p := byName[name]
				if p == nil || p.slice || p.t.kind() != types.Int {
					fail("dims=%s: %q is not an int parameter of %s", val, name, f.name)
					continue
				}
				k.dims = append(k.dims, p)
			}
		case key == "reduce":
			switch val {
			case "+", "*", "min", "max":
				k.reduce = val
			default:
				fail("reduce=%s: want reduce=+, reduce=*, reduce=min or reduce=max", val)
			}
		case key == "check":
			switch val {
			case "on":
			case "off":
				k.nocheck = true
			default:
				fail("check=%s: want check=on (the default: indices and divisors checked as Go checks them) or check=off", val)
			}
		case strings.HasPrefix(key, "reduce(") && strings.HasSuffix(key, ")"):
			buf := key[7 : len(key)-1]
			p := byName[buf]
			if p == nil || !p.slice {
				fail("%s=%s: %q is not a slice parameter of %s", key, val, buf, f.name)
				continue
			}
			switch val {
			case "+", "*", "min", "max":
			default:
				fail("%s=%s: want %s=+, %s=*, %s=min or %s=max", key, val, key, key, key, key)
				continue
			}
			if k.reduceArrays == nil {
				k.reduceArrays = map[*param]string{}
			}
			k.reduceArrays[p] = val
		case key == "team":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > maxTeamThreads {
				fail("team=%s: want the number of threads per team, 1 to %d", val, maxTeamThreads)
				continue
			}
			k.team = n
		case key == "name":
			if !cIdent.MatchString(val) {
				fail("name=%s: a kernel name is a C identifier (letters, digits, _; not starting with a digit)", val)
			}
			k.name = val
		case key == "var":
			if !token.IsIdentifier(val) {
				fail("var=%s is not a Go identifier", val)
			}
			k.varName = val
		case strings.HasPrefix(key, "len(") && strings.HasSuffix(key, ")"):
			buf := key[4 : len(key)-1]
			p := byName[buf]
			if p == nil || !p.slice {
				fail("%s=%s: %q is not a slice parameter of %s", key, val, buf, f.name)
				continue
			}
			lenExprs[p] = val
		case strings.HasPrefix(key, "arg(") && strings.HasSuffix(key, ")"):
			if !g.argDirective(k, key, val, byName) {
				bad = true
			}
		default:
			fail("unknown key %q; the keys are dims, team, reduce, reduce(BUF), len(BUF), arg(PARAM), check, name and var", key)
		}
	}
	if len(k.dims) == 0 && !bad {
		fail("no dims=; name the extents of the iteration space, as in dims=n or dims=nx,ny")
	}
	if bad {
		return
	}
	// The first len(dims) parameters are the point's indices.
	for i := range k.dims {
		if i >= len(f.params) || f.params[i].slice || f.params[i].t.kind() != types.Int {
			g.errs.add(f.decl.Type.Params.Pos(), "kernel %s: its first %d parameters must be the point's int indices (one per extent of dims=), then the extents and the other parameters", f.name, len(k.dims))
			return
		}
		k.index = append(k.index, f.params[i])
	}
	for _, d := range k.dims {
		for _, ix := range k.index {
			if d == ix {
				g.errs.add(dir.Pos(), "//gompt:kernel: dims=: %s is one of the point's indices, not an extent; the extents are int parameters after the indices", d.name)
				return
			}
		}
	}
	for i, p := range f.params {
		if i >= len(k.dims) && p.name == "partial" && k.reduce != "" {
			g.errs.add(p.pos, "kernel %s: a reduction's parameter cannot be named partial (the generated kernel's buffer of per-team results)", f.name)
			return
		}
	}
	if k.team > 0 && !g.teamKernel(k) {
		return
	}
	if len(k.reduceArrays) > 0 && !g.reduceArrayKernel(k, lenExprs) {
		return
	}
	if k.reduce == "" && f.result != nil {
		g.errs.add(f.decl.Type.Results.Pos(), "kernel %s returns a value but has no reduce=; a map kernel returns nothing, a reduction (reduce=+, *, min or max) returns the point's value", f.name)
		return
	}
	if k.reduce != "" && (f.result == nil || f.result.isBool()) {
		g.errs.add(f.decl.Type.Params.Pos(), "kernel %s has reduce=%s but does not return a number: a reduction returns the point's value", f.name, k.reduce)
		return
	}
	// Buffer lengths: the product of the extents, or len(buf)=EXPR.
	var extents []string
	for _, d := range k.dims {
		extents = append(extents, d.name)
	}
	for _, p := range k.args() {
		if !p.slice {
			continue
		}
		expr, ok := lenExprs[p]
		if !ok {
			k.lens[p] = lenExpr{{terms: extents}}
			continue
		}
		e, ok := g.parseLen(k, p, expr, byName)
		if !ok {
			return
		}
		k.lens[p] = e
	}
	if k.name == "" {
		k.name = f.name
	}
	k.entry = "gompt_" + k.name
	if k.varName == "" {
		k.varName = f.name + "Kernel"
	}
	k.runName = "run" + upperFirst(k.varName)
	if k.varName == f.name+"Kernel" {
		k.runName = "run" + upperFirst(f.name)
	}
	if isExported(k.varName) {
		k.runName = "R" + k.runName[1:]
	}
	g.kernels = append(g.kernels, k)
}

// parseLen parses len(p)=expr: a sum and difference of products of
// whole numbers and signed integer parameters (not the indices), with Go's
// precedence and no spaces or parentheses; a mistake is an error at the
// directive.
func (g *gen) parseLen(k *kernel, p *param, expr string, byName map[string]*param) (lenExpr, bool) {
	bad := func(format string, args ...any) (lenExpr, bool) {
		g.errs.add(k.dirPos, "//gompt:kernel: len(%s)=%s: "+format, append([]any{p.name, expr}, args...)...)
		return nil, false
	}
	var e lenExpr
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
			if q == nil || q.slice || !q.t.isInt() || q.t.bits() == 64 && !q.t.signed() || isIndex(k, q) {
				return bad("%q is not a signed integer parameter of %s (the indices do not count)", t, k.fn.name)
			}
		}
		e = append(e, lenProd{sub: sub, terms: terms})
		if end < 0 {
			return e, true
		}
		sub = rest[end] == '-'
		rest = rest[end+1:]
	}
}

func isIndex(k *kernel, p *param) bool {
	for _, q := range k.index {
		if q == p {
			return true
		}
	}
	return p == k.thread && p != nil
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

func isExported(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}
