package plan

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// PointJams finds the loops of k's point-at-a-time Go image whose turns
// can run ir.Jam at a time over an inner loop's elements (ir.PointJam):
//
//	for k := 0; k < nk; k++ {
//		a := alpha * A[i*nk+k]     // locals of the turn, from pure values
//		b := B[k*nj : (k+1)*nj]    // or views
//		for j := range c {         // c a view declared before the loop
//			c[j] += a * b[j]       // one update of c[j], reading no c
//		}
//	}
//
// Each element then goes through its updates in Go's order, held in a
// register from one turn to the next, where a turn at a time loads and
// stores it once per turn (gemm's row on host:0: the loop is bound by a
// store a cycle). The order across elements changes, which is only the
// same program where c's buffer overlaps none the loop reads: the image
// tests that at run time (kernelrt.Apart), and runs the loop as written
// where it does not hold (a program may pass one slice twice).
func PointJams(g *ir.Program, k *ir.Kernel) map[*ast.ForStmt]*ir.PointJam {
	if k.Team > 0 || k.Lanes != nil || k.Split != nil || k.Reduce != "" || len(k.ReduceArrays) > 0 || k.Atomic {
		return nil
	}
	info := g.P.Info
	var out map[*ast.ForStmt]*ir.PointJam
	ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
		s, ok := n.(*ast.ForStmt)
		if !ok {
			return true
		}
		if pj := pointJam(info, k, s); pj != nil {
			if out == nil {
				out = map[*ast.ForStmt]*ir.PointJam{}
			}
			out[s] = pj
		}
		return true
	})
	return out
}

func pointJam(info *types.Info, k *ir.Kernel, s *ast.ForStmt) *ir.PointJam {
	ctr, bound, ok := countedLoop(info, k, s)
	if !ok || len(s.Body.List) < 1 {
		return nil
	}
	pj := &ir.PointJam{Ctr: ctr, Bound: bound}
	body := s.Body.List
	for _, st := range body[:len(body)-1] {
		as, ok := st.(*ast.AssignStmt)
		if !ok || as.Tok != token.DEFINE || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return nil
		}
		id, _ := as.Lhs[0].(*ast.Ident)
		v, _ := info.Defs[id].(*types.Var)
		if v == nil {
			return nil
		}
		if se, isSlice := ast.Unparen(as.Rhs[0]).(*ast.SliceExpr); isSlice {
			if p, _ := k.Fn.SliceOf(info, se.X); p == nil || se.Slice3 || se.Low != nil && !pure(info, k, se.Low) || se.High != nil && !pure(info, k, se.High) {
				return nil
			}
		} else if !pure(info, k, as.Rhs[0]) {
			return nil
		}
		pj.Defs = append(pj.Defs, as)
		pj.Locals = append(pj.Locals, v)
	}
	if f, isFor := body[len(body)-1].(*ast.ForStmt); isFor {
		return rowJam(info, k, s, pj, f)
	}
	r, ok := body[len(body)-1].(*ast.RangeStmt)
	if !ok || r.Value != nil || r.Tok != token.DEFINE || len(r.Body.List) != 1 {
		return nil
	}
	key, _ := r.Key.(*ast.Ident)
	c, _ := ast.Unparen(r.X).(*ast.Ident)
	if key == nil || c == nil {
		return nil
	}
	cv, _ := info.Uses[c].(*types.Var)
	view := k.Fn.Views[cv]
	if view == nil || cv.Pos() >= s.Pos() {
		return nil // a view declared before the loop, the same every turn
	}
	up, ix := jamUpdate(info, k, r.Body.List[0])
	if up == nil || !isVar(info, ix.X, cv) || !isVar(info, ix.Index, info.Defs[key]) {
		return nil
	}
	pj.Range, pj.Update, pj.Written = r, up, view.Base
	if !jamReads(info, k, s, pj, ix) {
		return nil
	}
	return pj
}

// jamReads fills pj.Reads: every buffer loop s names, directly or
// through a view; none may be the written one's (but at ix, the element
// updated). False where one is.
func jamReads(info *types.Info, k *ir.Kernel, s *ast.ForStmt, pj *ir.PointJam, ix *ast.IndexExpr) bool {
	reads := map[*ir.Param]bool{}
	bad := false
	ast.Inspect(s.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IndexExpr:
			if n == ix {
				return false // c[j], the element updated
			}
			if k.Rows != nil && k.Rows.At[n] != nil {
				bad = true
			}
		case *ast.Ident:
			v, _ := info.Uses[n].(*types.Var)
			if v == nil || pj.Range != nil && n == ast.Unparen(pj.Range.X) {
				return true // the range's view: c[j] is the element
			}
			p := k.ByObj[v]
			if w := k.Fn.Views[v]; w != nil {
				p = w.Base
			}
			if p == nil || !p.Slice {
				return true
			}
			if p == pj.Written {
				bad = true
			}
			reads[p] = true
		}
		return !bad
	})
	if bad {
		return false
	}
	for _, p := range k.Params {
		if reads[p] {
			pj.Reads = append(pj.Reads, p)
		}
	}
	return true
}

// jamUpdate is st as an inner loop's update of one element, el op= e
// (op +, - or *) with e pure but for elements not proven (Go's test fails
// the point, as written); nil where st is not one.
func jamUpdate(info *types.Info, k *ir.Kernel, st ast.Stmt) (*ast.AssignStmt, *ast.IndexExpr) {
	up, ok := st.(*ast.AssignStmt)
	if !ok || len(up.Lhs) != 1 || len(up.Rhs) != 1 {
		return nil, nil
	}
	switch up.Tok {
	case token.ADD_ASSIGN, token.SUB_ASSIGN, token.MUL_ASSIGN:
	default:
		return nil, nil
	}
	ix, ok := ast.Unparen(up.Lhs[0]).(*ast.IndexExpr)
	if !ok || !pureRead(info, k, up.Rhs[0]) {
		return nil, nil
	}
	return up, ix
}

// rowJam completes pj for an inner counted loop f over a row of a
// buffer: for j := lo; j < hi; j++ (or j <= hi) { buf[row + j] op= e },
// with lo, hi and row the same at every turn of s, the element proven in
// range (so the row, from lo's element to hi's, is), and e pure but for
// elements not proven (Go's test fails the point, as written).
func rowJam(info *types.Info, k *ir.Kernel, s *ast.ForStmt, pj *ir.PointJam, f *ast.ForStmt) *ir.PointJam {
	init, isAssign := f.Init.(*ast.AssignStmt)
	if !isAssign || init.Tok != token.DEFINE || len(init.Lhs) != 1 || len(f.Body.List) != 1 {
		return nil
	}
	j, _ := info.Defs[init.Lhs[0].(*ast.Ident)].(*types.Var)
	cond, isBin := f.Cond.(*ast.BinaryExpr)
	post, isInc := f.Post.(*ast.IncDecStmt)
	if j == nil || !types.Identical(j.Type(), types.Typ[types.Int]) || !isBin || cond.Op != token.LSS && cond.Op != token.LEQ ||
		!isVar(info, cond.X, j) || !isInc || post.Tok != token.INC || !isVar(info, post.X, j) {
		return nil
	}
	same := sameEachTurn(info, k, s, pj.Ctr)
	if !same(init.Rhs[0]) || !same(cond.Y) {
		return nil
	}
	up, ix := jamUpdate(info, k, f.Body.List[0])
	if up == nil || !k.Proven[ix] {
		return nil
	}
	p, view := k.Fn.SliceOf(info, ix.X)
	if p == nil || view != nil && view.Obj.Pos() >= s.Pos() {
		return nil // a buffer, or a view declared before the loop
	}
	var row ast.Expr
	switch e := ast.Unparen(ix.Index).(type) {
	case *ast.Ident:
		if !isVar(info, e, j) {
			return nil
		}
	case *ast.BinaryExpr:
		switch {
		case e.Op != token.ADD:
			return nil
		case isVar(info, e.Y, j):
			row = e.X
		case isVar(info, e.X, j):
			row = e.Y
		default:
			return nil
		}
		if !same(row) || mentions(info, row, j) {
			return nil
		}
	default:
		return nil
	}
	pj.Loop, pj.Update, pj.Elem, pj.Written = f, up, ix, p
	pj.Row, pj.Lo, pj.Hi, pj.Incl, pj.InnerCounter = row, init.Rhs[0], cond.Y, cond.Op == token.LEQ, j
	pj.InnerRead = mentions(info, up.Rhs[0], j)
	if !jamReads(info, k, s, pj, ix) {
		return nil
	}
	return pj
}

// countedLoop reports whether s is for ctr := e; ctr < bound; ctr++, ctr
// an integer that the body does not assign, and bound pure and free of
// ctr.
func countedLoop(info *types.Info, k *ir.Kernel, s *ast.ForStmt) (ctr *types.Var, bound ast.Expr, ok bool) {
	init, isAssign := s.Init.(*ast.AssignStmt)
	if !isAssign || init.Tok != token.DEFINE || len(init.Lhs) != 1 || len(init.Rhs) != 1 {
		return nil, nil, false
	}
	id, _ := init.Lhs[0].(*ast.Ident)
	if id == nil {
		return nil, nil, false
	}
	ctr, _ = info.Defs[id].(*types.Var)
	if ctr == nil {
		return nil, nil, false
	}
	if t, isBasic := ctr.Type().Underlying().(*types.Basic); !isBasic || t.Info()&types.IsInteger == 0 {
		return nil, nil, false
	}
	cond, isBin := s.Cond.(*ast.BinaryExpr)
	if !isBin || cond.Op != token.LSS || !isVar(info, cond.X, ctr) || mentions(info, cond.Y, ctr) || !pure(info, k, cond.Y) {
		return nil, nil, false
	}
	post, isInc := s.Post.(*ast.IncDecStmt)
	if !isInc || post.Tok != token.INC || !isVar(info, post.X, ctr) {
		return nil, nil, false
	}
	return ctr, cond.Y, !ir.AssignedIn(info, s.Body, ctr)
}

// isVar reports whether e names v.
func isVar(info *types.Info, e ast.Expr, v types.Object) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && v != nil && info.Uses[id] == v
}

// pureRead is pure, except that an element need not be proven in range
// (Go's test of it fails the point, as it would written as it is).
func pureRead(info *types.Info, k *ir.Kernel, e ast.Expr) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IndexExpr:
			ok = pureRead(info, k, n.X) && pureRead(info, k, n.Index)
			return false
		case *ast.SliceExpr:
			ok = false
		case *ast.CallExpr:
			ok = pure(info, k, n)
			return false
		case *ast.BinaryExpr:
			ok = !canFault(info, n)
		}
		return ok
	})
	return ok
}
