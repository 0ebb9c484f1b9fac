package main

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Views and range over slices.
//
// A view is a local slice variable declared from a slice expression of a
// slice parameter or of another view, once, in a statement of its own:
//
//	row := A[i*n : (i+1)*n]   // or var row = A[...]; A[lo:], A[:hi], A[lo:hi:max]
//	for j, a := range row { s += a * x[j] }
//
// It is Go's slice: the expression checks its bounds as Go does (against
// the parent's capacity, a buffer's being its length on a device) and
// fails with Go's "slice bounds out of range" where they are not; an
// index of the view is checked against the view's length (not the
// buffer's), len(v) is its length. A kernel may index a view, range over
// it, take its len, slice it again and pass it to a //gompt:func helper
// that takes a slice. It may not assign to it after its declaration, use
// it as a value otherwise (w := v, v == nil), or let it leave the body:
// a view is an offset and a length into its buffer, not memory.
//
// range over a slice (a slice parameter, a view, a slice expression) or
// a team array has Go's semantics: the length is taken once, the value
// variable is a copy of the element read at the start of each
// iteration, and the variables are each iteration's own (Go 1.22).
//
// The checker records each view (fn.views) with the parameter it views:
// reads and writes through it are the parameter's, for the maps the
// launcher makes. The prover knows a view's length as hi-lo where both
// are polynomials (in a team kernel, whose threads go on after a failed
// check, only as the view's own length), and a range's index as in
// [0, len). The C keeps a view as a pointer into the buffer, its length
// and its capacity (viewemit.go); the Go image is Go's own slice.

// view is one view of a function.
type view struct {
	obj    *types.Var
	base   *param // the slice parameter it views
	parent *view  // the view it slices, nil when it slices base
	expr   *ast.SliceExpr
}

// sliceOf is the slice parameter or view e names, if it names one.
func (f *fn) sliceOf(info *types.Info, e ast.Expr) (*param, *view) {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil, nil
	}
	v, _ := info.Uses[id].(*types.Var)
	if v == nil {
		return nil, nil
	}
	if w := f.views[v]; w != nil {
		return w.base, w
	}
	if p := f.byObj[v]; p != nil && p.slice {
		return p, nil
	}
	return nil, nil
}

// isView reports whether v is one of f's views.
func (f *fn) isView(v *types.Var) bool { return f.views[v] != nil }

// viewHint says what a kernel may do with a view.
const viewHint = "a view (v := buf[lo:hi]) is indexed, ranged over, sliced, passed to a //gompt:func helper or given to len, and declared once"

// viewDecl checks the declaration of id from rhs when rhs is a slice
// expression (id := buf[lo:hi], var id = buf[lo:hi]), and reports
// whether it was one.
func (c *checker) viewDecl(id *ast.Ident, rhs ast.Expr) bool {
	se, ok := ast.Unparen(rhs).(*ast.SliceExpr)
	if !ok {
		return false
	}
	v, _ := c.info().Defs[id].(*types.Var)
	if v == nil {
		return false // _ or a redeclaration: the slice expression's refusal
	}
	base, parent := c.sliceExpr(se)
	if base == nil {
		c.bad[v] = true
		return true
	}
	if c.f.views == nil {
		c.f.views = map[*types.Var]*view{}
	}
	c.f.views[v] = &view{obj: v, base: base, parent: parent, expr: se}
	return true
}

// viewDecls checks a := whose values are all slice expressions (row :=
// A[lo:hi], or rv, rc := vals[lo:hi], cols[lo:hi]), each the declaration
// of a view, and reports whether s is one. Its values are evaluated
// before any is declared, as Go does: declared one after the other, they
// mean the same, since a value cannot use a variable s declares.
func (c *checker) viewDecls(s *ast.AssignStmt) bool {
	if len(s.Lhs) != len(s.Rhs) {
		return false
	}
	for i, r := range s.Rhs {
		if _, ok := ast.Unparen(r).(*ast.SliceExpr); !ok {
			return false
		}
		if v, _ := c.info().Defs[s.Lhs[i].(*ast.Ident)].(*types.Var); v == nil {
			return false // _ or a redeclaration: the slice expression's refusal
		}
	}
	for i, r := range s.Rhs {
		c.viewDecl(s.Lhs[i].(*ast.Ident), r)
	}
	return true
}

// sliceExpr checks slice expression se, of a slice parameter or view, and
// its bounds; it returns the parameter and the view sliced (nil, nil
// after reporting what se slices otherwise).
func (c *checker) sliceExpr(se *ast.SliceExpr) (*param, *view) {
	base, parent := c.f.sliceOf(c.info(), se.X)
	if base == nil {
		if id, ok := ast.Unparen(se.X).(*ast.Ident); ok {
			if v, _ := c.info().Uses[id].(*types.Var); v != nil && c.bad[v] {
				return nil, nil
			}
		}
		what := "a slice expression of " + exprString(se.X)
		if teamArrayOf(c.info(), c.f, se.X) != nil {
			c.unsupported(se.Pos(), what, "a team array is indexed or ranged over, not sliced")
		} else {
			c.unsupported(se.Pos(), what, "slice a slice parameter or a view")
		}
		return nil, nil
	}
	for _, b := range []ast.Expr{se.Low, se.High, se.Max} {
		if b != nil {
			c.expr(b)
		}
	}
	return base, parent
}

// rangeSlice checks a range over a slice (a slice parameter, a view or a
// slice expression of them) or a team array, and reports whether s is
// one: its value, when it has one, reads the parameter.
func (c *checker) rangeSlice(s *ast.RangeStmt) bool {
	t := c.info().TypeOf(s.X)
	var base *param
	switch u := t.Underlying().(type) {
	case *types.Slice:
		if se, ok := ast.Unparen(s.X).(*ast.SliceExpr); ok {
			if base, _ = c.sliceExpr(se); base == nil {
				return true
			}
			break
		}
		if base, _ = c.f.sliceOf(c.info(), s.X); base == nil {
			return false
		}
	case *types.Array:
		team := teamArrayOf(c.info(), c.f, s.X)
		if team == nil {
			return false
		}
		if s.Value != nil && !isBlank(s.Value) && writesTeamArray(c.info(), s.Body, team) {
			c.unsupported(s.Value.Pos(), "a range over team array "+team.Name()+" with a value while the loop writes "+team.Name(),
				"Go ranges over a copy of an array: index it in the loop, for i := range "+team.Name())
			return true
		}
		_ = u
	default:
		return false
	}
	for _, x := range []ast.Expr{s.Key, s.Value} {
		if x == nil {
			continue
		}
		if s.Tok == token.DEFINE {
			if id, ok := x.(*ast.Ident); ok && id.Name != "_" {
				c.local(id, false)
			}
		} else {
			c.lhs(x, false)
		}
	}
	if base != nil && s.Value != nil && !isBlank(s.Value) {
		base.read = true
	}
	c.block(s.Body.List)
	return true
}

func isBlank(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && id.Name == "_"
}

// writesTeamArray reports whether n assigns an element of team array v.
func writesTeamArray(info *types.Info, n ast.Node, v *types.Var) bool {
	found := false
	is := func(e ast.Expr) {
		if ix, ok := ast.Unparen(e).(*ast.IndexExpr); ok {
			if id, ok := ast.Unparen(ix.X).(*ast.Ident); ok && info.Uses[id] == v {
				found = true
			}
		}
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for _, l := range s.Lhs {
				is(l)
			}
		case *ast.IncDecStmt:
			is(s.X)
		}
		return !found
	})
	return found
}

// usesSlices reports whether f declares a view or ranges over a slice or
// an array: the lockstep Go image, whose varying locals are arrays of
// scalars, does not take them.
func usesSlices(info *types.Info, f *fn) bool {
	if len(f.views) > 0 {
		return true
	}
	found := false
	ast.Inspect(f.decl.Body, func(n ast.Node) bool {
		if r, ok := n.(*ast.RangeStmt); ok {
			if _, isInt := scalarOf(info.TypeOf(r.X)); !isInt {
				found = true
			}
		}
		return !found
	})
	return found
}

// sliceParamArg is the slice parameter of f that helper argument a (a
// slice parameter or a view) reaches.
func (g *gen) sliceParamArg(f *fn, a ast.Expr) *param {
	p, _ := f.sliceOf(g.p.info, a)
	return p
}

// The prover's part.

// sliceLen is the length of slice e (a slice parameter, a view, a slice
// expression of them) as a poly, when the prover knows it.
func (pr *prover) sliceLen(e ast.Expr) (poly, bool) {
	info := pr.g.p.info
	if se, ok := ast.Unparen(e).(*ast.SliceExpr); ok {
		if pr.k.team > 0 {
			return nil, false
		}
		return pr.boundsLen(se)
	}
	p, w := pr.k.sliceOf(info, e)
	switch {
	case w != nil:
		return pr.viewLen(w), true
	case p != nil:
		return pr.lenPoly(p)
	}
	return nil, false
}

// boundsLen is hi-lo of slice expression se, when both are polys.
func (pr *prover) boundsLen(se *ast.SliceExpr) (poly, bool) {
	lo := constPoly(0)
	if se.Low != nil {
		l, ok := pr.poly(se.Low)
		if !ok {
			return nil, false
		}
		lo = l
	}
	var hi poly
	if se.High != nil {
		h, ok := pr.poly(se.High)
		if !ok {
			return nil, false
		}
		hi = h
	} else {
		h, ok := pr.sliceLen(se.X)
		if !ok {
			return nil, false
		}
		hi = h
	}
	return hi.add(lo, -1), true
}

// viewLen is view w's length as a poly: hi-lo where the prover models
// both (not in a team kernel, whose threads go on after a failed check
// with an empty view), else a variable of its own.
func (pr *prover) viewLen(w *view) poly {
	if pr.viewLens == nil {
		pr.viewLens = map[*view]poly{}
	}
	if l, ok := pr.viewLens[w]; ok {
		return l
	}
	pr.viewLens[w] = varPoly("v:" + w.obj.Name() + ":" + itoa(int(w.obj.Pos()))) // no cycles
	if pr.k.team == 0 {
		if l, ok := pr.boundsLen(w.expr); ok {
			pr.viewLens[w] = l
		}
	}
	return pr.viewLens[w]
}

// rangeBound is the bound of a range's index over s.X, a slice or a team
// array: its length.
func (pr *prover) rangeBound(s *ast.RangeStmt) (poly, bool) {
	info := pr.g.p.info
	if t, ok := info.TypeOf(s.X).Underlying().(*types.Array); ok {
		return constPoly(t.Len()), true
	}
	return pr.sliceLen(s.X)
}

// viewIndex proves ix, an element of a view, in range of the view.
func (pr *prover) viewIndex(ix *ast.IndexExpr, e env) bool {
	_, w := pr.k.sliceOf(pr.g.p.info, ix.X)
	if w == nil {
		return false
	}
	l := pr.viewLen(w)
	if i, ok := pr.poly(ix.Index); ok && pr.inRange(i, l, e) {
		pr.k.proven[ix] = true
	}
	if n, ok := constOf(l); ok && pr.below(ix.Index, n) { // v[b&3] of a view of 4
		pr.k.proven[ix] = true
	}
	return true
}
