package plan

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// LoopRows plans the rows of the counted loops of k's point-at-a-time Go
// image (ir.Rows): in
//
//	for j := 1; j < n-1; j++ {
//		c := i*n + j
//		out[c] = 0.2 * (in[c] + in[c-1] + in[c+1] + in[c+n] + in[c-n])
//	}
//
// each element is its buffer's at j plus an offset that no turn changes
// (i*n, i*n-1, ...), so the image takes each such row once, as a slice of
// the loop's turns from its first turn's element, and reaches the
// element at the turn's place in it: Go drops the bounds tests, and the
// turn computes no address (Go hoists nothing out of a loop, so written
// through unsafe.Add the turn multiplied i by n for each element).
//
// The loop is for j := lo; j < hi; j++ with j an int that only the loop's
// post statement assigns, lo and hi the same at every turn (below), and
// not labelled (the image wraps it in a test that it has turns). Its rows
// are those rowsOf finds at the head of its body: elements proven in
// range that every turn reaches, so each row, from the first turn's
// element to the last's, is in range. An offset, lo and hi read only
// variables declared outside the loop that the loop does not assign, no
// element, call or division. Loops that plan.PointJams or plan.SumJams
// jams keep their own form (a sum jam's inner loop too).
//
// Measured on fdtd-2d's three kernels (1000 x 1200, 500 steps, two
// goroutines, both forms interleaved): 2.6 s through unsafe.Add, 2.0 s
// through rows.
func LoopRows(g *ir.Program, k *ir.Kernel) map[*ast.ForStmt]*ir.Rows {
	if k.Team > 0 || k.Lanes != nil || k.Reduce != "" || len(k.ReduceArrays) > 0 {
		return nil
	}
	info := g.P.Info
	labelled := map[ast.Stmt]bool{}
	jammed := map[*ast.ForStmt]bool{} // the inner loops of SumJams and PointJams, which write them
	var loops []*ast.ForStmt
	ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.LabeledStmt:
			labelled[n.Stmt] = true
		case *ast.ForStmt:
			if sj := k.SumJams[n]; sj != nil {
				jammed[sj.Inner] = true
			}
			if pj := k.PointJams[n]; pj != nil && pj.Loop != nil {
				jammed[pj.Loop] = true
			}
			if !labelled[n] && k.PointJams[n] == nil && k.SumJams[n] == nil && !jammed[n] {
				loops = append(loops, n)
			}
		}
		return true
	})
	var out map[*ast.ForStmt]*ir.Rows
	for _, s := range loops {
		ctr, bound, ok := countedLoop(info, k, s)
		if !ok || !types.Identical(ctr.Type(), types.Typ[types.Int]) {
			continue
		}
		same := sameEachTurn(info, k, s, ctr)
		if !same(s.Init.(*ast.AssignStmt).Rhs[0]) || !same(bound) {
			continue
		}
		name := ir.UpperFirst(ctr.Name())
		rs := rowsOf(g, k, s.Body.List, ctr, same, "gomptT"+name, name)
		if rs == nil {
			continue
		}
		if out == nil {
			out = map[*ast.ForStmt]*ir.Rows{}
		}
		out[s] = rs
	}
	return out
}

// sameEachTurn reports whether an int expression has the same value at
// every turn of loop s, whose counter is ctr: it reads no variable that
// is declared in s or that s assigns, no element, and calls nothing but
// conversions and len of a buffer; it divides or shifts only by
// constants, so evaluating it before the loop cannot fail where the
// loop would not.
func sameEachTurn(info *types.Info, k *ir.Kernel, s *ast.ForStmt, ctr *types.Var) func(ast.Expr) bool {
	assigned := assignedIn(info, s)
	variant := func(o *types.Var) bool {
		return o == ctr || assigned[o] || o.Pos() >= s.Pos() && o.Pos() < s.End()
	}
	return func(e ast.Expr) bool {
		ok := true
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				if o, isVar := info.Uses[n].(*types.Var); isVar {
					if p := k.ByObj[o]; variant(o) || p != nil && p.Slice {
						ok = false
					}
				}
			case *ast.CallExpr:
				fun := ast.Unparen(n.Fun)
				switch {
				case info.Types[fun].IsType():
				case info.Types[fun].IsBuiltin() && fun.(*ast.Ident).Name == "len":
					id, isIdent := ast.Unparen(n.Args[0]).(*ast.Ident)
					o, _ := info.Uses[id].(*types.Var)
					ok = isIdent && o != nil && k.ByObj[o] != nil && !variant(o)
					return false
				default:
					ok = false
				}
			case *ast.IndexExpr, *ast.SliceExpr:
				ok = false
			case *ast.BinaryExpr:
				switch n.Op {
				case token.QUO, token.REM, token.SHL, token.SHR:
					if info.Types[n.Y].Value == nil {
						ok = false
					}
				}
			}
			return ok
		})
		return ok
	}
}

// assignedIn is the variables that loop s's body or post statement
// assigns (a := that redeclares one included).
func assignedIn(info *types.Info, s *ast.ForStmt) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	mark := func(e ast.Expr) {
		if id, ok := ast.Unparen(e).(*ast.Ident); ok {
			if v, ok := info.Uses[id].(*types.Var); ok {
				out[v] = true
			}
		}
	}
	for _, n := range []ast.Node{s.Body, s.Post} {
		if n == nil {
			continue
		}
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					mark(l)
				}
			case *ast.IncDecStmt:
				mark(n.X)
			case *ast.RangeStmt:
				if n.Tok == token.ASSIGN {
					mark(n.Key)
					if n.Value != nil {
						mark(n.Value)
					}
				}
			case *ast.UnaryExpr:
				if n.Op == token.AND {
					mark(n.X)
				}
			}
			return true
		})
	}
	return out
}
