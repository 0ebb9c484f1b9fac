package plan

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// prover models a kernel's int expressions and proves index expressions in
// range: each index of the point lies in [0, its extent), each variable of
// a counted loop (for p := c; p < E; p++, or for p := range E) in [c, E),
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
					if ok && !pr.fits(bound) {
						ok = false // range over an int that may wrap: unmodelled
					} else if !ok {
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

// countedLoop recognises for p := s; p < E; p++ (or p <= E) with p assigned only by
// the post statement, E loop-invariant and s a start whose low end
// startOf knows.
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
	lo, ok := pr.startOf(init.Rhs[0])
	if !ok {
		return
	}
	cond, ok := s.Cond.(*ast.BinaryExpr)
	if !ok || cond.Op != token.LSS && cond.Op != token.LEQ {
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
	// p may be assigned only by the post statement (not by an assignment,
	// ++ or --, a for p = range, or through &p in the body).
	if ir.AssignedIn(pr.g.P.Info, s.Body, v) {
		return
	}
	bound, ok := pr.Poly(cond.Y)
	if call, isCall := ast.Unparen(cond.Y).(*ast.CallExpr); !ok && isCall && cond.Op == token.LSS && len(call.Args) == 1 {
		if id, _ := ast.Unparen(call.Fun).(*ast.Ident); id != nil && pr.g.P.Info.Types[id].IsBuiltin() && id.Name == "len" {
			bound, ok = pr.lenAlone(call.Args[0]) // j < len(b): an empty loop where b's Len is below 0
		}
	}
	if !ok {
		return
	}
	// E must be computed as its integer value, and p must never wrap:
	// p < E stops at E (at most MaxInt); p <= E only while E+1 fits too
	// (at MaxInt p++ wraps to MinInt and the loop goes on).
	if cond.Op == token.LEQ {
		next := bound.Add(ConstPoly(1), 1)
		if !pr.fits(bound, next) {
			return
		}
		bound = next // p <= E: below E+1
	} else if !pr.fits(bound) {
		return
	}
	name := "l:" + ir.Itoa(len(pr.ranges)) + ":" + id.Name
	pr.Vars[v] = name
	pr.ranges[name] = vrange{lo: lo, hi: bound}
}

// startOf is a low end of a counted loop's start s, at least 0: a
// constant, or v or v+1 for a ranged variable v (for j := i; j < m; j++
// over a triangle), which a loop variable or a point's index is, below an
// int bound, so that v+1 does not wrap.
func (pr *prover) startOf(s ast.Expr) (int64, bool) {
	p, ok := pr.Poly(s)
	if !ok {
		return 0, false
	}
	c := p[""]
	if c0, ok := ConstOf(p); ok {
		return c0, c0 >= 0
	}
	rest := p.Add(ConstPoly(c), -1)
	if len(rest) != 1 || (c != 0 && c != 1) {
		return 0, false
	}
	for m, coef := range rest {
		if r, ok := pr.ranges[m]; ok && coef == 1 && r.lo >= 0 {
			return r.lo + c, true
		}
	}
	return 0, false
}

// Poly models int expression e, when it is one: constants, int variables
// that are never assigned (and locals defined once from such), +, -, *,
// int conversions of ints, and len of a buffer (its Len). An expression
// whose coefficients leave an int64 on the way is not modelled.
func (pr *prover) Poly(e ast.Expr) (poly, bool) {
	p, ok := pr.poly(e)
	return p, ok && !p.overflowed()
}

func (pr *prover) poly(e ast.Expr) (poly, bool) {
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
		return pr.poly(e.X)
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
	return sum, !sum.overflowed()
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

// maxInt and minInt bound the values of an int (a Go int is 64 bits on
// every target gompt runs on).
var (
	maxInt = big.NewInt(math.MaxInt64)
	minInt = big.NewInt(math.MinInt64)
)

// fits reports whether every value of each of bounds fits an int64 at
// run time: from the intervals of its variables (extents from 1, a
// point's index below its extent, a loop's variable within its range), or
// because it is a buffer's Len, or, for a bound over the integer
// parameters alone, because the runtime will check it (guards, the
// kernel's Bounds). Go computes an int expression modulo 2^64, so a bound
// whose integer value fits an int is computed as that value, and a loop
// it bounds runs as the prover models it; one that may leave an int wraps
// (n-1 for an int parameter n that is math.MinInt is math.MaxInt), and
// the loop runs past what its poly says.
//
// A buffer's Len fits: the runtime evaluates every Len before a launch
// and refuses one whose value leaves an int64 (device.Kernel.NeedLen), so
// for j := range m*k with len(b)=m*k stays modelled.
func (pr *prover) fits(bounds ...poly) bool {
	var guard []poly
	for _, b := range bounds {
		if b.overflowed() {
			return false
		}
		lo, hi := pr.interval(b, map[string]bool{})
		if lo.Cmp(minInt) >= 0 && hi.Cmp(maxInt) <= 0 || pr.isLen(b) {
			continue
		}
		if !pr.overParams(b) {
			return false
		}
		guard = append(guard, b)
	}
	for _, b := range guard {
		pr.guard(b)
	}
	return true
}

// guard adds b, a bound over the integer parameters, to the kernel's
// Bounds (once), which the runtime checks before every launch: whichever
// prover of the kernel relies on it, the kernel carries it.
func (pr *prover) guard(b poly) {
	e := lenExprOf(b)
	if len(e) > 0 && e[0].Sub {
		e = append(ir.LenExpr{{Terms: []string{"0"}}}, e...) // Len's form starts with a product added
	}
	text := func(e ir.LenExpr) string { return e.Format(func(t string) string { return t }, "*", "+", "-") }
	for _, have := range pr.k.Bounds {
		if text(have) == text(e) {
			return
		}
	}
	pr.k.Bounds = append(pr.k.Bounds, e)
}

// isLen reports whether p is the Len of one of the kernel's buffers.
func (pr *prover) isLen(p poly) bool {
	for _, q := range pr.k.Params {
		if l, ok := pr.lenPoly(q); ok && q.Slice && len(pr.k.Lens[q]) > 0 && l.Equal(p) {
			return true
		}
	}
	return false
}

// overParams reports whether p's variables are all integer scalar
// parameters (neither a point's index nor a thread's, nor a loop's
// variable): a runtime can evaluate it before a launch.
func (pr *prover) overParams(p poly) bool {
	for m := range p {
		for _, v := range splitMono(m) {
			if _, ranged := pr.ranges[v]; ranged || !strings.HasPrefix(v, "p:") {
				return false
			}
		}
	}
	return true
}

// interval is the smallest and largest value of p over the intervals of
// its variables (varInterval), as exact integers.
func (pr *prover) interval(p poly, seen map[string]bool) (lo, hi *big.Int) {
	lo, hi = new(big.Int), new(big.Int)
	for m, c := range p {
		mlo, mhi := big.NewInt(c), big.NewInt(c)
		if m != "" {
			mlo.SetInt64(1)
			mhi.SetInt64(1)
			for _, v := range strings.Split(m, "*") {
				vlo, vhi := pr.varInterval(v, seen)
				mlo, mhi = mulInterval(mlo, mhi, vlo, vhi)
			}
			mlo, mhi = mulInterval(mlo, mhi, big.NewInt(c), big.NewInt(c))
		}
		lo.Add(lo, mlo)
		hi.Add(hi, mhi)
	}
	return lo, hi
}

// varInterval is the values variable name can take: an extent's [1,
// MaxInt]; a ranged variable's [lo, largest value of its end - 1]; any
// int otherwise.
func (pr *prover) varInterval(name string, seen map[string]bool) (lo, hi *big.Int) {
	if pr.extent[name] {
		return big.NewInt(1), maxInt
	}
	r, ok := pr.ranges[name]
	if !ok || seen[name] || r.hi == nil {
		return minInt, maxInt
	}
	seen[name] = true
	defer delete(seen, name)
	_, h := pr.interval(r.hi, seen)
	h = new(big.Int).Sub(h, big.NewInt(1))
	lo = big.NewInt(r.lo)
	if h.Cmp(maxInt) > 0 {
		h = maxInt
	}
	if h.Cmp(lo) < 0 {
		h = lo // an empty range: the variable never has a value
	}
	return lo, h
}

// mulInterval is the interval of x*y for x in [alo, ahi], y in [blo, bhi].
func mulInterval(alo, ahi, blo, bhi *big.Int) (lo, hi *big.Int) {
	ps := []*big.Int{
		new(big.Int).Mul(alo, blo), new(big.Int).Mul(alo, bhi),
		new(big.Int).Mul(ahi, blo), new(big.Int).Mul(ahi, bhi),
	}
	lo, hi = ps[0], ps[0]
	for _, p := range ps[1:] {
		if p.Cmp(lo) < 0 {
			lo = p
		}
		if p.Cmp(hi) > 0 {
			hi = p
		}
	}
	return lo, hi
}
