package main

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
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
	ranges map[string]poly // variable -> exclusive upper bound (lower bound 0)
	extent map[string]bool // the extents' names: at least 1 in a running kernel
}

func (g *gen) newProver(k *kernel) *prover {
	pr := &prover{g: g, k: k, vars: map[*types.Var]string{}, defs: map[*types.Var]ast.Expr{}, ranges: map[string]poly{}, extent: map[string]bool{}}
	for _, p := range k.params {
		if !p.slice && p.t.kind() == types.Int && !k.assigned[p.obj] {
			pr.vars[p.obj] = "p:" + p.name
		}
	}
	for i, ix := range k.index {
		if !k.assigned[ix.obj] && !k.assigned[k.dims[i].obj] {
			pr.ranges["p:"+ix.name] = varPoly("p:" + k.dims[i].name)
			pr.extent["p:"+k.dims[i].name] = true
		}
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
					if bound, ok := pr.poly(s.X); ok {
						name := "l:" + itoa(len(pr.ranges)) + ":" + id.Name
						pr.vars[v] = name
						pr.ranges[name] = bound
					}
				}
			}
		case *ast.ForStmt:
			pr.countedLoop(s)
		}
		return true
	})
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
	pr.ranges[name] = bound
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
			id := ast.Unparen(e.Args[0]).(*ast.Ident)
			if p := pr.k.byObj[info.Uses[id].(*types.Var)]; p != nil {
				return pr.lenPoly(p)
			}
		}
	}
	return nil, false
}

// lenPoly is buffer p's Len as a poly.
func (pr *prover) lenPoly(p *param) (poly, bool) {
	r := constPoly(1)
	for _, t := range pr.k.lens[p] {
		if q := paramNamed(pr.k, t); q != nil {
			name, ok := pr.vars[q.obj]
			if !ok {
				return nil, false
			}
			r = r.mul(varPoly(name))
		} else {
			n := int64(0)
			for _, c := range t {
				n = n*10 + int64(c-'0')
			}
			r = r.mul(constPoly(n))
		}
	}
	return r, true
}

// inRange proves 0 <= p < q from the variables' ranges, by reading p as
// a mixed-radix number: p = v + R*p' with v in [0, R) and 0 <= p' < q/R.
func (pr *prover) inRange(p, q poly) bool {
	if len(p) == 0 {
		return pr.positive(q)
	}
	for m, c := range p {
		r, ok := pr.ranges[m]
		if c != 1 || !ok {
			continue
		}
		rest, ok := p.add(varPoly(m), -1).divide(r)
		if !ok {
			continue
		}
		q2, ok := q.divide(r)
		if !ok {
			continue
		}
		if pr.inRange(rest, q2) {
			return true
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
	ast.Inspect(k.decl.Body, func(n ast.Node) bool {
		ix, ok := n.(*ast.IndexExpr)
		if !ok {
			return true
		}
		id, ok := ast.Unparen(ix.X).(*ast.Ident)
		if !ok {
			return true
		}
		v, _ := pr.g.p.info.Uses[id].(*types.Var)
		p := k.byObj[v]
		if p == nil || !p.slice {
			return true
		}
		i, ok1 := pr.poly(ix.Index)
		l, ok2 := pr.lenPoly(p)
		if ok1 && ok2 && pr.inRange(i, l) {
			k.proven[ix] = true
		}
		return true
	})
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
