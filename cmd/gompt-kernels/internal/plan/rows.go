package plan

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// RowsOf plans the rows of a Go image's loop over dimension 0 running
// list at each point (nil where none): the elements of buffers whose
// index is the point's dimension-0 index x plus an offset that does not
// depend on x, seen through the int locals defined as such (jacobi's
// i := y*nx + x, whose in[i-nx] is in at x plus y*nx - nx).
//
// Only the elements every point of the loop reaches qualify, so that the
// row, from the loop's first point's element to its last's, is in range:
// those proven in range, in the simple statements at the head of list
// (before any statement that could leave the point early), outside the
// right operand of && and ||. The offsets hold no division (a fault
// there would come before the points' earlier statements ran) and no
// element. A buffer resliced to gomptHi0 (Resliced) has no rows.
//
// The rows need no unsafe: Go drops every bounds test of the loop
// (-d=ssa/check_bce), whose instructions are those of 069ff17's
// hand-written jacobi (five loads and a store at one index, no multiply),
// where the interior through unsafe.Add computed i and four addresses
// at each point. Measured, jacobi_512 on host:0 (2 cores, ompt-bench, 8
// rounds interleaved, low ends): hand-written 196.8 µs, unsafe 198.4 µs,
// rows 197.5 µs.
func RowsOf(g *ir.Program, k *ir.Kernel, list []ast.Stmt) *ir.Rows {
	x := k.Index[0].Obj
	if k.Reduce != "" || k.Team > 0 || len(k.ReduceArrays) > 0 || k.Assigned[x] {
		return nil
	}
	return rowsOf(g, k, list, x, func(e ast.Expr) bool { return uniform(g, k, e, x) }, "gomptJ", "")
}

// rowsOf plans the rows of a loop whose place is x (the point's index, or
// a counted loop's counter) running list at each turn: same reaches the
// expressions that are the same at every turn, turn names the turn's
// place in the image and tag marks the rows' names.
func rowsOf(g *ir.Program, k *ir.Kernel, list []ast.Stmt, x *types.Var, same func(ast.Expr) bool, turn, tag string) *ir.Rows {
	info := g.P.Info
	isInt := func(e ast.Expr) bool {
		return types.Identical(info.TypeOf(e), types.Typ[types.Int])
	}
	offsetFree := func(e ast.Expr) bool {
		if !isInt(e) || !same(e) {
			return false
		}
		ok := true
		ast.Inspect(e, func(n ast.Node) bool {
			if be, isBin := n.(*ast.BinaryExpr); isBin && (be.Op == token.QUO || be.Op == token.REM) {
				ok = false
			}
			return ok
		})
		return ok
	}
	locals := map[*types.Var][]ir.Term{} // int locals that are x plus these terms
	var offset func(e ast.Expr) ([]ir.Term, bool)
	offset = func(e ast.Expr) ([]ir.Term, bool) {
		e = ast.Unparen(e)
		if !isInt(e) {
			return nil, false
		}
		switch e := e.(type) {
		case *ast.Ident:
			v, _ := info.Uses[e].(*types.Var)
			if v == x {
				return nil, true
			}
			t, ok := locals[v]
			return t, ok
		case *ast.BinaryExpr:
			switch e.Op {
			case token.ADD:
				if t, ok := offset(e.X); ok && offsetFree(e.Y) {
					return append(append([]ir.Term(nil), t...), ir.Term{E: e.Y}), true
				}
				if t, ok := offset(e.Y); ok && offsetFree(e.X) {
					return append([]ir.Term{{E: e.X}}, t...), true
				}
			case token.SUB:
				if t, ok := offset(e.X); ok && offsetFree(e.Y) {
					return append(append([]ir.Term(nil), t...), ir.Term{E: e.Y, Neg: true}), true
				}
			}
		}
		return nil, false
	}
	rs := &ir.Rows{Turn: turn, At: map[*ast.IndexExpr]*ir.Row{}, Dead: map[ast.Stmt][]*types.Var{}}
	byKey := map[string]*ir.Row{}
	var defined []*types.Var
	definedBy := map[*types.Var]ast.Stmt{}
	for _, s := range list {
		switch s.(type) {
		case *ast.AssignStmt, *ast.IncDecStmt, *ast.ExprStmt:
		default:
			goto done
		}
		var visit func(n ast.Node, cond bool)
		visit = func(n ast.Node, cond bool) {
			ast.Inspect(n, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BinaryExpr:
					if n.Op == token.LAND || n.Op == token.LOR {
						visit(n.X, cond)
						visit(n.Y, true)
						return false
					}
				case *ast.IndexExpr:
					if cond || !k.Proven[n] {
						return true
					}
					id, ok := ast.Unparen(n.X).(*ast.Ident)
					if !ok {
						return true
					}
					v, _ := info.Uses[id].(*types.Var)
					p := k.ByObj[v]
					if p == nil || !p.Slice || k.Resliced[p] {
						return true
					}
					t, ok := offset(n.Index)
					if !ok {
						return true
					}
					key := p.Name
					for _, t := range t {
						key += fmt.Sprintf(" %v %s", t.Neg, types.ExprString(t.E))
					}
					r := byKey[key]
					if r == nil {
						n := 1
						for _, q := range rs.List {
							if q.P == p {
								n++
							}
						}
						r = &ir.Row{P: p, Terms: t, Name: fmt.Sprintf("gompt%sRow%s%d", ir.UpperFirst(p.Name), tag, n), Stmt: s}
						byKey[key] = r
						rs.List = append(rs.List, r)
					}
					rs.At[n] = r
				}
				return true
			})
		}
		visit(s, false)
		if as, ok := s.(*ast.AssignStmt); ok && as.Tok == token.DEFINE && len(as.Lhs) == 1 && len(as.Rhs) == 1 {
			if v, ok := info.Defs[as.Lhs[0].(*ast.Ident)].(*types.Var); ok && !k.Assigned[v] {
				if t, ok := offset(as.Rhs[0]); ok {
					locals[v] = t
					defined = append(defined, v)
					definedBy[v] = s
				}
			}
		}
	}
done:
	if len(rs.List) == 0 {
		return nil
	}
	// The variables read only in the rows' offsets: the image reads
	// them as _ (Go refuses a local declared and not used).
	inRow := map[*ast.Ident]bool{}
	for ix := range rs.At {
		ast.Inspect(ix.Index, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				inRow[id] = true
			}
			return true
		})
	}
	read := map[*types.Var]bool{}
	for _, s := range list {
		ast.Inspect(s, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && !inRow[id] {
				if v, ok := info.Uses[id].(*types.Var); ok {
					read[v] = true
				}
			}
			return true
		})
	}
	for _, v := range defined {
		if !read[v] {
			rs.Dead[definedBy[v]] = append(rs.Dead[definedBy[v]], v)
		}
	}
	rs.DeadX = !read[x]
	return rs
}
