package plan

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// CheckTeams checks where each team kernel's barriers are, and plans its
// Go image.
func CheckTeams(g *ir.Program) {
	for _, k := range g.Kernels {
		if k.Team > 0 {
			k.Plan = planTeam(g, k)
		}
	}
}

func planTeam(g *ir.Program, k *ir.Kernel) *ir.TeamPlan {
	info := g.P.Info
	for _, p := range k.Params[:2] {
		if k.Assigned[p.Obj] {
			g.Errs.Add(p.Pos, "team kernel %s assigns %s, the %s; they stay as given", k.Fn.Name, p.Name, map[bool]string{true: "team's index", false: "thread's index"}[p == k.Params[0]])
		}
	}
	ls := &ir.Lockstep{K: k, Varying: map[*types.Var]bool{k.Thread.Obj: true}}
	for changed := true; changed; {
		changed = taint(ls, g, k.Decl.Body.List, false)
	}
	pl := &ir.TeamPlan{K: k, Varying: ls, TeamDecl: map[ast.Stmt]bool{}, PerThr: map[*types.Var]bool{}, Counters: map[*types.Var]bool{}, Arrays: map[*types.Var]string{}}
	var walk func(list []ast.Stmt, under bool, top bool)
	walk = func(list []ast.Stmt, under bool, top bool) {
		for _, s := range list {
			if ir.IsBarrierStmt(info, s) {
				if under {
					g.Errs.Add(s.Pos(), "a barrier under a condition or loop that depends on the thread: every thread of a team must reach the same barriers")
				}
				continue
			}
			if !ir.HasBarrier(info, s) {
				leaf(pl, g, s, top)
				continue
			}
			switch s := s.(type) {
			case *ast.BlockStmt:
				walk(s.List, under, false)
			case *ast.IfStmt:
				if s.Init != nil {
					g.Errs.Add(s.Pos(), "an if with an init statement around a barrier is not supported; declare the variable before the if")
				}
				c := under || ls.DependsOn(g.P.Info, s.Cond)
				header(pl, g, s.Cond)
				walk(s.Body.List, c, false)
				switch e := s.Else.(type) {
				case *ast.BlockStmt:
					walk(e.List, c, false)
				case *ast.IfStmt:
					walk([]ast.Stmt{e}, c, false)
				}
			case *ast.ForStmt:
				c := under || s.Cond != nil && ls.DependsOn(g.P.Info, s.Cond) || s.Init != nil && ls.DependsOn(g.P.Info, s.Init) || s.Post != nil && ls.DependsOn(g.P.Info, s.Post)
				if s.Init != nil {
					if as, ok := s.Init.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
						for _, l := range as.Lhs {
							if v, ok := info.Defs[l.(*ast.Ident)].(*types.Var); ok {
								pl.Counters[v] = true
							}
						}
						for _, r := range as.Rhs {
							header(pl, g, r)
						}
					} else {
						g.Errs.Add(s.Init.Pos(), "a loop around a barrier declares its counter (for i := ...)")
					}
				}
				if s.Cond != nil {
					header(pl, g, s.Cond)
				}
				if s.Post != nil {
					ast.Inspect(s.Post, func(n ast.Node) bool {
						if e, ok := n.(ast.Expr); ok {
							if _, isID := e.(*ast.Ident); !isID {
								header(pl, g, e)
								return false
							}
						}
						return true
					})
				}
				for v := range pl.Counters {
					if ir.AssignedIn(info, s.Body, v) {
						g.Errs.Add(s.Pos(), "the body of a loop around a barrier assigns its counter %s; only its post statement may", v.Name())
					}
				}
				walk(s.Body.List, c, false)
			case *ast.RangeStmt:
				c := under || ls.DependsOn(g.P.Info, s.X)
				header(pl, g, s.X)
				if id, ok := s.Key.(*ast.Ident); ok && s.Tok == token.DEFINE {
					if v, ok := info.Defs[id].(*types.Var); ok {
						pl.Counters[v] = true
					}
				} else if s.Key != nil {
					g.Errs.Add(s.Pos(), "a range loop around a barrier declares its variable (for i := range n)")
				}
				walk(s.Body.List, c, false)
			default:
				g.Errs.Add(s.Pos(), "a barrier in a %s is not supported: barriers are statements of the body, or of ifs and for loops in it", ir.StmtName(s))
			}
		}
	}
	walk(k.Decl.Body.List, false, true)
	n := 0
	var vs []*types.Var
	for v := range pl.PerThr {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Pos() < vs[j].Pos() })
	for _, v := range vs {
		n++
		pl.Arrays[v] = ir.OwnName(g, k, v, fmt.Sprintf("gomptT%d%s", n, ir.UpperFirst(v.Name())))
	}
	return pl
}

// leaf plans s, a statement without a barrier: a declaration at the top of
// the body of values the same in every thread (and never assigned again)
// runs once per team; other statements run at each thread, the locals they
// declare one per thread. A break or continue may not leave the leaf.
func leaf(pl *ir.TeamPlan, g *ir.Program, s ast.Stmt, top bool) {
	info := g.P.Info
	if top && uniformDecl(pl, g, s) {
		pl.TeamDecl[s] = true
		return
	}
	if ds, ok := s.(*ast.DeclStmt); ok && top {
		if vs, ok := ds.Decl.(*ast.GenDecl).Specs[0].(*ast.ValueSpec); ok && len(vs.Names) > 0 {
			if v, ok := info.Defs[vs.Names[0]].(*types.Var); ok {
				if _, isArr := pl.K.TeamArrays[v]; isArr {
					pl.TeamDecl[s] = true
					return
				}
			}
		}
	}
	switch d := s.(type) {
	case *ast.AssignStmt:
		if d.Tok == token.DEFINE {
			for _, l := range d.Lhs {
				if v, ok := info.Defs[l.(*ast.Ident)].(*types.Var); ok {
					pl.PerThr[v] = true
				}
			}
		}
	case *ast.DeclStmt:
		for _, spec := range d.Decl.(*ast.GenDecl).Specs {
			if vs, ok := spec.(*ast.ValueSpec); ok {
				for _, n := range vs.Names {
					if v, ok := info.Defs[n].(*types.Var); ok {
						if _, isArr := pl.K.TeamArrays[v]; isArr {
							g.Errs.Add(n.Pos(), "team array %s is declared at the top of the kernel's body, not in a block", n.Name)
						}
						pl.PerThr[v] = true
					}
				}
			}
		}
	}
	// Branches that would leave the leaf (the thread loop around it).
	var visit func(n ast.Node, inner int)
	visit = func(n ast.Node, inner int) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt:
				var body *ast.BlockStmt
				switch n := n.(type) {
				case *ast.ForStmt:
					body = n.Body
				case *ast.RangeStmt:
					body = n.Body
				case *ast.SwitchStmt:
					body = n.Body
				}
				visit(body, inner+1)
				return false
			case *ast.BranchStmt:
				if n.Label != nil && !ir.LabelIn(s, n.Label.Name) || n.Label == nil && inner == 0 && n.Tok != token.FALLTHROUGH {
					g.Errs.Add(n.Pos(), "a %s out of a loop around a barrier is not supported in a team kernel", n.Tok)
				}
			case *ast.ReturnStmt:
				g.Errs.Add(n.Pos(), "a return in a team kernel is not supported (every thread reaches every barrier: put the rest in an if)")
			}
			return true
		})
	}
	visit(s, 0)
}

// uniformDecl reports whether s declares locals whose values are the same
// in every thread, never assigned again, from an expression without calls
// (but conversions, len, min and max) or atomics.
func uniformDecl(pl *ir.TeamPlan, g *ir.Program, s ast.Stmt) bool {
	info := g.P.Info
	var names []*ast.Ident
	var vals []ast.Expr
	switch d := s.(type) {
	case *ast.AssignStmt:
		if d.Tok != token.DEFINE || len(d.Lhs) != len(d.Rhs) {
			return false
		}
		for _, l := range d.Lhs {
			names = append(names, l.(*ast.Ident))
		}
		vals = d.Rhs
	case *ast.DeclStmt:
		gd := d.Decl.(*ast.GenDecl)
		if gd.Tok != token.VAR || len(gd.Specs) != 1 {
			return false
		}
		vs := gd.Specs[0].(*ast.ValueSpec)
		if len(vs.Values) != len(vs.Names) {
			return false
		}
		names, vals = vs.Names, vs.Values
	default:
		return false
	}
	for _, n := range names {
		v, ok := info.Defs[n].(*types.Var)
		if !ok || pl.Varying.Varying[v] || pl.K.Assigned[v] {
			return false
		}
	}
	for _, e := range vals {
		if pl.Varying.DependsOn(g.P.Info, e) {
			return false
		}
		if !ir.CallsNothing(info, e) {
			return false
		}
		readsTeam := false
		ast.Inspect(e, func(n ast.Node) bool {
			if ix, ok := n.(*ast.IndexExpr); ok && ir.TeamArrayOf(info, pl.K.Fn, ix.X) != nil {
				readsTeam = true // the team array may change between barriers
			}
			return !readsTeam
		})
		if readsTeam {
			return false
		}
	}
	return true
}

// header checks an expression of a loop or if around a barrier: it runs
// once per team, so it may read only parameters, constants, the team's
// declarations and counters.
func header(pl *ir.TeamPlan, g *ir.Program, e ast.Expr) {
	info := g.P.Info
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			v, ok := info.Uses[n].(*types.Var)
			if !ok {
				return true
			}
			if p := pl.K.ByObj[v]; p != nil && !pl.K.Assigned[v] {
				return true
			}
			if pl.Counters[v] || isTeamDecl(pl, v) {
				return true
			}
			g.Errs.Add(n.Pos(), "%s in the condition of an if or loop around a barrier: it may use only the kernel's parameters, constants, values declared at the top of the body that are the same in every thread, and counters of loops around barriers", n.Name)
		case *ast.CallExpr:
			tv := info.Types[n.Fun]
			if !tv.IsType() && !tv.IsBuiltin() {
				g.Errs.Add(n.Pos(), "a call in the condition of an if or loop around a barrier is not supported")
				return false
			}
		case *ast.IndexExpr:
			g.Errs.Add(n.Pos(), "an element in the condition of an if or loop around a barrier is not supported: it runs once per team")
			return false
		}
		return true
	})
}

func isTeamDecl(pl *ir.TeamPlan, v *types.Var) bool {
	for s := range pl.TeamDecl {
		switch d := s.(type) {
		case *ast.AssignStmt:
			for _, l := range d.Lhs {
				if l.Pos() == v.Pos() {
					return true
				}
			}
		case *ast.DeclStmt:
			for _, spec := range d.Decl.(*ast.GenDecl).Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if n.Pos() == v.Pos() {
						return true
					}
				}
			}
		}
	}
	return false
}

// digits gives the prover ranges for locals defined once as x / c or x % c
// (c a positive constant) of a variable x it knows in [0, h) for a
// constant h: [0, ceil(h/c)) and [0, c). A team kernel splits its thread
// index so (ly, lx := th/16, th%16), and its team arrays' indexes are then
// proven in range (matmul_tiled on POCL: 105 ms with a test at each
// team-array access, 34 ms without).
func (pr *prover) digits() {
	info := pr.g.P.Info
	for v, d := range pr.defs {
		if v.Type() != types.Typ[types.Int] {
			continue
		}
		be, ok := ast.Unparen(d).(*ast.BinaryExpr)
		if !ok || be.Op != token.QUO && be.Op != token.REM {
			continue
		}
		cv := info.Types[be.Y].Value
		if cv == nil {
			continue
		}
		c, ok := ConstOf(mustConst(cv))
		if !ok || c <= 0 {
			continue
		}
		id, ok := ast.Unparen(be.X).(*ast.Ident)
		if !ok {
			continue
		}
		x, _ := info.Uses[id].(*types.Var)
		name, ok := pr.Vars[x]
		if !ok {
			continue
		}
		r, ok := pr.ranges[name]
		if !ok || r.lo < 0 {
			continue
		}
		h, ok := ConstOf(r.hi)
		if !ok || h <= 0 {
			continue
		}
		dn := "l:" + ir.Itoa(len(pr.ranges)) + ":" + v.Name()
		pr.Vars[v] = dn
		if be.Op == token.QUO {
			pr.ranges[dn] = vrange{hi: ConstPoly(h/c + min(h%c, 1))} // (h+c-1)/c, which may overflow
		} else {
			pr.ranges[dn] = vrange{hi: ConstPoly(c)}
		}
	}
}

// mustConst is integer constant v as a poly (0 when it does not fit).
func mustConst(v constant.Value) poly {
	n, _ := constant.Int64Val(constant.ToInt(v))
	return ConstPoly(n)
}
