package plan

import (
	"go/ast"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// The prover's part.

// sliceLen is the length of slice e (a slice parameter, a view, a slice
// expression of them) as a poly, when the prover knows it.
func (pr *prover) sliceLen(e ast.Expr) (poly, bool) {
	info := pr.g.P.Info
	if se, ok := ast.Unparen(e).(*ast.SliceExpr); ok {
		if pr.k.Team > 0 {
			return nil, false
		}
		return pr.boundsLen(se)
	}
	p, w := pr.k.SliceOf(info, e)
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
	lo := ConstPoly(0)
	if se.Low != nil {
		l, ok := pr.Poly(se.Low)
		if !ok {
			return nil, false
		}
		lo = l
	}
	var hi poly
	if se.High != nil {
		h, ok := pr.Poly(se.High)
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
	return hi.Add(lo, -1), true
}

// viewLen is view w's length as a poly: hi-lo where the prover models
// both (not in a team kernel, whose threads go on after a failed check
// with an empty view), else a variable of its own.
func (pr *prover) viewLen(w *ir.View) poly {
	if pr.viewLens == nil {
		pr.viewLens = map[*ir.View]poly{}
	}
	if l, ok := pr.viewLens[w]; ok {
		return l
	}
	pr.viewLens[w] = VarPoly("v:" + w.Obj.Name() + ":" + ir.Itoa(int(w.Obj.Pos()))) // no cycles
	if pr.k.Team == 0 {
		if l, ok := pr.boundsLen(w.Expr); ok {
			pr.viewLens[w] = l
		}
	}
	return pr.viewLens[w]
}

// rangeBound is the bound of a range's index over s.X, a slice or a team
// array: its length.
func (pr *prover) rangeBound(s *ast.RangeStmt) (poly, bool) {
	info := pr.g.P.Info
	if t, ok := info.TypeOf(s.X).Underlying().(*types.Array); ok {
		return ConstPoly(t.Len()), true
	}
	return pr.sliceLen(s.X)
}

// viewIndex proves ix, an element of a view, in range of the view.
func (pr *prover) viewIndex(ix *ast.IndexExpr, e env) bool {
	_, w := pr.k.SliceOf(pr.g.P.Info, ix.X)
	if w == nil {
		return false
	}
	l := pr.viewLen(w)
	if i, ok := pr.Poly(ix.Index); ok && pr.inRange(i, l, e) {
		pr.k.Proven[ix] = true
	}
	if n, ok := ConstOf(l); ok && pr.below(ix.Index, n) { // v[b&3] of a view of 4
		pr.k.Proven[ix] = true
	}
	return true
}
