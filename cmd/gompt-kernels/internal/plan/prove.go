package plan

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// A poly is a polynomial with integer coefficients over a kernel's int
// variables: monomial (the sorted names of its variables joined by "*",
// "" for the constant term) to coefficient. The prover models int
// expressions as polys: int arithmetic wraps modulo 2^64, so two
// expressions equal as polys are equal as ints.
type poly map[string]int64

func (p poly) Add(q poly, sign int64) poly {
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

func (p poly) Equal(q poly) bool { return len(p.Add(q, -1)) == 0 }

func VarPoly(name string) poly { return poly{name: 1} }

func ConstPoly(c int64) poly {
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
	g      *ir.Program
	k      *ir.Kernel
	Vars   map[*types.Var]string // variable -> its name in polys
	defs   map[*types.Var]ast.Expr
	ranges map[string]vrange // variable -> its range where it is declared
	extent map[string]bool   // the extents' names: at least 1 in a running kernel

	viewLens map[*ir.View]poly // the views' lengths (view.go)
}

func NewProver(g *ir.Program, k *ir.Kernel) *prover {
	pr := &prover{g: g, k: k, Vars: map[*types.Var]string{}, defs: map[*types.Var]ast.Expr{}, ranges: map[string]vrange{}, extent: map[string]bool{}}
	for _, p := range k.Params {
		if !p.Slice && p.T.Kind() == types.Int && !k.Assigned[p.Obj] {
			pr.Vars[p.Obj] = "p:" + p.Name
		}
	}
	for i, ix := range k.Index {
		if !k.Assigned[ix.Obj] && !k.Assigned[k.Dims[i].Obj] {
			pr.ranges["p:"+ix.Name] = vrange{hi: VarPoly("p:" + k.Dims[i].Name)}
			pr.extent["p:"+k.Dims[i].Name] = true
		}
	}
	if k.Thread != nil && !k.Assigned[k.Thread.Obj] { // a team kernel's thread: [0, team)
		pr.ranges["p:"+k.Thread.Name] = vrange{hi: ConstPoly(int64(k.Team))}
	}
	// Locals defined once (x := e, var x = e) and never assigned, and
	// counted loops' variables.
	ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE && len(s.Lhs) == len(s.Rhs) {
				for i, l := range s.Lhs {
					if v, ok := g.P.Info.Defs[l.(*ast.Ident)].(*types.Var); ok && !k.Assigned[v] {
						pr.defs[v] = s.Rhs[i]
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range s.Names {
				if v, ok := g.P.Info.Defs[id].(*types.Var); ok && !k.Assigned[v] && i < len(s.Values) && len(s.Values) == len(s.Names) {
					pr.defs[v] = s.Values[i]
				}
			}
		case *ast.RangeStmt:
			if id, ok := s.Key.(*ast.Ident); ok && s.Tok == token.DEFINE {
				if v, ok := g.P.Info.Defs[id].(*types.Var); ok && v.Type() == types.Typ[types.Int] && !k.Assigned[v] {
					bound, ok := pr.Poly(s.X)
					if !ok {
						bound, ok = pr.rangeBound(s) // a slice's or a team array's length
					}
					if ok {
						name := "l:" + ir.Itoa(len(pr.ranges)) + ":" + id.Name
						pr.Vars[v] = name
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
	v, _ := pr.g.P.Info.Defs[id].(*types.Var)
	if v == nil || v.Type() != types.Typ[types.Int] {
		return
	}
	if tv := pr.g.P.Info.Types[init.Rhs[0]]; tv.Value == nil || constant.Sign(tv.Value) != 0 {
		return
	}
	cond, ok := s.Cond.(*ast.BinaryExpr)
	if !ok || cond.Op != token.LSS {
		return
	}
	if cid, ok := ast.Unparen(cond.X).(*ast.Ident); !ok || pr.g.P.Info.Uses[cid] != v {
		return
	}
	switch post := s.Post.(type) {
	case *ast.IncDecStmt:
		if pid, ok := post.X.(*ast.Ident); !ok || post.Tok != token.INC || pr.g.P.Info.Uses[pid] != v {
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
				if lid, ok := l.(*ast.Ident); ok && pr.g.P.Info.Uses[lid] == v {
					assigned = true
				}
			}
		case *ast.IncDecStmt:
			if lid, ok := a.X.(*ast.Ident); ok && pr.g.P.Info.Uses[lid] == v {
				assigned = true
			}
		}
		return true
	})
	if assigned {
		return
	}
	bound, ok := pr.Poly(cond.Y)
	if !ok {
		return
	}
	name := "l:" + ir.Itoa(len(pr.ranges)) + ":" + id.Name
	pr.Vars[v] = name
	pr.ranges[name] = vrange{hi: bound}
}

// Poly models int expression e, when it is one: constants, int variables
// that are never assigned (and locals defined once from such), +, -, *,
// int conversions of ints, and len of a buffer (its Len).
func (pr *prover) Poly(e ast.Expr) (poly, bool) {
	info := pr.g.P.Info
	tv := info.Types[e]
	if tv.Type != types.Typ[types.Int] && tv.Type != types.Typ[types.UntypedInt] {
		return nil, false
	}
	if tv.Value != nil {
		v, ok := constant.Int64Val(constant.ToInt(tv.Value))
		return ConstPoly(v), ok
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return pr.Poly(e.X)
	case *ast.Ident:
		v, _ := info.Uses[e].(*types.Var)
		if v == nil {
			return nil, false
		}
		if name, ok := pr.Vars[v]; ok {
			return VarPoly(name), true
		}
		if d, ok := pr.defs[v]; ok {
			delete(pr.defs, v) // no cycles
			p, ok := pr.Poly(d)
			pr.defs[v] = d
			return p, ok
		}
	case *ast.BinaryExpr:
		x, ok1 := pr.Poly(e.X)
		y, ok2 := pr.Poly(e.Y)
		if !ok1 || !ok2 {
			return nil, false
		}
		switch e.Op {
		case token.ADD:
			return x.Add(y, 1), true
		case token.SUB:
			return x.Add(y, -1), true
		case token.MUL:
			return x.mul(y), true
		}
	case *ast.UnaryExpr:
		if x, ok := pr.Poly(e.X); ok && e.Op == token.SUB {
			return poly{}.Add(x, -1), true
		} else if ok && e.Op == token.ADD {
			return x, true
		}
	case *ast.CallExpr:
		fun := ast.Unparen(e.Fun)
		if tv := info.Types[fun]; tv.IsType() && len(e.Args) == 1 {
			return pr.Poly(e.Args[0])
		} else if tv.IsBuiltin() && fun.(*ast.Ident).Name == "len" {
			return pr.sliceLen(e.Args[0]) // a slice parameter's or a view's
		}
	}
	return nil, false
}

// lenPoly is buffer p's Len as a poly: its value wherever it is
// positive (the length is 0 elsewhere).
func (pr *prover) lenPoly(p *ir.Param) (poly, bool) {
	var sum poly
	for _, prod := range pr.k.Lens[p] {
		r := ConstPoly(1)
		for _, t := range prod.Terms {
			if q := ir.ParamNamed(pr.k, t); q != nil {
				name, ok := pr.Vars[q.Obj]
				if !ok {
					return nil, false
				}
				r = r.mul(VarPoly(name))
			} else {
				n, err := strconv.ParseInt(t, 10, 64)
				if err != nil {
					return nil, false
				}
				r = r.mul(ConstPoly(n))
			}
		}
		sign := int64(1)
		if prod.Sub {
			sign = -1
		}
		sum = sum.Add(r, sign)
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
		qm := q.Add(ConstPoly(qc), -1)
		for _, d := range []int64{0, p[""], qc} {
			if d >= 0 && d <= qc && pr.inRange(p.Add(ConstPoly(d), -1), qm, e) {
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
		p2, ok1 := p.Add(ConstPoly(c), -1).divide(ConstPoly(qc))
		q2, ok2 := q.divide(ConstPoly(qc))
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
			digitHi := r.hi.Add(ConstPoly(c), 1)
			rest := p.Add(VarPoly(m), -1).Add(ConstPoly(c), -1)
			for _, radix := range []poly{pr.ranges[m].hi, r.hi, q} {
				if slack, ok := ConstOf(radix.Add(digitHi, -1)); !ok || slack < 0 {
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
	lin, vol = poly{}, ConstPoly(1)
	for i, ix := range pr.k.Index {
		name, ok1 := pr.Vars[ix.Obj]
		ext, ok2 := pr.Vars[pr.k.Dims[i].Obj]
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		lin = lin.Add(vol.mul(VarPoly(name)), 1)
		vol = vol.mul(VarPoly(ext))
	}
	return lin, vol, true
}

// Prove marks the kernel body's index expressions proven in range, and
// picks each buffer's map: To when only read, ToFrom when written and read,
// and for a buffer only written From when every path through the body
// stores at the point's linear index and the buffer holds exactly one
// element per point, else ToFrom (From would copy back, over elements the
// kernel never wrote, what device memory held).
func (pr *prover) Prove() {
	k := pr.k
	base := env{}
	for name, r := range pr.ranges {
		base[name] = r
	}
	pr.walk(k.Decl.Body.List, base)
	if k.Nocheck {
		// check=off: every element access is taken as in range, on the
		// device (no check) and in the Go image (no bounds test).
		ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
			if ix, ok := n.(*ast.IndexExpr); ok {
				if p, _ := k.SliceOf(pr.g.P.Info, ix.X); p != nil { // a buffer's element, or a view's
					k.Proven[ix] = true
				}
			}
			return true
		})
	}
	lin, vol, linOK := pr.linear()
	for _, p := range k.Args() {
		if !p.Slice {
			continue
		}
		switch {
		case p.Written && p.Read:
			k.Maps[p] = "ToFrom"
		case p.Written:
			k.Maps[p] = "ToFrom"
			if l, ok := pr.lenPoly(p); ok && linOK && l.Equal(vol) {
				if w, safe := pr.writes(k.Decl.Body.List, p, lin); w && safe {
					k.Maps[p] = "From"
				}
			}
		default:
			k.Maps[p] = "To"
		}
	}
}

// writes reports whether every path through list that falls off its end
// has stored to buffer p at index lin (w), and whether every return inside
// list comes after such a store (safe). Loops count as storing nothing.
func (pr *prover) writes(list []ast.Stmt, p *ir.Param, lin poly) (w, safe bool) {
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
func (pr *prover) stmtWrites(s ast.Stmt, p *ir.Param, lin poly) (w, safe, exits bool) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.ASSIGN {
			for _, l := range s.Lhs {
				if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
					if id, ok := ast.Unparen(ix.X).(*ast.Ident); ok && pr.g.P.Info.Uses[id] == p.Obj {
						if i, ok := pr.Poly(ix.Index); ok && i.Equal(lin) {
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
		v, _ := pr.g.P.Info.Uses[id].(*types.Var)
		if n, ok := pr.k.TeamArrays[v]; ok { // a team array: its constant length
			if i, ok := pr.Poly(ix.Index); ok && pr.inRange(i, ConstPoly(int64(n)), e) {
				pr.k.Proven[ix] = true
			}
			return true
		}
		if pr.viewIndex(ix, e) {
			return true
		}
		p := pr.k.ByObj[v]
		if p == nil || !p.Slice {
			return true
		}
		i, ok1 := pr.Poly(ix.Index)
		l, ok2 := pr.lenPoly(p)
		if ok1 && ok2 && pr.inRange(i, l, e) {
			pr.k.Proven[ix] = true
		}
		if n, ok := ConstOf(l); ok && ok2 && pr.below(ix.Index, n) {
			pr.k.Proven[ix] = true
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
	info := pr.g.P.Info
	if n <= 0 {
		return false
	}
	if tv := info.Types[e]; tv.Value != nil {
		v, ok := constant.Int64Val(constant.ToInt(tv.Value))
		return ok && v >= 0 && v < n
	}
	t, _ := ir.ScalarOf(info.TypeOf(e))
	if t.IsInt() && !t.Signed() && t.Bits() < 63 && int64(1)<<t.Bits() <= n {
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
			xt, _ := ir.ScalarOf(info.TypeOf(e.X))
			c, ok := constArg(e.Y)
			return ok && xt.IsInt() && !xt.Signed() && c > 0 && c <= n
		}
	case *ast.CallExpr:
		// A conversion keeps a value in [0, n) when the type holds n-1.
		if tv := info.Types[e.Fun]; tv.IsType() && len(e.Args) == 1 {
			to, ok := ir.ScalarOf(tv.Type)
			if !ok || !to.IsInt() {
				return false
			}
			bits := to.Bits()
			if to.Signed() {
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
	FlipOp   = map[token.Token]token.Token{token.LSS: token.GTR, token.GTR: token.LSS, token.LEQ: token.GEQ, token.GEQ: token.LEQ, token.EQL: token.EQL, token.NEQ: token.NEQ}
	negateOp = map[token.Token]token.Token{token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR, token.EQL: token.NEQ, token.NEQ: token.EQL}
)

// atom narrows e by comparison c being truth.
func (pr *prover) atom(e env, c *ast.BinaryExpr, truth bool) env {
	op, ok := FlipOp[c.Op]
	if !ok {
		return e
	}
	op = c.Op
	name, other := pr.rangedVar(c.X, e), c.Y
	if name == "" {
		name, other, op = pr.rangedVar(c.Y, e), c.X, FlipOp[c.Op]
	}
	if name == "" {
		return e
	}
	if !truth {
		op = negateOp[op]
	}
	val, ok := pr.Poly(other)
	if !ok {
		return e
	}
	r := e[name]
	c0, isConst := ConstOf(val)
	// le reports whether a <= b, known from their difference.
	le := func(a, b poly) bool {
		d, ok := ConstOf(b.Add(a, -1))
		return ok && d >= 0
	}
	switch op {
	case token.NEQ:
		if isConst && c0 == r.lo {
			r.lo++
		} else if val.Equal(r.hi.Add(ConstPoly(1), -1)) {
			r.hi = val
		}
	case token.EQL:
		if isConst && c0 >= r.lo {
			r.lo = c0
			if h := ConstPoly(c0 + 1); le(h, r.hi) {
				r.hi = h
			}
		}
	case token.LSS, token.LEQ:
		if op == token.LEQ {
			val = val.Add(ConstPoly(1), 1)
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
	v, _ := pr.g.P.Info.Uses[id].(*types.Var)
	name, ok := pr.Vars[v]
	if _, ranged := e[name]; !ok || !ranged {
		return ""
	}
	return name
}

// ConstOf is p's value when p is a constant.
func ConstOf(p poly) (int64, bool) {
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
