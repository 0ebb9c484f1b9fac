package plan

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// Split plans k's split (nil where none applies): it finds the first if statement of k's body whose condition
// is a disjunction of comparisons of the dimension-0 index with values
// that do not depend on it (x == 0, x == nx-1, x < 2...) and of tests that
// do not depend on it at all (y == 0), with only params, indices and
// constants in them.
//
// Outside the interior the test is true: a point below the interior's
// start max(Lo...) lies below one of the Lo ends, whose comparison holds
// there (x < e, x <= e; x == 0 at x < 1, as x >= 0), and a point at or
// past its end min(Hi...) (but before the row's end, at most the extent)
// lies past one of the Hi ends (x > e, x >= e; x == nx-1 at x >= nx-1,
// as x < nx); on a row where one of Rows holds the test holds at every
// point.
func Split(g *ir.Program, k *ir.Kernel) *ir.Split {
	if k.Reduce != "" || k.Assigned[k.Index[0].Obj] {
		return nil
	}
	x := k.Index[0].Obj
	body := k.Decl.Body.List
	for i, s := range body {
		ifs, ok := s.(*ast.IfStmt)
		if !ok {
			continue
		}
		if ifs.Init != nil {
			return nil
		}
		sp := &ir.Split{Test: ifs}
		if !boundaryAtoms(g, k, x, ifs.Cond, sp) || len(sp.Lo)+len(sp.Hi) == 0 {
			return nil
		}
		sp.Interior = append(sp.Interior, body[:i]...)
		switch e := ifs.Else.(type) {
		case *ast.BlockStmt:
			sp.Interior = append(sp.Interior, e.List...)
		case *ast.IfStmt:
			sp.Interior = append(sp.Interior, e)
		}
		sp.Interior = append(sp.Interior, body[i+1:]...)
		// The edge: a then branch that ends in a return leaves the
		// body there (the return itself is the end of the point).
		sp.Edge = append(sp.Edge, body[:i]...)
		then := ifs.Body.List
		if n := len(then); n > 0 {
			if r, ok := then[n-1].(*ast.ReturnStmt); ok && len(r.Results) == 0 {
				sp.Edge = append(sp.Edge, then[:n-1]...)
				return sp
			}
		}
		sp.Edge = append(sp.Edge, then...)
		sp.Edge = append(sp.Edge, body[i+1:]...)
		return sp
	}
	return nil
}

// boundaryAtoms adds the disjuncts of cond to sp: the dimension-0 tests
// to its ends, the others to its rows; or it reports false.
func boundaryAtoms(g *ir.Program, k *ir.Kernel, x *types.Var, cond ast.Expr, sp *ir.Split) bool {
	c, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok {
		return false
	}
	if c.Op == token.LOR {
		return boundaryAtoms(g, k, x, c.X, sp) && boundaryAtoms(g, k, x, c.Y, sp)
	}
	if _, cmp := FlipOp[c.Op]; !cmp {
		return false
	}
	isX := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && g.P.Info.Uses[id] == x
	}
	op, other := c.Op, c.Y
	switch {
	case isX(c.X):
	case isX(c.Y):
		op, other = FlipOp[c.Op], c.X
	default:
		if !uniform(g, k, c.X, x) || !uniform(g, k, c.Y, x) {
			return false
		}
		sp.Rows = append(sp.Rows, c)
		return true
	}
	if !uniform(g, k, other, x) {
		return false
	}
	switch op {
	case token.LSS: // x < e on the boundary: the interior starts at e
		sp.Lo = append(sp.Lo, ir.Bound{E: other})
	case token.LEQ:
		sp.Lo = append(sp.Lo, ir.Bound{E: other, PlusOne: true})
	case token.GTR:
		sp.Hi = append(sp.Hi, ir.Bound{E: other, PlusOne: true})
	case token.GEQ:
		sp.Hi = append(sp.Hi, ir.Bound{E: other})
	case token.EQL:
		pr := NewProver(g, k)
		v, ok := pr.Poly(other)
		if !ok {
			return false
		}
		ext, okExt := pr.Vars[k.Dims[0].Obj]
		switch c, isConst := ConstOf(v); {
		case isConst && c == 0:
			sp.Lo = append(sp.Lo, ir.Bound{})
		case okExt && v.Equal(VarPoly(ext).Add(ConstPoly(1), -1)):
			sp.Hi = append(sp.Hi, ir.Bound{E: other})
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// uniform reports whether e depends only on parameters and indices other
// than x (none of them assigned) and constants, and cannot fail: no
// division, remainder or shift by a value that is not a constant. The
// split computes such a test once per row, where Go computes it only at
// the points its || reaches (x == 0 || x < nx/r divides nowhere in a
// one-column space).
func uniform(g *ir.Program, k *ir.Kernel, e ast.Expr, x *types.Var) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if o, isVar := g.P.Info.Uses[n].(*types.Var); isVar {
				p := k.ByObj[o]
				if o == x || p == nil || p.Slice || k.Assigned[o] {
					ok = false
				}
			}
		case *ast.CallExpr:
			if !g.P.Info.Types[n.Fun].IsType() {
				ok = false
			}
		case *ast.IndexExpr:
			ok = false
		case *ast.BinaryExpr:
			switch n.Op {
			case token.QUO, token.REM, token.SHL, token.SHR:
				if g.P.Info.Types[n.Y].Value == nil {
					ok = false
				}
			}
		}
		return ok
	})
	return ok
}
