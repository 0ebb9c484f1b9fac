package plan

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// Lanes returns the plan for k, or nil where it does not apply: a
// reduction; a body with no loop independent of the point around work
// that depends on it; a return, break or continue that depends on the
// point; a call of a helper; an atomic (a statement that does not depend
// on the point would run once per block); a view or a range over a slice
// (its varying locals would be arrays of slices); a loop that reaches
// elements a row apart from one point to the next (strided). Its Jams
// are the uniform loops whose turns the image runs ir.Jam at a time
// (jammable).
func Lanes(g *ir.Program, k *ir.Kernel) *ir.Lockstep {
	if k.Reduce != "" || len(k.Fn.Calls) > 0 || k.Atomic || len(k.ReduceArrays) > 0 || ir.UsesSlices(g.P.Info, k.Fn) {
		return nil
	}
	ls := &ir.Lockstep{K: k, Varying: map[*types.Var]bool{k.Index[0].Obj: true}, Arrays: map[*types.Var]string{}, Backing: map[*types.Var]string{}}
	for changed := true; changed; {
		changed = taint(ls, g, k.Decl.Body.List, false)
	}
	for _, p := range k.Params {
		if k.Assigned[p.Obj] {
			return nil
		}
	}
	ok, pays := check(ls, g, k.Decl.Body.List, false)
	if !ok || !pays || strided(ls, g, k.Decl.Body) {
		return nil
	}
	n := 0
	for _, name := range ir.SortedVars(ls.Varying) {
		v := name
		if v == k.Index[0].Obj {
			continue
		}
		n++
		arr := fmt.Sprintf("gomptL%d%s", n, ir.UpperFirst(v.Name()))
		ls.Arrays[v] = ir.OwnName(g, k, v, arr)
		ls.Backing[v] = arr + "A"
	}
	ls.Jams = map[*ast.ForStmt]*ir.Jammed{}
	ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
		if f, ok := n.(*ast.ForStmt); ok && !ls.Leaf(g.P.Info, f) {
			if ctr, bound, ok := jammable(ls, g.P.Info, k, f); ok {
				ls.Jams[f] = &ir.Jammed{Ctr: ctr, Bound: bound}
			}
		}
		return true
	})
	return ls
}

// taint marks the locals assigned from a varying value, or under a
// condition that is; it reports whether it marked any.
func taint(ls *ir.Lockstep, g *ir.Program, list []ast.Stmt, under bool) (changed bool) {
	mark := func(e ast.Expr) {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return
		}
		v, _ := g.P.Info.Defs[id].(*types.Var)
		if v == nil {
			v, _ = g.P.Info.Uses[id].(*types.Var)
		}
		if v != nil && !ls.Varying[v] && ls.K.ByObj[v] == nil {
			ls.Varying[v] = true
			changed = true
		}
	}
	for _, s := range list {
		switch s := s.(type) {
		case *ast.AssignStmt:
			dep := under
			for _, r := range s.Rhs {
				dep = dep || ls.DependsOn(g.P.Info, r)
			}
			for _, l := range s.Lhs {
				if dep || s.Tok != token.ASSIGN && s.Tok != token.DEFINE && ls.DependsOn(g.P.Info, l) {
					mark(l)
				}
			}
		case *ast.IncDecStmt:
			if under {
				mark(s.X)
			}
		case *ast.DeclStmt:
			gd := s.Decl.(*ast.GenDecl)
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				dep := under
				for _, v := range vs.Values {
					dep = dep || ls.DependsOn(g.P.Info, v)
				}
				if dep {
					for _, n := range vs.Names {
						mark(n)
					}
				}
			}
		case *ast.BlockStmt:
			changed = taint(ls, g, s.List, under) || changed
		case *ast.IfStmt:
			c := under || ls.DependsOn(g.P.Info, s.Cond) || s.Init != nil && ls.DependsOn(g.P.Info, s.Init)
			if s.Init != nil {
				changed = taint(ls, g, []ast.Stmt{s.Init}, under) || changed
			}
			changed = taint(ls, g, s.Body.List, c) || changed
			if s.Else != nil {
				changed = taint(ls, g, []ast.Stmt{s.Else}, c) || changed
			}
		case *ast.ForStmt:
			c := under || s.Cond != nil && ls.DependsOn(g.P.Info, s.Cond) || s.Init != nil && ls.DependsOn(g.P.Info, s.Init) || s.Post != nil && ls.DependsOn(g.P.Info, s.Post)
			for _, x := range []ast.Stmt{s.Init, s.Post} {
				if x != nil {
					changed = taint(ls, g, []ast.Stmt{x}, c) || changed
				}
			}
			changed = taint(ls, g, s.Body.List, c) || changed
		case *ast.RangeStmt:
			c := under || ls.DependsOn(g.P.Info, s.X)
			if c && s.Key != nil {
				mark(s.Key)
			}
			if c && s.Value != nil {
				mark(s.Value)
			}
			changed = taint(ls, g, s.Body.List, c) || changed
		case *ast.SwitchStmt:
			c := under || s.Tag != nil && ls.DependsOn(g.P.Info, s.Tag) || s.Init != nil && ls.DependsOn(g.P.Info, s.Init)
			for _, cc := range s.Body.List {
				cl := cc.(*ast.CaseClause)
				cc := c
				for _, e := range cl.List {
					cc = cc || ls.DependsOn(g.P.Info, e)
				}
				changed = taint(ls, g, cl.Body, cc) || changed
			}
		case *ast.LabeledStmt:
			changed = taint(ls, g, []ast.Stmt{s.Stmt}, under) || changed
		}
	}
	return changed
}

// check walks list at the block level (inLoop: inside a uniform loop) and
// reports whether the plan applies, and whether it pays (a leaf inside a
// uniform loop).
func check(ls *ir.Lockstep, g *ir.Program, list []ast.Stmt, inLoop bool) (ok, pays bool) {
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ForStmt:
			if ls.Uniform(g.P.Info, s.Init) && (s.Cond == nil || !ls.DependsOn(g.P.Info, s.Cond)) && ls.Uniform(g.P.Info, s.Post) {
				o, p := check(ls, g, s.Body.List, true)
				if !o {
					return false, false
				}
				pays = pays || p
				continue
			}
		case *ast.RangeStmt:
			if !ls.DependsOn(g.P.Info, s.X) && (s.Key == nil || !ls.DependsOn(g.P.Info, s.Key)) {
				o, p := check(ls, g, s.Body.List, true)
				if !o {
					return false, false
				}
				pays = pays || p
				continue
			}
		case *ast.IfStmt:
			if s.Init == nil && !ls.DependsOn(g.P.Info, s.Cond) {
				o, p := check(ls, g, s.Body.List, inLoop)
				if !o {
					return false, false
				}
				pays = pays || p
				if s.Else != nil {
					o, p := check(ls, g, []ast.Stmt{s.Else}, inLoop)
					if !o {
						return false, false
					}
					pays = pays || p
				}
				continue
			}
		case *ast.BlockStmt:
			o, p := check(ls, g, s.List, inLoop)
			if !o {
				return false, false
			}
			pays = pays || p
			continue
		case *ast.ReturnStmt, *ast.BranchStmt:
			continue // uniform: every point of the block takes it
		case *ast.LabeledStmt:
			if _, isSwitch := s.Stmt.(*ast.SwitchStmt); !isSwitch {
				return false, false
			}
		}
		if ls.Uniform(g.P.Info, s) {
			continue
		}
		// A leaf: it must not leave the statements around it.
		if leaves(s) {
			return false, false
		}
		pays = pays || inLoop
	}
	return true, pays
}

// strided reports whether a loop of body reaches a buffer's element at an
// index that multiplies a value depending on the point by one that is not
// a constant (gesummv's A[i*n+j], i the point): in lanes, each turn of the
// loop would touch one element per lane, n apart, a page each for a large
// n, where one point at a time walks its row: gesummv on the initial
// device (2 cores, the low end of 3 runs of 10 calls, 2026-12-06) took
// 20.3 ms in lanes and 8.2 ms a point at a time at n = 4000, 14.1 and
// 11.8 ms at n = 1300.
func strided(ls *ir.Lockstep, g *ir.Program, body *ast.BlockStmt) bool {
	info := g.P.Info
	rowApart := map[*types.Var]bool{} // locals that hold such a product (r := i*n)
	isStrided := func(e ast.Node) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.MUL {
					x, y := ls.DependsOn(info, n.X), ls.DependsOn(info, n.Y)
					xc, yc := info.Types[n.X].Value != nil, info.Types[n.Y].Value != nil
					found = found || x && !yc || y && !xc
				}
			case *ast.Ident:
				if v, ok := info.Uses[n].(*types.Var); ok && rowApart[v] {
					found = true
				}
			}
			return !found
		})
		return found
	}
	for changed := true; changed; {
		changed = false
		ast.Inspect(body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != len(as.Rhs) {
				return true
			}
			for i, l := range as.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				v, _ := info.Defs[id].(*types.Var)
				if v == nil {
					v, _ = info.Uses[id].(*types.Var)
				}
				if v != nil && !rowApart[v] && isStrided(as.Rhs[i]) {
					rowApart[v], changed = true, true
				}
			}
			return true
		})
	}
	found := false
	inLoop := func(n ast.Node) {
		ast.Inspect(n, func(m ast.Node) bool {
			if ix, ok := m.(*ast.IndexExpr); ok && !found {
				if id, ok := ast.Unparen(ix.X).(*ast.Ident); ok {
					if v, ok := info.Uses[id].(*types.Var); ok && ls.K.ByObj[v] != nil && ls.K.ByObj[v].Slice {
						found = isStrided(ix.Index)
					}
				}
			}
			return !found
		})
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ForStmt:
			inLoop(n.Body)
			return false
		case *ast.RangeStmt:
			inLoop(n.Body)
			return false
		}
		return !found
	})
	return found
}

// leaves reports whether s holds a return, or a break or continue that
// leaves s.
func leaves(s ast.Stmt) bool {
	found := false
	var walk func(n ast.Node, loops int)
	walk = func(n ast.Node, loops int) {
		ast.Inspect(n, func(m ast.Node) bool {
			if found || m == nil {
				return false
			}
			switch m := m.(type) {
			case *ast.ReturnStmt:
				found = true
			case *ast.BranchStmt:
				if m.Label != nil || loops == 0 {
					found = true
				}
			case *ast.ForStmt:
				if m != n {
					walk(m.Body, loops+1)
					return false
				}
			case *ast.RangeStmt:
				if m != n {
					walk(m.Body, loops+1)
					return false
				}
			case *ast.SwitchStmt:
				if m != n {
					for _, cc := range m.Body.List {
						for _, b := range cc.(*ast.CaseClause).Body {
							ast.Inspect(b, func(x ast.Node) bool {
								if br, ok := x.(*ast.BranchStmt); ok && (br.Tok == token.CONTINUE && loops == 0 || br.Label != nil) {
									found = true
								}
								if _, ok := x.(*ast.ReturnStmt); ok {
									found = true
								}
								_, isLoop := x.(*ast.ForStmt)
								_, isRange := x.(*ast.RangeStmt)
								return !isLoop && !isRange
							})
						}
					}
					return false
				}
			}
			return true
		})
	}
	walk(s, 0)
	return found
}

// jammable reports whether the uniform loop s of a lockstep image can run
// ir.Jam turns together, lane by lane: a counted loop (for ctr := e; ctr <
// bound; ctr++) whose body is leaves that are simple statements storing
// only into the lanes' locals (no buffer element: a later turn's uniform
// values, read before an earlier turn's leaves run, are the same then),
// whose every element is proven in range and that divide or shift no
// integer (nothing in them can fault: a lane's later turn may run before
// another lane's earlier one).
func jammable(ls *ir.Lockstep, info *types.Info, k *ir.Kernel, s *ast.ForStmt) (ctr *types.Var, bound ast.Expr, ok bool) {
	ctr, bound, ok = countedLoop(info, k, s)
	if !ok || len(s.Body.List) == 0 {
		return nil, nil, false
	}
	for _, st := range s.Body.List {
		if !ls.Leaf(info, st) {
			return nil, nil, false
		}
		var lhs []ast.Expr
		switch st := st.(type) {
		case *ast.AssignStmt:
			lhs = st.Lhs
			for _, r := range st.Rhs {
				if !pure(info, k, r) {
					return nil, nil, false
				}
			}
		case *ast.IncDecStmt:
			lhs = []ast.Expr{st.X}
		default:
			return nil, nil, false
		}
		for _, l := range lhs {
			id, ok := ast.Unparen(l).(*ast.Ident)
			if !ok {
				return nil, nil, false
			}
			v, _ := info.Defs[id].(*types.Var)
			if v == nil {
				v, _ = info.Uses[id].(*types.Var)
			}
			if v == nil || !ls.Varying[v] {
				return nil, nil, false
			}
		}
	}
	return ctr, bound, true
}

// mentions reports whether e reads v.
func mentions(info *types.Info, e ast.Expr, v *types.Var) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}

// pure reports whether e cannot fault or act: its elements are proven in
// range, it calls nothing but conversions, len and math's functions, and
// it divides and shifts no integer.
func pure(info *types.Info, k *ir.Kernel, e ast.Expr) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IndexExpr:
			ok = k.Proven[n]
		case *ast.SliceExpr:
			ok = false
		case *ast.CallExpr:
			fun := ast.Unparen(n.Fun)
			switch {
			case info.Types[fun].IsType():
			case info.Types[fun].IsBuiltin():
				ok = fun.(*ast.Ident).Name == "len"
			default:
				_, isSel := fun.(*ast.SelectorExpr)
				ok = isSel // math's, the only package a kernel calls
			}
		case *ast.BinaryExpr:
			ok = !canFault(info, n)
		}
		return ok
	})
	return ok
}

// canFault reports whether e divides or shifts an integer: a division by
// zero or a negative shift count fails the point.
func canFault(info *types.Info, e *ast.BinaryExpr) bool {
	switch e.Op {
	case token.QUO, token.REM, token.SHL, token.SHR:
		t, isBasic := info.TypeOf(e).Underlying().(*types.Basic)
		return !isBasic || t.Info()&types.IsInteger != 0
	}
	return false
}
