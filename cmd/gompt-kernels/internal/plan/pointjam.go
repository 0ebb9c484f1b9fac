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
	if !ok || len(s.Body.List) < 2 {
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
	up, ok := r.Body.List[0].(*ast.AssignStmt)
	if !ok || len(up.Lhs) != 1 || len(up.Rhs) != 1 {
		return nil
	}
	switch up.Tok {
	case token.ADD_ASSIGN, token.SUB_ASSIGN, token.MUL_ASSIGN:
	default:
		return nil
	}
	ix, ok := ast.Unparen(up.Lhs[0]).(*ast.IndexExpr)
	if !ok || !isVar(info, ix.X, cv) || !isVar(info, ix.Index, info.Defs[key]) || !pureRead(info, k, up.Rhs[0]) {
		return nil
	}
	pj.Range, pj.Update, pj.Written = r, up, view.Base
	// What the loop reads: every buffer it names, directly or through a
	// view; none may be c's own (but c[j] itself).
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
			if v == nil || n == c {
				return true
			}
			p := k.ByObj[v]
			if w := k.Fn.Views[v]; w != nil {
				p = w.Base
			}
			if p == nil || !p.Slice {
				return true
			}
			if p == view.Base {
				bad = true
			}
			reads[p] = true
		}
		return !bad
	})
	if bad {
		return nil
	}
	for _, p := range k.Params {
		if reads[p] {
			pj.Reads = append(pj.Reads, p)
		}
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
	assigned := false
	ast.Inspect(s.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				assigned = assigned || n.Tok != token.DEFINE && isVar(info, l, ctr)
			}
		case *ast.IncDecStmt:
			assigned = assigned || isVar(info, n.X, ctr)
		}
		return !assigned
	})
	return ctr, cond.Y, !assigned
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
