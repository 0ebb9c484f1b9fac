package main

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// A poly is a polynomial with integer coefficients over a kernel's int
// variables: monomial (the sorted names of its variables joined by "*",
// "" for the constant term) to coefficient. The prover models int
// expressions as polys: int arithmetic wraps modulo 2^64, so two
// expressions equal as polys are equal as ints.
type poly map[string]int64

func (p poly) add(q poly, sign int64) poly {
	r := poly{}
	for m, c := range p {
		r[m] += c
	}
	for m, c := range q {
		r[m] += sign * c
	}
	for m, c := range r {
		if c == 0 {
			delete(r, m)
		}
	}
	return r
}

func (p poly) mul(q poly) poly {
	r := poly{}
	for m1, c1 := range p {
		for m2, c2 := range q {
			r[monoMul(m1, m2)] += c1 * c2
		}
	}
	for m, c := range r {
		if c == 0 {
			delete(r, m)
		}
	}
	return r
}

func monoMul(a, b string) string {
	var vs []string
	if a != "" {
		vs = strings.Split(a, "*")
	}
	if b != "" {
		vs = append(vs, strings.Split(b, "*")...)
	}
	sort.Strings(vs)
	return strings.Join(vs, "*")
}

func (p poly) equal(q poly) bool { return len(p.add(q, -1)) == 0 }

func varPoly(name string) poly { return poly{name: 1} }

func constPoly(c int64) poly {
	if c == 0 {
		return poly{}
	}
	return poly{"": c}
}

// divide returns p / d for a single-monomial d with coefficient c > 0,
// when every term of p is a multiple of d.
func (p poly) divide(d poly) (poly, bool) {
	if len(d) != 1 {
		return nil, false
	}
	var dm string
	var dc int64
	for m, c := range d {
		dm, dc = m, c
	}
	if dc <= 0 {
		return nil, false
	}
	var dvars []string
	if dm != "" {
		dvars = strings.Split(dm, "*")
	}
	r := poly{}
	for m, c := range p {
		if c%dc != 0 {
			return nil, false
		}
		var vs []string
		if m != "" {
			vs = strings.Split(m, "*")
		}
		for _, dv := range dvars {
			i := indexOf(vs, dv)
			if i < 0 {
				return nil, false
			}
			vs = append(vs[:i:i], vs[i+1:]...)
		}
		r[strings.Join(vs, "*")] += c / dc
	}
	return r, true
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// prover models a kernel's int expressions and proves index expressions in
// range: each index of the point lies in [0, its extent), each variable of
// a counted loop (for p := 0; p < E; p++, or for p := range E) in [0, E),
// and a buffer's length is its Len.
type prover struct {
	g      *gen
	k      *kernel
	vars   map[*types.Var]string // variable -> its name in polys
	defs   map[*types.Var]ast.Expr
	ranges map[string]vrange // variable -> its range where it is declared
	extent map[string]bool   // the extents' names: at least 1 in a running kernel

	viewLens map[*view]poly // the views' lengths (view.go)
}

func (g *gen) newProver(k *kernel) *prover {
	pr := &prover{g: g, k: k, vars: map[*types.Var]string{}, defs: map[*types.Var]ast.Expr{}, ranges: map[string]vrange{}, extent: map[string]bool{}}
	for _, p := range k.params {
		if !p.slice && p.t.kind() == types.Int && !k.assigned[p.obj] {
			pr.vars[p.obj] = "p:" + p.name
		}
	}
	for i, ix := range k.index {
		if !k.assigned[ix.obj] && !k.assigned[k.dims[i].obj] {
			pr.ranges["p:"+ix.name] = vrange{hi: varPoly("p:" + k.dims[i].name)}
			pr.extent["p:"+k.dims[i].name] = true
		}
	}
	if k.thread != nil && !k.assigned[k.thread.obj] { // a team kernel's thread: [0, team)
		pr.ranges["p:"+k.thread.name] = vrange{hi: constPoly(int64(k.team))}
	}
	// Locals defined once (x := e, var x = e) and never assigned, and
	// counted loops' variables.
	ast.Inspect(k.decl.Body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE && len(s.Lhs) == len(s.Rhs) {
				for i, l := range s.Lhs {
					if v, ok := g.p.info.Defs[l.(*ast.Ident)].(*types.Var); ok && !k.assigned[v] {
						pr.defs[v] = s.Rhs[i]
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range s.Names {
				if v, ok := g.p.info.Defs[id].(*types.Var); ok && !k.assigned[v] && i < len(s.Values) && len(s.Values) == len(s.Names) {
					pr.defs[v] = s.Values[i]
				}
			}
		case *ast.RangeStmt:
			if id, ok := s.Key.(*ast.Ident); ok && s.Tok == token.DEFINE {
				if v, ok := g.p.info.Defs[id].(*types.Var); ok && v.Type() == types.Typ[types.Int] && !k.assigned[v] {
					bound, ok := pr.poly(s.X)
					if !ok {
						bound, ok = pr.rangeBound(s) // a slice's or a team array's length
					}
					if ok {
						name := "l:" + itoa(len(pr.ranges)) + ":" + id.Name
						pr.vars[v] = name
						pr.ranges[name] = vrange{hi: bound}
					}
				}
			}
		case *ast.ForStmt:
			pr.countedLoop(s)
		}
		return true
	})
	pr.digits()
	return pr
}

// countedLoop recognises for p := 0; p < E; p++ with p assigned only by
// the post statement and E loop-invariant.
func (pr *prover) countedLoop(s *ast.ForStmt) {
	init, ok := s.Init.(*ast.AssignStmt)
	if !ok || init.Tok != token.DEFINE || len(init.Lhs) != 1 {
		return
	}
	id := init.Lhs[0].(*ast.Ident)
	v, _ := pr.g.p.info.Defs[id].(*types.Var)
	if v == nil || v.Type() != types.Typ[types.Int] {
		return
	}
	if tv := pr.g.p.info.Types[init.Rhs[0]]; tv.Value == nil || constant.Sign(tv.Value) != 0 {
		return
	}
	cond, ok := s.Cond.(*ast.BinaryExpr)
	if !ok || cond.Op != token.LSS {
		return
	}
	if cid, ok := ast.Unparen(cond.X).(*ast.Ident); !ok || pr.g.p.info.Uses[cid] != v {
		return
	}
	switch post := s.Post.(type) {
	case *ast.IncDecStmt:
		if pid, ok := post.X.(*ast.Ident); !ok || post.Tok != token.INC || pr.g.p.info.Uses[pid] != v {
			return
		}
	default:
		return
	}
	// p may be assigned only by the post statement.
	assigned := false
	ast.Inspect(s.Body, func(n ast.Node) bool {
		switch a := n.(type) {
		case *ast.AssignStmt:
			for _, l := range a.Lhs {
				if lid, ok := l.(*ast.Ident); ok && pr.g.p.info.Uses[lid] == v {
					assigned = true
				}
			}
		case *ast.IncDecStmt:
			if lid, ok := a.X.(*ast.Ident); ok && pr.g.p.info.Uses[lid] == v {
				assigned = true
			}
		}
		return true
	})
	if assigned {
		return
	}
	bound, ok := pr.poly(cond.Y)
	if !ok {
		return
	}
	name := "l:" + itoa(len(pr.ranges)) + ":" + id.Name
	pr.vars[v] = name
	pr.ranges[name] = vrange{hi: bound}
}

// poly models int expression e, when it is one: constants, int variables
// that are never assigned (and locals defined once from such), +, -, *,
// int conversions of ints, and len of a buffer (its Len).
func (pr *prover) poly(e ast.Expr) (poly, bool) {
	info := pr.g.p.info
	tv := info.Types[e]
	if tv.Type != types.Typ[types.Int] && tv.Type != types.Typ[types.UntypedInt] {
		return nil, false
	}
	if tv.Value != nil {
		v, ok := constant.Int64Val(constant.ToInt(tv.Value))
		return constPoly(v), ok
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return pr.poly(e.X)
	case *ast.Ident:
		v, _ := info.Uses[e].(*types.Var)
		if v == nil {
			return nil, false
		}
		if name, ok := pr.vars[v]; ok {
			return varPoly(name), true
		}
		if d, ok := pr.defs[v]; ok {
			delete(pr.defs, v) // no cycles
			p, ok := pr.poly(d)
			pr.defs[v] = d
			return p, ok
		}
	case *ast.BinaryExpr:
		x, ok1 := pr.poly(e.X)
		y, ok2 := pr.poly(e.Y)
		if !ok1 || !ok2 {
			return nil, false
		}
		switch e.Op {
		case token.ADD:
			return x.add(y, 1), true
		case token.SUB:
			return x.add(y, -1), true
		case token.MUL:
			return x.mul(y), true
		}
	case *ast.UnaryExpr:
		if x, ok := pr.poly(e.X); ok && e.Op == token.SUB {
			return poly{}.add(x, -1), true
		} else if ok && e.Op == token.ADD {
			return x, true
		}
	case *ast.CallExpr:
		fun := ast.Unparen(e.Fun)
		if tv := info.Types[fun]; tv.IsType() && len(e.Args) == 1 {
			return pr.poly(e.Args[0])
		} else if tv.IsBuiltin() && fun.(*ast.Ident).Name == "len" {
			return pr.sliceLen(e.Args[0]) // a slice parameter's or a view's
		}
	}
	return nil, false
}

// lenPoly is buffer p's Len as a poly: its value wherever it is
// positive (the length is 0 elsewhere).
func (pr *prover) lenPoly(p *param) (poly, bool) {
	var sum poly
	for _, prod := range pr.k.lens[p] {
		r := constPoly(1)
		for _, t := range prod.terms {
			if q := paramNamed(pr.k, t); q != nil {
				name, ok := pr.vars[q.obj]
				if !ok {
					return nil, false
				}
				r = r.mul(varPoly(name))
			} else {
				n, err := strconv.ParseInt(t, 10, 64)
				if err != nil {
					return nil, false
				}
				r = r.mul(constPoly(n))
			}
		}
		sign := int64(1)
		if prod.sub {
			sign = -1
		}
		sum = sum.add(r, sign)
	}
	return sum, true
}

// vrange is what the prover knows of an int variable: lo <= v < hi.
type vrange struct {
	lo int64
	hi poly
}

// env is the ranges in force at a point of the body: the variables'
// declared ranges narrowed by the conditions of the branches taken.
type env map[string]vrange

func (e env) with(name string, r vrange) env {
	out := make(env, len(e)+1)
	for k, v := range e {
		out[k] = v
	}
	out[name] = r
	return out
}

// inRange proves 0 <= p < q from the ranges of e, by reading p as a
// mixed-radix number: p = (v + c) + R*p' where the digit v + c (v a
// variable, c p's constant term or 0) lies in [0, R), R divides q, and
// 0 <= p' < q/R.
func (pr *prover) inRange(p, q poly, e env) bool {
	// A length with a positive constant term (len(rowPtr)=rows+1): 0 <=
	// p < q where 0 <= p-d < q-qc for a d in [0, qc] (0, p's constant
	// term, qc).
	if qc := q[""]; qc > 0 && len(q) > 1 {
		qm := q.add(constPoly(qc), -1)
		for _, d := range []int64{0, p[""], qc} {
			if d >= 0 && d <= qc && pr.inRange(p.add(constPoly(d), -1), qm, e) {
				return true
			}
		}
	}
	if len(p) == 0 {
		return pr.positive(q)
	}
	consts := []int64{0}
	c := p[""]
	if c != 0 {
		consts = append(consts, c)
	}
	// A constant digit: p = c + R*p' with 0 <= c < R, R the constant
	// factor of q (out[9*i+3] of a buffer of 9*n).
	if qc, ok := constFactor(q); ok && qc > 1 && c >= 0 && c < qc {
		p2, ok1 := p.add(constPoly(c), -1).divide(constPoly(qc))
		q2, ok2 := q.divide(constPoly(qc))
		if ok1 && ok2 && pr.inRange(p2, q2, e) {
			return true
		}
	}
	for m, coef := range p {
		r, ok := e[m]
		if coef != 1 || !ok {
			continue
		}
		for _, c := range consts {
			if r.lo+c < 0 {
				continue
			}
			digitHi := r.hi.add(constPoly(c), 1)
			rest := p.add(varPoly(m), -1).add(constPoly(c), -1)
			for _, radix := range []poly{pr.ranges[m].hi, r.hi, q} {
				if slack, ok := constOf(radix.add(digitHi, -1)); !ok || slack < 0 {
					continue // the digit may reach the radix
				}
				p2, ok1 := rest.divide(radix)
				q2, ok2 := q.divide(radix)
				if ok1 && ok2 && pr.inRange(p2, q2, e) {
					return true
				}
			}
		}
	}
	return false
}

// positive reports whether q is at least 1 in a running kernel: a positive
// constant times extents.
func (pr *prover) positive(q poly) bool {
	if len(q) != 1 {
		return false
	}
	for m, c := range q {
		if c <= 0 {
			return false
		}
		if m == "" {
			return true
		}
		for _, v := range strings.Split(m, "*") {
			if !pr.extent[v] {
				return false
			}
		}
	}
	return true
}

// linear is the point's linear index, x + nx*y + nx*ny*z, and volume the
// product of the extents.
func (pr *prover) linear() (lin, vol poly, ok bool) {
	lin, vol = poly{}, constPoly(1)
	for i, ix := range pr.k.index {
		name, ok1 := pr.vars[ix.obj]
		ext, ok2 := pr.vars[pr.k.dims[i].obj]
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		lin = lin.add(vol.mul(varPoly(name)), 1)
		vol = vol.mul(varPoly(ext))
	}
	return lin, vol, true
}

// prove marks the kernel body's index expressions proven in range, and
// picks each buffer's map: To when only read, ToFrom when written and read,
// and for a buffer only written From when every path through the body
// stores at the point's linear index and the buffer holds exactly one
// element per point, else ToFrom (From would copy back, over elements the
// kernel never wrote, what device memory held).
func (pr *prover) prove() {
	k := pr.k
	base := env{}
	for name, r := range pr.ranges {
		base[name] = r
	}
	pr.walk(k.decl.Body.List, base)
	if k.nocheck {
		// check=off: every element access is taken as in range, on the
		// device (no check) and in the Go image (no bounds test).
		ast.Inspect(k.decl.Body, func(n ast.Node) bool {
			if ix, ok := n.(*ast.IndexExpr); ok {
				if p, _ := k.sliceOf(pr.g.p.info, ix.X); p != nil { // a buffer's element, or a view's
					k.proven[ix] = true
				}
			}
			return true
		})
	}
	lin, vol, linOK := pr.linear()
	for _, p := range k.args() {
		if !p.slice {
			continue
		}
		switch {
		case p.written && p.read:
			k.maps[p] = "ToFrom"
		case p.written:
			k.maps[p] = "ToFrom"
			if l, ok := pr.lenPoly(p); ok && linOK && l.equal(vol) {
				if w, safe := pr.writes(k.decl.Body.List, p, lin); w && safe {
					k.maps[p] = "From"
				}
			}
		default:
			k.maps[p] = "To"
		}
	}
}

// writes reports whether every path through list that falls off its end
// has stored to buffer p at index lin (w), and whether every return inside
// list comes after such a store (safe). Loops count as storing nothing.
func (pr *prover) writes(list []ast.Stmt, p *param, lin poly) (w, safe bool) {
	safe = true
	for _, s := range list {
		sw, ssafe, exits := pr.stmtWrites(s, p, lin)
		safe = safe && ssafe
		if sw || exits {
			// Later statements run only on paths that have stored
			// (sw), or none falls through (a return: sw is true, as
			// no path falls through it; a break: sw is false).
			return sw, safe
		}
	}
	return false, safe
}

// stmtWrites: w as for writes; exits when no path falls through s (a
// return or a break ends it).
func (pr *prover) stmtWrites(s ast.Stmt, p *param, lin poly) (w, safe, exits bool) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.ASSIGN {
			for _, l := range s.Lhs {
				if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
					if id, ok := ast.Unparen(ix.X).(*ast.Ident); ok && pr.g.p.info.Uses[id] == p.obj {
						if i, ok := pr.poly(ix.Index); ok && i.equal(lin) {
							return true, true, false
						}
					}
				}
			}
		}
		return false, true, false
	case *ast.BlockStmt:
		w, safe := pr.writes(s.List, p, lin)
		return w, safe, false
	case *ast.IfStmt:
		if s.Init != nil {
			if w, _, _ := pr.stmtWrites(s.Init, p, lin); w {
				return true, true, false
			}
		}
		tw, ts := pr.writes(s.Body.List, p, lin)
		ew, es := false, true
		if s.Else != nil {
			ew, es, _ = pr.stmtWrites(s.Else, p, lin)
		}
		return tw && ew, ts && es, false
	case *ast.SwitchStmt:
		all, safe, hasDefault := true, true, false
		for _, cc := range s.Body.List {
			cl := cc.(*ast.CaseClause)
			if cl.List == nil {
				hasDefault = true
			}
			w, cs := pr.writes(cl.Body, p, lin)
			all, safe = all && w && !hasBreak(cl.Body), safe && cs
		}
		return all && hasDefault, safe, false
	case *ast.ReturnStmt:
		return true, false, true
	case *ast.BranchStmt:
		if s.Label != nil {
			return false, false, true // leaves an enclosing switch: not modelled
		}
		return false, true, true
	}
	// Loops and calls: no store counted; a return inside a loop is a path
	// that did not store.
	safe = true
	ast.Inspect(s, func(n ast.Node) bool {
		if _, ok := n.(*ast.ReturnStmt); ok {
			safe = false
		}
		_, lit := n.(*ast.FuncLit)
		return !lit
	})
	return false, safe, false
}

// hasBreak reports whether list holds a break (which may leave a switch
// case before its store).
func hasBreak(list []ast.Stmt) bool {
	found := false
	for _, s := range list {
		ast.Inspect(s, func(n ast.Node) bool {
			if b, ok := n.(*ast.BranchStmt); ok && b.Tok == token.BREAK {
				found = true
			}
			return !found
		})
	}
	return found
}

// walk proves the index expressions of list in range, narrowing the
// ranges by the conditions of if statements: in the branch where they
// hold, and after an if whose other branch always returns.
func (pr *prover) walk(list []ast.Stmt, e env) {
	for _, s := range list {
		switch s := s.(type) {
		case *ast.BlockStmt:
			pr.walk(s.List, e)
		case *ast.IfStmt:
			if s.Init != nil {
				pr.walk([]ast.Stmt{s.Init}, e)
			}
			pr.indexes(s.Cond, e)
			then, els := pr.refine(e, s.Cond, true), pr.refine(e, s.Cond, false)
			pr.walk(s.Body.List, then)
			if s.Else != nil {
				pr.walk([]ast.Stmt{s.Else}, els)
			}
			switch {
			case returns(s.Body.List):
				e = els
			case s.Else != nil && returns([]ast.Stmt{s.Else}):
				e = then
			}
		case *ast.ForStmt:
			if s.Init != nil {
				pr.walk([]ast.Stmt{s.Init}, e)
			}
			if s.Cond != nil {
				pr.indexes(s.Cond, e)
			}
			if s.Post != nil {
				pr.walk([]ast.Stmt{s.Post}, e)
			}
			pr.walk(s.Body.List, e)
		case *ast.RangeStmt:
			pr.indexes(s.X, e)
			pr.walk(s.Body.List, e)
		case *ast.SwitchStmt:
			if s.Init != nil {
				pr.walk([]ast.Stmt{s.Init}, e)
			}
			if s.Tag != nil {
				pr.indexes(s.Tag, e)
			}
			for _, cc := range s.Body.List {
				cl := cc.(*ast.CaseClause)
				for _, x := range cl.List {
					pr.indexes(x, e)
				}
				pr.walk(cl.Body, e)
			}
		case *ast.LabeledStmt:
			pr.walk([]ast.Stmt{s.Stmt}, e)
		default:
			pr.indexes(s, e)
		}
	}
}

// returns reports whether list always ends in a return, a break or a
// continue: the statements after it in its enclosing list run only when
// it does not.
func returns(list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	switch s := list[len(list)-1].(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Tok == token.BREAK || s.Tok == token.CONTINUE
	case *ast.BlockStmt:
		return returns(s.List)
	case *ast.IfStmt:
		return s.Else != nil && returns(s.Body.List) && returns([]ast.Stmt{s.Else})
	}
	return false
}

// indexes proves the index expressions in n (a simple statement or an
// expression) with the ranges of e.
func (pr *prover) indexes(n ast.Node, e env) {
	ast.Inspect(n, func(n ast.Node) bool {
		ix, ok := n.(*ast.IndexExpr)
		if !ok {
			return true
		}
		id, ok := ast.Unparen(ix.X).(*ast.Ident)
		if !ok {
			return true
		}
		v, _ := pr.g.p.info.Uses[id].(*types.Var)
		if n, ok := pr.k.teamArrays[v]; ok { // a team array: its constant length
			if i, ok := pr.poly(ix.Index); ok && pr.inRange(i, constPoly(int64(n)), e) {
				pr.k.proven[ix] = true
			}
			return true
		}
		if pr.viewIndex(ix, e) {
			return true
		}
		p := pr.k.byObj[v]
		if p == nil || !p.slice {
			return true
		}
		i, ok1 := pr.poly(ix.Index)
		l, ok2 := pr.lenPoly(p)
		if ok1 && ok2 && pr.inRange(i, l, e) {
			pr.k.proven[ix] = true
		}
		if n, ok := constOf(l); ok && ok2 && pr.below(ix.Index, n) {
			pr.k.proven[ix] = true
		}
		return true
	})
}

// below reports whether integer expression e lies in [0, n) whatever its
// operands: a value of an unsigned type narrower than n's range (a uint8
// indexes 256 elements), x & c or c & x for a constant 0 <= c < n, x % c
// for an unsigned x and a constant 0 < c <= n, and conversions of these
// that keep their value; through locals defined once.
func (pr *prover) below(e ast.Expr, n int64) bool {
	info := pr.g.p.info
	if n <= 0 {
		return false
	}
	if tv := info.Types[e]; tv.Value != nil {
		v, ok := constant.Int64Val(constant.ToInt(tv.Value))
		return ok && v >= 0 && v < n
	}
	t, _ := scalarOf(info.TypeOf(e))
	if t.isInt() && !t.signed() && t.bits() < 63 && int64(1)<<t.bits() <= n {
		return true
	}
	constArg := func(x ast.Expr) (int64, bool) {
		tv := info.Types[x]
		if tv.Value == nil {
			return 0, false
		}
		return constant.Int64Val(constant.ToInt(tv.Value))
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return pr.below(e.X, n)
	case *ast.Ident:
		if v, _ := info.Uses[e].(*types.Var); v != nil {
			if d, ok := pr.defs[v]; ok {
				delete(pr.defs, v) // no cycles
				ok := pr.below(d, n)
				pr.defs[v] = d
				return ok
			}
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.AND:
			for _, x := range []ast.Expr{e.X, e.Y} {
				if c, ok := constArg(x); ok && c >= 0 && c < n {
					return true
				}
			}
			return pr.below(e.X, n) || pr.below(e.Y, n)
		case token.REM:
			xt, _ := scalarOf(info.TypeOf(e.X))
			c, ok := constArg(e.Y)
			return ok && xt.isInt() && !xt.signed() && c > 0 && c <= n
		}
	case *ast.CallExpr:
		// A conversion keeps a value in [0, n) when the type holds n-1.
		if tv := info.Types[e.Fun]; tv.IsType() && len(e.Args) == 1 {
			to, ok := scalarOf(tv.Type)
			if !ok || !to.isInt() {
				return false
			}
			bits := to.bits()
			if to.signed() {
				bits--
			}
			return (bits >= 63 || n-1 < int64(1)<<bits) && pr.below(e.Args[0], n)
		}
	}
	return false
}

// refine narrows e by cond being truth: the conjuncts of a true &&, the
// disjuncts of a false ||, each a comparison of a ranged variable with a
// poly.
func (pr *prover) refine(e env, cond ast.Expr, truth bool) env {
	switch c := ast.Unparen(cond).(type) {
	case *ast.BinaryExpr:
		switch {
		case c.Op == token.LAND && truth, c.Op == token.LOR && !truth:
			return pr.refine(pr.refine(e, c.X, truth), c.Y, truth)
		case c.Op == token.LAND || c.Op == token.LOR:
			return e
		}
		return pr.atom(e, c, truth)
	case *ast.UnaryExpr:
		if c.Op == token.NOT {
			return pr.refine(e, c.X, !truth)
		}
	}
	return e
}

var (
	flipOp   = map[token.Token]token.Token{token.LSS: token.GTR, token.GTR: token.LSS, token.LEQ: token.GEQ, token.GEQ: token.LEQ, token.EQL: token.EQL, token.NEQ: token.NEQ}
	negateOp = map[token.Token]token.Token{token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR, token.EQL: token.NEQ, token.NEQ: token.EQL}
)

// atom narrows e by comparison c being truth.
func (pr *prover) atom(e env, c *ast.BinaryExpr, truth bool) env {
	op, ok := flipOp[c.Op]
	if !ok {
		return e
	}
	op = c.Op
	name, other := pr.rangedVar(c.X, e), c.Y
	if name == "" {
		name, other, op = pr.rangedVar(c.Y, e), c.X, flipOp[c.Op]
	}
	if name == "" {
		return e
	}
	if !truth {
		op = negateOp[op]
	}
	val, ok := pr.poly(other)
	if !ok {
		return e
	}
	r := e[name]
	c0, isConst := constOf(val)
	// le reports whether a <= b, known from their difference.
	le := func(a, b poly) bool {
		d, ok := constOf(b.add(a, -1))
		return ok && d >= 0
	}
	switch op {
	case token.NEQ:
		if isConst && c0 == r.lo {
			r.lo++
		} else if val.equal(r.hi.add(constPoly(1), -1)) {
			r.hi = val
		}
	case token.EQL:
		if isConst && c0 >= r.lo {
			r.lo = c0
			if h := constPoly(c0 + 1); le(h, r.hi) {
				r.hi = h
			}
		}
	case token.LSS, token.LEQ:
		if op == token.LEQ {
			val = val.add(constPoly(1), 1)
		}
		if le(val, r.hi) {
			r.hi = val
		}
	case token.GTR, token.GEQ:
		if op == token.GTR {
			c0++
		}
		if isConst && c0 > r.lo {
			r.lo = c0
		}
	}
	return e.with(name, r)
}

// rangedVar is the name of the ranged variable x is, or "".
func (pr *prover) rangedVar(x ast.Expr, e env) string {
	id, ok := ast.Unparen(x).(*ast.Ident)
	if !ok {
		return ""
	}
	v, _ := pr.g.p.info.Uses[id].(*types.Var)
	name, ok := pr.vars[v]
	if _, ranged := e[name]; !ok || !ranged {
		return ""
	}
	return name
}

// constOf is p's value when p is a constant.
func constOf(p poly) (int64, bool) {
	switch len(p) {
	case 0:
		return 0, true
	case 1:
		c, ok := p[""]
		return c, ok
	}
	return 0, false
}

// constFactor is the constant coefficient of q, a single monomial.
func constFactor(q poly) (int64, bool) {
	if len(q) != 1 {
		return 0, false
	}
	for _, c := range q {
		return c, c > 0
	}
	return 0, false
}
