package check

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"go/ast"
	"go/token"
	"go/types"
)

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
	if c.f.Views == nil {
		c.f.Views = map[*types.Var]*ir.View{}
	}
	c.f.Views[v] = &ir.View{Obj: v, Base: base, Parent: parent, Expr: se}
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
func (c *checker) sliceExpr(se *ast.SliceExpr) (*ir.Param, *ir.View) {
	base, parent := c.f.SliceOf(c.info(), se.X)
	if base == nil {
		if id, ok := ast.Unparen(se.X).(*ast.Ident); ok {
			if v, _ := c.info().Uses[id].(*types.Var); v != nil && c.bad[v] {
				return nil, nil
			}
		}
		what := "a slice expression of " + ir.ExprString(se.X)
		if ir.TeamArrayOf(c.info(), c.f, se.X) != nil {
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
	var base *ir.Param
	switch u := t.Underlying().(type) {
	case *types.Slice:
		if se, ok := ast.Unparen(s.X).(*ast.SliceExpr); ok {
			if base, _ = c.sliceExpr(se); base == nil {
				return true
			}
			break
		}
		if base, _ = c.f.SliceOf(c.info(), s.X); base == nil {
			return false
		}
	case *types.Array:
		team := ir.TeamArrayOf(c.info(), c.f, s.X)
		if team == nil {
			return false
		}
		if s.Value != nil && !ir.IsBlank(s.Value) && ir.WritesTeamArray(c.info(), s.Body, team) {
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
	if base != nil && s.Value != nil && !ir.IsBlank(s.Value) {
		base.Read = true
	}
	c.block(s.Body.List)
	return true
}
