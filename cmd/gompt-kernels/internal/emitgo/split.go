package emitgo

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/plan"
	"go/ast"
	"go/token"
	"go/types"
)

// split is the Go image's split of dimension 0 for a body that starts by
// testing whether the point is on the boundary of the space (a stencil's
// edges): for the points whose dimension-0 index lies in [max(lo...),
// min(hi...)) on a row where row is false, the test is known false, and
// the image runs the body without it (interior) there; elsewhere the
// whole body.
type split struct {
	lo, hi   []string // Go expressions of the interior's ends
	row      string   // the tests that do not depend on dimension 0, or ""
	interior []ast.Stmt
	pos      string // the boundary test's position: computing the ends may fault (nx/r)
}

// boundarySplit finds the first if statement of k's body whose condition
// is a disjunction of comparisons of the dimension-0 index with values
// that do not depend on it (x == 0, x == nx-1, x < 2...) and of tests that
// do not depend on it at all (y == 0), with only params, indices and
// constants in them.
func boundarySplit(g *ir.Program, k *ir.Kernel, b *gobody) (*split, bool) {
	if k.Reduce != "" || k.Assigned[k.Index[0].Obj] {
		return nil, false
	}
	x := k.Index[0].Obj
	body := k.Decl.Body.List
	for i, s := range body {
		ifs, ok := s.(*ast.IfStmt)
		if !ok {
			continue
		}
		if ifs.Init != nil {
			return nil, false
		}
		sp := &split{pos: srcPos(g, ifs)}
		var rows []string
		if !boundaryAtoms(g, k, b, x, ifs.Cond, sp, &rows) || len(sp.lo)+len(sp.hi) == 0 {
			return nil, false
		}
		for j, r := range rows {
			if j > 0 {
				sp.row += " || "
			}
			sp.row += r
		}
		sp.interior = append(sp.interior, body[:i]...)
		switch e := ifs.Else.(type) {
		case *ast.BlockStmt:
			sp.interior = append(sp.interior, e.List...)
		case *ast.IfStmt:
			sp.interior = append(sp.interior, e)
		}
		sp.interior = append(sp.interior, body[i+1:]...)
		return sp, true
	}
	return nil, false
}

// boundaryAtoms adds the disjuncts of cond to sp (dimension-0 tests) and
// rows (the others), or reports false.
func boundaryAtoms(g *ir.Program, k *ir.Kernel, b *gobody, x *types.Var, cond ast.Expr, sp *split, rows *[]string) bool {
	c, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok {
		return false
	}
	if c.Op == token.LOR {
		return boundaryAtoms(g, k, b, x, c.X, sp, rows) && boundaryAtoms(g, k, b, x, c.Y, sp, rows)
	}
	if _, cmp := plan.FlipOp[c.Op]; !cmp {
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
		op, other = plan.FlipOp[c.Op], c.X
	default:
		if !uniform(g, k, c.X, x) || !uniform(g, k, c.Y, x) {
			return false
		}
		*rows = append(*rows, b.expr(c))
		return true
	}
	if !uniform(g, k, other, x) {
		return false
	}
	e := b.expr(other)
	switch op {
	case token.LSS: // x < e on the boundary: the interior starts at e
		sp.lo = append(sp.lo, e)
	case token.LEQ:
		sp.lo = append(sp.lo, e+" + 1")
	case token.GTR:
		sp.hi = append(sp.hi, e+" + 1")
	case token.GEQ:
		sp.hi = append(sp.hi, e)
	case token.EQL:
		pr := plan.NewProver(g, k)
		v, ok := pr.Poly(other)
		if !ok {
			return false
		}
		ext, okExt := pr.Vars[k.Dims[0].Obj]
		switch c, isConst := plan.ConstOf(v); {
		case isConst && c == 0:
			sp.lo = append(sp.lo, "1")
		case okExt && v.Equal(plan.VarPoly(ext).Add(plan.ConstPoly(1), -1)):
			sp.hi = append(sp.hi, e)
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// uniform reports whether e depends only on parameters and indices other
// than x (none of them assigned) and constants.
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
		}
		return ok
	})
	return ok
}
