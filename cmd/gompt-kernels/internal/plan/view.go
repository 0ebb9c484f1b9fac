package plan

import (
	"go/ast"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// The prover's part.

// sliceLen is the length of slice e (a slice parameter, a view, a slice
// expression of them) as a poly, when the prover knows it. A parameter's
// length is its Len where Len is at least 0 (max(Len, 0) otherwise),
// so its Len serves only where it cannot be negative; lenAlone takes it
// where the length is a loop's whole bound.
func (pr *prover) sliceLen(e ast.Expr) (poly, bool) { return pr.lenOf(e, false) }

// lenAlone is sliceLen for a length that bounds a loop by itself (for j :=
// range b, j < len(b)): there a Len below 0 bounds an empty loop, as the
// length 0 does, and the Len serves whatever its sign.
func (pr *prover) lenAlone(e ast.Expr) (poly, bool) { return pr.lenOf(e, true) }

func (pr *prover) lenOf(e ast.Expr, alone bool) (poly, bool) {
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
		l, ok := pr.lenPoly(p)
		if ok && !alone {
			if lo, _ := pr.interval(l, map[string]bool{}); lo.Sign() < 0 {
				return nil, false // the length is max(Len, 0), not Len
			}
		}
		return l, ok
	}
	return nil, false
}

// boundsLen is hi-lo of slice expression se, when both are polys and
// hi-lo fits an int64 (fits): Go's slice expression checks 0 <= lo <= hi
// <= cap on lo and hi as computed, modulo 2^64, so the length is hi-lo
// modulo 2^64, which is hi-lo itself only where that fits (b[0:m*k] with
// m*k = 2^64 is b[0:0]).
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
	l := hi.Add(lo, -1)
	return l, pr.fits(l)
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
	return pr.lenAlone(s.X)
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
