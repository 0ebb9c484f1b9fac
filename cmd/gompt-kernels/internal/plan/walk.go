package plan

import (
	"go/ast"
	"go/token"
	"go/types"
)

// walk proves the index expressions of list in range, narrowing the
// ranges by the conditions of if statements: in the branch where they
// hold, and after an if whose other branch always returns.
func (pr *prover) walk(list []ast.Stmt, e env) {
	for _, s := range list {
		switch s := s.(type) {
		case *ast.BlockStmt:
			pr.walk(s.List, e)
		case *ast.IfStmt:
			if s.Init != nil {
				pr.walk([]ast.Stmt{s.Init}, e)
			}
			pr.indexes(s.Cond, e)
			then, els := pr.refine(e, s.Cond, true), pr.refine(e, s.Cond, false)
			pr.walk(s.Body.List, then)
			if s.Else != nil {
				pr.walk([]ast.Stmt{s.Else}, els)
			}
			switch {
			case returns(s.Body.List):
				e = els
			case s.Else != nil && returns([]ast.Stmt{s.Else}):
				e = then
			}
		case *ast.ForStmt:
			if s.Init != nil {
				pr.walk([]ast.Stmt{s.Init}, e)
			}
			if s.Cond != nil {
				pr.indexes(s.Cond, e)
			}
			if s.Post != nil {
				pr.walk([]ast.Stmt{s.Post}, e)
			}
			pr.walk(s.Body.List, e)
		case *ast.RangeStmt:
			pr.indexes(s.X, e)
			pr.walk(s.Body.List, e)
		case *ast.SwitchStmt:
			if s.Init != nil {
				pr.walk([]ast.Stmt{s.Init}, e)
			}
			if s.Tag != nil {
				pr.indexes(s.Tag, e)
			}
			for _, cc := range s.Body.List {
				cl := cc.(*ast.CaseClause)
				for _, x := range cl.List {
					pr.indexes(x, e)
				}
				pr.walk(cl.Body, e)
			}
		case *ast.LabeledStmt:
			pr.walk([]ast.Stmt{s.Stmt}, e)
		default:
			pr.indexes(s, e)
		}
	}
}

// returns reports whether list always ends in a return, a break or a
// continue: the statements after it in its enclosing list run only when
// it does not.
func returns(list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	switch s := list[len(list)-1].(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Tok == token.BREAK || s.Tok == token.CONTINUE
	case *ast.BlockStmt:
		return returns(s.List)
	case *ast.IfStmt:
		return s.Else != nil && returns(s.Body.List) && returns([]ast.Stmt{s.Else})
	}
	return false
}

// indexes proves the index expressions in n (a simple statement or an
// expression) with the ranges of e.
func (pr *prover) indexes(n ast.Node, e env) {
	ast.Inspect(n, func(n ast.Node) bool {
		ix, ok := n.(*ast.IndexExpr)
		if !ok {
			return true
		}
		id, ok := ast.Unparen(ix.X).(*ast.Ident)
		if !ok {
			return true
		}
		v, _ := pr.g.P.Info.Uses[id].(*types.Var)
		if n, ok := pr.k.TeamArrays[v]; ok { // a team array: its constant length
			if i, ok := pr.Poly(ix.Index); ok && pr.inRange(i, ConstPoly(int64(n)), e) {
				pr.k.Proven[ix] = true
			}
			return true
		}
		if pr.viewIndex(ix, e) {
			return true
		}
		p := pr.k.ByObj[v]
		if p == nil || !p.Slice {
			return true
		}
		i, ok1 := pr.Poly(ix.Index)
		l, ok2 := pr.lenPoly(p)
		if ok1 && ok2 && pr.inRange(i, l, e) {
			pr.k.Proven[ix] = true
		}
		if n, ok := ConstOf(l); ok && ok2 && pr.below(ix.Index, n) {
			pr.k.Proven[ix] = true
		}
		return true
	})
}
