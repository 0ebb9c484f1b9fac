package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// Array reductions: //gompt:kernel dims=n reduce(h)=+ len(h)=256 (or
// reduce(h)=*, =min, =max). The points combine values into h's elements
// with the operator (h[b] += v, h[b]++; h[b] *= v; h[b] = min(h[b], v);
// h[b] = max(h[b], v); nothing else); each team combines into a private
// copy of h at the operator's identity (OpenCL __local memory, local
// atomics or compare-and-swap loops; a Go array in the Go image), and
// combines its copy into h once, atomically. The result is h's values
// combined with the points', exact for integers and for min and max.

// maxReduceLen is the largest array reduction: 16384 elements, and
// maxReduceBytes the most local memory a kernel's private copies take
// together: 48 KiB, the static shared memory of a CUDA block (NVIDIA's
// OpenCL reports the same); POCL has more, a GPU not always.
const (
	maxReduceLen   = 16384
	maxReduceBytes = 48 << 10
)

// reduceArrayKernel checks a kernel's reduce(buf)= arrays: a 1-D map
// kernel, each a buffer of 32- or 64-bit integers or floats with a
// constant len(buf)=.
func (g *gen) reduceArrayKernel(k *kernel, lenExprs map[*param]string) bool {
	if k.reduce != "" || k.team > 0 || len(k.dims) != 1 {
		for _, p := range k.args() {
			if op := k.reduceArrays[p]; op != "" {
				g.errs.add(k.dirPos, "//gompt:kernel: reduce(%s)=%s: an array reduction is a map kernel with one dimension (dims=n), without reduce= or team=", p.name, op)
				break
			}
		}
		return false
	}
	k.reduceLen = map[*param]int{}
	bytes := 0
	for _, p := range k.args() {
		op := k.reduceArrays[p]
		if op == "" {
			continue
		}
		switch p.t.kind() {
		case types.Int32, types.Uint32, types.Int64, types.Uint64, types.Int, types.Uint, types.Float32, types.Float64:
		default:
			g.errs.add(k.dirPos, "//gompt:kernel: reduce(%s)=%s: %s is a []%s; an array reduction's elements are int32, uint32, int64, uint64, int, uint, float32 or float64", p.name, op, p.name, p.t.goName())
			return false
		}
		n := 1
		expr, ok := lenExprs[p]
		if ok {
			for _, t := range strings.Split(expr, "*") {
				v, err := strconv.Atoi(t)
				if err != nil || v <= 0 || n*v > maxReduceLen {
					ok = false
					break
				}
				n *= v
			}
		}
		if !ok {
			g.errs.add(k.dirPos, "//gompt:kernel: reduce(%s)=%s needs len(%s)=N, a whole number from 1 to %d (a team's private copy is in local memory)", p.name, op, p.name, maxReduceLen)
			return false
		}
		k.reduceLen[p] = n
		bytes += n * p.t.bits() / 8
		// The launcher maps it both ways and the entry merges into it,
		// whatever the body does (an empty one included).
		p.read, p.written = true, true
	}
	if bytes > maxReduceBytes {
		g.errs.add(k.dirPos, "//gompt:kernel: the array reductions' private copies take %d bytes of local memory per team, more than %d (48 KiB, the most a CUDA block has without opting in); make len(BUF)= smaller", bytes, maxReduceBytes)
		return false
	}
	return true
}

// reduceForms says, for each operator, what a kernel may do to an element
// of a reduction array.
var reduceForms = map[string]string{
	"+":   "add to its elements (%[1]s[i] += v, %[1]s[i] -= v, %[1]s[i]++, %[1]s[i]--)",
	"*":   "multiply its elements (%[1]s[i] *= v)",
	"min": "lower its elements (%[1]s[i] = min(%[1]s[i], v))",
	"max": "raise its elements (%[1]s[i] = max(%[1]s[i], v))",
}

// checkReduceArrays checks that a reduction array's only uses are its
// operator's updates (h[e] += v, h[e] -= v, h[e]++ and h[e]--; h[e] *=
// v; h[e] = min(h[e], v); h[e] = max(h[e], v)) and len(h).
func (g *gen) checkReduceArrays() {
	info := g.p.info
	for _, k := range g.kernels {
		if len(k.reduceArrays) == 0 {
			continue
		}
		// arrayOf is the reduction array e is an element of, its
		// identifier and its operator ("" for none).
		arrayOf := func(e ast.Expr) (*ast.IndexExpr, *ast.Ident, string) {
			ix, id, p := k.reduceArrayAt(info, e)
			if p == nil {
				return nil, nil, ""
			}
			return ix, id, k.reduceArrays[p]
		}
		allowed := map[*ast.Ident]bool{}
		ast.Inspect(k.decl.Body, func(n ast.Node) bool {
			switch s := n.(type) {
			case *ast.AssignStmt:
				ix, id, op := arrayOf(s.Lhs[0])
				switch {
				case op == "+" && (s.Tok == token.ADD_ASSIGN || s.Tok == token.SUB_ASSIGN), op == "*" && s.Tok == token.MUL_ASSIGN:
					allowed[id] = true
				case (op == "min" || op == "max") && s.Tok == token.ASSIGN && len(s.Lhs) == 1:
					call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
					if !ok || !isBuiltin(info, call, op) {
						break
					}
					same := sameElement(info, call, ix)
					if same == nil {
						break
					}
					if len(call.Args) < 2 {
						g.errs.add(call.Pos(), "%s(%s) has no other operand: it changes nothing", op, exprString(same))
					} else if !callsNothing(info, ix.Index) {
						g.errs.add(ix.Index.Pos(), "%s is reduce(%s)=%s: its index in %s = %s(%s, v) may call nothing but conversions (the device evaluates it once)", id.Name, id.Name, op, exprString(ix), op, exprString(ix))
					}
					allowed[id] = true
					allowed[ast.Unparen(same.X).(*ast.Ident)] = true
				}
			case *ast.IncDecStmt:
				if _, id, op := arrayOf(s.X); op == "+" {
					allowed[id] = true
				}
			case *ast.CallExpr:
				if isBuiltin(info, s, "len") {
					if a, ok := ast.Unparen(s.Args[0]).(*ast.Ident); ok {
						allowed[a] = true
					}
				}
			}
			return true
		})
		reported := map[int]bool{} // one error a line
		ast.Inspect(k.decl.Body, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			v, _ := info.Uses[id].(*types.Var)
			if p := k.byObj[v]; p != nil && k.reduceArrays[p] != "" && !allowed[id] && !reported[g.p.fset.Position(id.Pos()).Line] {
				reported[g.p.fset.Position(id.Pos()).Line] = true
				op := k.reduceArrays[p]
				g.errs.add(id.Pos(), "%s is reduce(%s)=%s: the kernel may only %s and take its len", id.Name, id.Name, op, fmt.Sprintf(reduceForms[op], id.Name))
			}
			return true
		})
	}
}

// isBuiltin reports whether call calls Go's built-in function name.
func isBuiltin(info *types.Info, call *ast.CallExpr, name string) bool {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	return ok && id.Name == name && info.Types[call.Fun].IsBuiltin()
}

// sameElement returns the operand of min or max call that is element ix
// of the same buffer at the same index (written the same way), if one is.
func sameElement(info *types.Info, call *ast.CallExpr, ix *ast.IndexExpr) *ast.IndexExpr {
	want := exprString(ix)
	for _, a := range call.Args {
		if o, ok := ast.Unparen(a).(*ast.IndexExpr); ok && exprString(o) == want {
			if id, ok := ast.Unparen(o.X).(*ast.Ident); ok && info.Uses[id] == info.Uses[ast.Unparen(ix.X).(*ast.Ident)] {
				return o
			}
		}
	}
	return nil
}

// minMaxOperands are the operands of call other than element ix.
func minMaxOperands(info *types.Info, call *ast.CallExpr, ix *ast.IndexExpr) []ast.Expr {
	same := sameElement(info, call, ix)
	var rest []ast.Expr
	for _, a := range call.Args {
		if ast.Unparen(a) != same {
			rest = append(rest, a)
		}
	}
	return rest
}

// callsNothing reports whether e calls nothing but conversions and Go's
// built-in functions (len, min, max: the subset's), so that evaluating it
// twice gives the same value.
func callsNothing(info *types.Info, e ast.Expr) bool {
	pure := true
	ast.Inspect(e, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if tv := info.Types[call.Fun]; !tv.IsType() && !tv.IsBuiltin() {
				pure = false
			}
		}
		return pure
	})
	return pure
}

func (c *cfunc) isReduceArray(p *param) bool {
	return c.f.kernel != nil && c.f.kernel.reduceArrays[p] != ""
}

// reduceArrayOf returns the reduction array l indexes, if it is one.
func (c *cfunc) reduceArrayOf(l ast.Expr) (*ast.IndexExpr, *param) {
	if c.f.kernel == nil {
		return nil, nil
	}
	ix, _, p := c.f.kernel.reduceArrayAt(c.info(), l)
	return ix, p
}

// reduceArrayAt is the element of one of k's reduction arrays e is, if
// it is one: its index expression, the array's identifier and parameter.
func (k *kernel) reduceArrayAt(info *types.Info, e ast.Expr) (*ast.IndexExpr, *ast.Ident, *param) {
	ix, ok := ast.Unparen(e).(*ast.IndexExpr)
	if !ok {
		return nil, nil, nil
	}
	id, ok := ast.Unparen(ix.X).(*ast.Ident)
	if !ok {
		return nil, nil, nil
	}
	v, _ := info.Uses[id].(*types.Var)
	if p := k.byObj[v]; p != nil && k.reduceArrays[p] != "" {
		return ix, id, p
	}
	return nil, nil, nil
}

// reduceArrayOpAssign is h[e] += v, h[e]++, h[e] -= v, h[e]-- or h[e] *=
// v on a reduction array (checkReduceArrays allows only its own
// operator's): a subtraction adds -v (Go's wrapping negation; for floats
// x - y is x + (-y) exactly).
func (c *cfunc) reduceArrayOpAssign(l ast.Expr, op token.Token, rhs func() string, r []ast.Expr) bool {
	ix, p := c.reduceArrayOf(l)
	if p == nil {
		return false
	}
	c.reduceArrayUpdate(ix, p, func() string {
		v := rhs()
		if len(r) > 0 {
			v = c.convertTo(r[0], p.t)
		}
		if op != token.SUB {
			return v
		}
		if p.t.isFloat() {
			return "(-(" + v + "))"
		}
		return c.binop(token.SUB, p.t, "(("+p.t.c()+")0)", v, nil)
	})
	return true
}

// reduceArrayMinMax is h[e] = min(h[e], v, ...) (or max) on a reduction
// array: the other operands' min (max) combined into h[e].
func (c *cfunc) reduceArrayMinMax(s *ast.AssignStmt) bool {
	ix, p := c.reduceArrayOf(s.Lhs[0])
	if p == nil {
		return false
	}
	call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
	if !ok {
		return false
	}
	others := minMaxOperands(c.info(), call, ix)
	c.reduceArrayUpdate(ix, p, func() string {
		h := c.pre.minmax(p.t, c.f.kernel.reduceArrays[p] == "min")
		acc := c.convertTo(others[0], p.t)
		for _, a := range others[1:] {
			acc = h + "(" + acc + ", " + c.convertTo(a, p.t) + ")"
		}
		return acc
	})
	return true
}

// reduceArrayUpdate combines value() into element ix of the team's copy
// of reduction array p with p's operator: atomically in local memory (on
// a CPU device, where one work-item runs the team's points, in place); an
// index outside its length fails the check (unless proven in range), and
// changes nothing.
func (c *cfunc) reduceArrayUpdate(ix *ast.IndexExpr, p *param, value func() string) {
	op, t := c.f.kernel.reduceArrays[p], p.t
	c.checkedAt(ix, c.lens[p], true, func(idx string) {
		v := c.newTmp()
		c.line("%s %s = %s;", t.c(), v, value())
		elem := c.names[p.obj] + "[" + idx + "]"
		c.b.WriteString("#ifdef GOMPT_CPU_DEVICE\n")
		c.line("%s = %s;", elem, combineC(op, t, c.pre, elem, v))
		c.b.WriteString("#else\n")
		c.line("%s(&%s, %s);", c.pre.reduceAtomic(op, t, "__local"), elem, v)
		c.b.WriteString("#endif\n")
	})
}

// reduceAtomic returns the helper that combines v into *a with operator
// op, atomically, a in address space space (__local or __global): the
// device's atomic for a 32-bit integer's +, min and max and a 64-bit
// one's +, a compare-and-swap loop on the element's bits otherwise.
func (p *prelude) reduceAtomic(op string, t scalar, space string) string {
	opName := map[string]string{"+": "add", "*": "mul", "min": "min", "max": "max"}[op]
	name := "gompt_reduce_" + opName + "_" + t.c() + "_" + strings.TrimPrefix(space, "__")
	head := fmt.Sprintf("%s void %s(volatile %s %s *a, %s v) {\n", inl, name, space, t.c(), t.c())
	switch {
	case t.isInt() && t.bits() == 32 && op != "*":
		return p.need(name, head+fmt.Sprintf("  atomic_%s(a, v);\n}", opName))
	case t.isInt() && t.bits() == 64 && op == "+":
		p.need("gompt_atom64", atom64)
		return p.need(name, head+"  gompt_atom_add64(a, v);\n}")
	}
	u, cas, from, to := "uint", "atomic_cmpxchg", "(%s)", "(uint)"
	if t.bits() == 64 {
		u, cas, to = "ulong", "gompt_atom_cas64", "(ulong)"
		p.need("gompt_atom64", atom64)
	}
	if t.isFloat() {
		from, to = "as_"+t.c(), "as_"+u
	} else {
		from = fmt.Sprintf(from, t.c())
	}
	body := fmt.Sprintf(`  volatile %[1]s %[2]s *b = (volatile %[1]s %[2]s *)a;
  %[2]s o = *b;
  for (;;) {
    %[2]s n = %[3]s(%[4]s);
    if (n == o) return;
    %[2]s w = %[5]s(b, o, n);
    if (w == o) return;
    o = w;
  }
}`, space, u, to, combineC(op, t, p, from+"(o)", "v"), cas)
	return p.need(name, head+body)
}

// reduceArrayEntry is the entry of a kernel with reduction arrays: each
// work-group zeroes its copies in local memory, runs its points
// grid-stride, and adds its copies into the buffers.
func (g *gen) reduceArrayEntry(k *kernel, pre *prelude) string {
	w := &entryWriter{}
	line := w.line
	names := w.begin(k, "")
	var arrays []*param
	for _, p := range k.args() {
		if k.reduceArrays[p] != "" {
			arrays = append(arrays, p)
			line("__local %s gompt_r_%s[%d];", p.t.c(), names[p], k.reduceLen[p])
		}
	}
	rest := lengths(k, pre, names, line)
	// The body gets the local copies in place of the buffers.
	for i, a := range rest {
		for _, p := range arrays {
			if a == names[p] {
				rest[i] = "gompt_r_" + names[p]
			}
		}
	}
	line("long gompt_lid = (long)get_local_id(0), gompt_lsz = (long)get_local_size(0);")
	n := "(long)" + names[k.dims[0]]
	merge := func(lid, lsz string) {
		for _, p := range arrays {
			op := k.reduceArrays[p]
			line("for (long gompt_l = %s; gompt_l < %d && gompt_l < gompt_len_%s; gompt_l += %s) {", lid, k.reduceLen[p], names[p], lsz)
			line("  %s gompt_v = gompt_r_%s[gompt_l];", p.t.c(), names[p])
			line("  if (%s) %s(&%s[gompt_l], gompt_v);", notIdentityC(op, p.t, "gompt_v"), pre.reduceAtomic(op, p.t, "__global"), names[p])
			line("}")
		}
	}
	// On a CPU device (POCL), where a work-group's work-items run one
	// after another on one core, atomics into the team's copy cost more
	// than the work: there one work-item runs the team's contiguous share
	// of the points with plain adds, and merges the copy (a histogram of
	// 2^24 values on POCL: 55 ms with local atomics).
	line("#ifdef GOMPT_CPU_DEVICE")
	line("if (gompt_lid == 0) {")
	w.depth++
	for _, p := range arrays {
		line("for (long gompt_l = 0; gompt_l < %d; gompt_l++) gompt_r_%s[gompt_l] = %s;", k.reduceLen[p], names[p], arrayIdentityC(k.reduceArrays[p], p.t))
	}
	line("long gompt_chunk = (%s - 1) / (long)get_num_groups(0) + 1;", n)
	line("long gompt_lo = (long)get_group_id(0) * gompt_chunk;")
	line("long gompt_hi = gompt_lo + gompt_chunk < %s ? gompt_lo + gompt_chunk : %s;", n, n)
	line("for (long gompt_i0 = gompt_lo; gompt_i0 < gompt_hi; gompt_i0++) {")
	line("  %s(%s%s);", bodyName(k), strings.Join(append([]string{"gompt_i0"}, rest...), ", "), faultArgsNext)
	if len(k.sites) > 0 {
		line("  if (gompt_stopped) break;")
	}
	line("}")
	merge("0", "1")
	w.depth--
	line("}")
	line("#else")
	for _, p := range arrays {
		line("for (long gompt_l = gompt_lid; gompt_l < %d; gompt_l += gompt_lsz) gompt_r_%s[gompt_l] = %s;", k.reduceLen[p], names[p], arrayIdentityC(k.reduceArrays[p], p.t))
	}
	line("barrier(CLK_LOCAL_MEM_FENCE);")
	line("for (long gompt_i0 = (long)get_global_id(0); gompt_i0 < %s; gompt_i0 += (long)get_global_size(0)) {", n)
	line("  %s(%s%s);", bodyName(k), strings.Join(append([]string{"gompt_i0"}, rest...), ", "), faultArgsNext)
	if len(k.sites) > 0 {
		line("  if (gompt_stopped) break; // on to the barrier, which every work-item reaches")
	}
	line("}")
	line("barrier(CLK_LOCAL_MEM_FENCE);")
	merge("gompt_lid", "gompt_lsz")
	line("#endif")
	w.depth--
	line("}")
	return w.sb.String()
}

// arrayIdentityC is the identity a team's copy of an array reduction
// starts from, in C: a float sum's is -0, as x + -0 is x for every x (+0
// would turn an element's -0 into +0 where no point added to it).
func arrayIdentityC(op string, t scalar) string {
	if t.isFloat() && op == "+" {
		return "((" + t.c() + ")-0.0)"
	}
	return identityC(op, t)
}

// notIdentityC is the C test that value v of a team's copy is not the
// identity, which its merge skips: on a float's bits (a -0 sum skipped,
// a +0 one merged: -0 + +0 is +0).
func notIdentityC(op string, t scalar, v string) string {
	id := arrayIdentityC(op, t)
	if t.isFloat() {
		as := "as_uint"
		if t.bits() == 64 {
			as = "as_ulong"
		}
		return as + "(" + v + ") != " + as + "(" + id + ")"
	}
	return v + " != " + id
}

// arrayGoIdentity is arrayIdentityC in the Go image.
func arrayGoIdentity(w *goWriter, op string, t scalar) string {
	if t.isFloat() && op == "+" {
		w.imports["math"] = "gomptmath"
		return "gomptmath.Copysign(0, -1)"
	}
	return goIdentity(w, op, t)
}

// reduceArraysHost makes the Go image's private copies of its reduction
// arrays, each element at its operator's identity: buffer h's name then
// holds a slice of an array of the team's, and the function returned
// combines the copies into the buffers (atomically: teams run at the same
// time).
func (g *gen) reduceArraysHost(w *goWriter, k *kernel) func() {
	if len(k.reduceArrays) == 0 {
		return func() {}
	}
	var arrays []*param
	for _, p := range k.args() {
		if k.reduceArrays[p] != "" {
			arrays = append(arrays, p)
			name := upperFirst(p.name)
			w.p("gomptRB%s := %s", name, p.name)
			w.p("var gomptRA%s [%d]%s", name, k.reduceLen[p], p.t.goName())
			if id := arrayGoIdentity(w, k.reduceArrays[p], p.t); id != "0" {
				w.p("for gomptI := range gomptRA%s {", name)
				w.p("gomptRA%s[gomptI] = %s(%s)", name, p.t.goName(), id)
				w.p("}")
			}
			w.p("%s = gomptRA%s[:len(%s)]", p.name, name, p.name)
		}
	}
	return func() {
		for _, p := range arrays {
			op := k.reduceArrays[p]
			name := upperFirst(p.name)
			merge := map[string]string{"+": "MergeSum", "*": "MergeProd", "min": "MergeMin", "max": "MergeMax"}[op]
			w.p("gomptrt.%s(gomptRB%s, gomptRA%s[:], %s(%s))", merge, name, name, p.t.goName(), arrayGoIdentity(w, op, p.t))
		}
	}
}
