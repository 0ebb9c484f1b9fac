package check

import (
	"fmt"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"go/ast"
	"go/token"
	"go/types"
)

// reduceForms says, for each operator, what a kernel may do to an element
// of a reduction array.
var reduceForms = map[string]string{
	"+":   "add to its elements (%[1]s[i] += v, %[1]s[i] -= v, %[1]s[i]++, %[1]s[i]--)",
	"*":   "multiply its elements (%[1]s[i] *= v)",
	"min": "lower its elements (%[1]s[i] = min(%[1]s[i], v))",
	"max": "raise its elements (%[1]s[i] = max(%[1]s[i], v))",
}

// CheckReduceArrays checks that a reduction array's only uses are its
// operator's updates (h[e] += v, h[e] -= v, h[e]++ and h[e]--; h[e] *=
// v; h[e] = min(h[e], v); h[e] = max(h[e], v)) and len(h).
func CheckReduceArrays(g *ir.Program) {
	info := g.P.Info
	for _, k := range g.Kernels {
		if len(k.ReduceArrays) == 0 {
			continue
		}
		// arrayOf is the reduction array e is an element of, its
		// identifier and its operator ("" for none).
		arrayOf := func(e ast.Expr) (*ast.IndexExpr, *ast.Ident, string) {
			ix, id, p := k.ReduceArrayAt(info, e)
			if p == nil {
				return nil, nil, ""
			}
			return ix, id, k.ReduceArrays[p]
		}
		allowed := map[*ast.Ident]bool{}
		ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
			switch s := n.(type) {
			case *ast.AssignStmt:
				ix, id, op := arrayOf(s.Lhs[0])
				switch {
				case op == "+" && (s.Tok == token.ADD_ASSIGN || s.Tok == token.SUB_ASSIGN), op == "*" && s.Tok == token.MUL_ASSIGN:
					allowed[id] = true
				case (op == "min" || op == "max") && s.Tok == token.ASSIGN && len(s.Lhs) == 1:
					call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
					if !ok || !ir.IsBuiltin(info, call, op) {
						break
					}
					same := ir.SameElement(info, call, ix)
					if same == nil {
						break
					}
					if len(call.Args) < 2 {
						g.Errs.Add(call.Pos(), "%s(%s) has no other operand: it changes nothing", op, ir.ExprString(same))
					} else if !ir.CallsNothing(info, ix.Index) {
						g.Errs.Add(ix.Index.Pos(), "%s is reduce(%s)=%s: its index in %s = %s(%s, v) may call nothing but conversions (the device evaluates it once)", id.Name, id.Name, op, ir.ExprString(ix), op, ir.ExprString(ix))
					}
					allowed[id] = true
					allowed[ast.Unparen(same.X).(*ast.Ident)] = true
				}
			case *ast.IncDecStmt:
				if _, id, op := arrayOf(s.X); op == "+" {
					allowed[id] = true
				}
			case *ast.CallExpr:
				if ir.IsBuiltin(info, s, "len") {
					if a, ok := ast.Unparen(s.Args[0]).(*ast.Ident); ok {
						allowed[a] = true
					}
				}
			}
			return true
		})
		reported := map[int]bool{} // one error a line
		ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			v, _ := info.Uses[id].(*types.Var)
			if p := k.ByObj[v]; p != nil && k.ReduceArrays[p] != "" && !allowed[id] && !reported[g.P.Fset.Position(id.Pos()).Line] {
				reported[g.P.Fset.Position(id.Pos()).Line] = true
				op := k.ReduceArrays[p]
				g.Errs.Add(id.Pos(), "%s is reduce(%s)=%s: the kernel may only %s and take its len", id.Name, id.Name, op, fmt.Sprintf(reduceForms[op], id.Name))
			}
			return true
		})
	}
}
