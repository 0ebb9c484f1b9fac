package plan

import (
	"go/ast"
	"go/constant"
	"go/token"
	"path/filepath"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// Sites plans the run-time checks of k's device code (device.Kernel's
// Faults): its helpers' (callees first) and then its body's, each in
// source order. A check is an element of a buffer, a view, a team array
// or a reduction array at an index not proven in range; an integer
// division or remainder by a divisor that is not a constant (nor one
// that cannot trap: any but 0 and -1); each of Go's checks of a slice
// expression's bounds. A kernel with check=off has none. The C emitter
// asks the plan for each check's number (and fails where the two
// disagree); the Go image writes the table.
func Sites(g *ir.Program, k *ir.Kernel) {
	k.Sites, k.SiteOf = nil, map[ir.SiteKey]int{}
	if k.Nocheck {
		return
	}
	info := g.P.Info
	// add adds check kind of node n, at pos; value is what the check's
	// message names first (the index; a slice expression's bound), nil for
	// none.
	add := func(kind string, n ast.Node, pos token.Pos, value ast.Expr) {
		key := ir.SiteKey{Kind: kind, Node: n}
		if _, ok := k.SiteOf[key]; ok {
			return
		}
		p := g.P.Fset.Position(pos)
		site := ir.Site{Kind: kind, Pos: filepath.Base(p.Filename) + ":" + ir.Itoa(p.Line)}
		if value != nil {
			t, ok := ir.ScalarOf(info.TypeOf(value))
			site.Unsigned = ok && t.IsInt() && !t.Signed()
		}
		k.Sites = append(k.Sites, site)
		k.SiteOf[key] = len(k.Sites)
	}
	divisor := func(y ast.Expr) {
		if v := info.Types[y].Value; v != nil {
			if c, ok := constant.Int64Val(constant.ToInt(v)); ok && c != 0 && c != -1 {
				return
			}
		}
		add(ir.SiteDivide, y, y.Pos(), nil)
	}
	isInt := func(e ast.Expr) bool {
		t, ok := ir.ScalarOf(info.TypeOf(e))
		return ok && t.IsInt()
	}
	walk := func(f *ir.Fn) {
		// The same element as the target of a reduction array's
		// h[e] = min(h[e], v): combined into, not read.
		skip := map[ast.Node]bool{}
		ast.Inspect(f.Decl.Body, func(n ast.Node) bool {
			if e, ok := n.(ast.Expr); ok && info.Types[e].Value != nil {
				return false // a constant: computed by the compiler
			}
			if skip[n] {
				return true
			}
			switch n := n.(type) {
			case *ast.AssignStmt:
				if f.Kernel != nil && n.Tok == token.ASSIGN && len(n.Lhs) == 1 {
					if ix, _, p := f.Kernel.ReduceArrayAt(info, n.Lhs[0]); p != nil {
						if call, ok := ast.Unparen(n.Rhs[0]).(*ast.CallExpr); ok {
							others := map[ast.Expr]bool{}
							for _, o := range ir.MinMaxOperands(info, call, ix) {
								others[o] = true
							}
							for _, a := range call.Args {
								if !others[a] {
									skip[ast.Unparen(a)] = true
								}
							}
						}
					}
				}
				if (n.Tok == token.QUO_ASSIGN || n.Tok == token.REM_ASSIGN) && isInt(n.Lhs[0]) {
					divisor(n.Rhs[0])
				}
			case *ast.BinaryExpr:
				if (n.Op == token.QUO || n.Op == token.REM) && isInt(n) {
					divisor(n.Y)
				}
			case *ast.IndexExpr:
				if f.Kernel == nil || !f.Kernel.Proven[n] {
					add(ir.SiteIndex, n, n.Index.Pos(), n.Index)
				}
			case *ast.SliceExpr:
				switch {
				case n.Slice3:
					add(ir.SiteSlice3Cap, n, n.Lbrack, n.Max)
					add(ir.SiteSlice3Max, n, n.Lbrack, n.High)
					add(ir.SiteSlice3Order, n, n.Lbrack, n.Low)
				default:
					if n.High != nil {
						add(ir.SiteSliceCap, n, n.Lbrack, n.High)
					}
					if n.Low != nil {
						add(ir.SiteSliceOrder, n, n.Lbrack, n.Low)
					}
				}
			}
			return true
		})
	}
	for _, h := range k.Fn.Helpers() {
		walk(h)
	}
	walk(k.Fn)
}
