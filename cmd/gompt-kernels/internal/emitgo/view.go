package emitgo

import (
	"go/ast"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// The Go image: a view is Go's slice, a range Go's range.

// rangeVars is the variables of range statement s in Go, with its token:
// "i, v := ", "_, v = ", "" for none.
func (b *gobody) rangeVars(s *ast.RangeStmt) string {
	if s.Key == nil {
		return ""
	}
	vars := b.expr(s.Key)
	if s.Value != nil {
		vars += ", " + b.expr(s.Value)
	}
	return vars + " " + s.Tok.String() + " "
}

// sliceExpr is slice expression e in Go.
func (b *gobody) sliceExpr(e *ast.SliceExpr) string {
	var parts []string
	for _, x := range []ast.Expr{e.Low, e.High, e.Max} {
		if x == nil {
			parts = append(parts, "")
		} else {
			parts = append(parts, b.expr(x))
		}
	}
	if !e.Slice3 {
		parts = parts[:2]
	}
	return b.expr(e.X) + "[" + strings.Join(parts, ":") + "]"
}

// localGoType is the Go type of local v: a scalar's name, or a view's
// slice type.
func localGoType(v *types.Var) string {
	if s, ok := v.Type().(*types.Slice); ok {
		t, _ := ir.ScalarOf(s.Elem())
		return "[]" + t.GoName()
	}
	t, _ := ir.ScalarOf(v.Type())
	return t.GoName()
}
