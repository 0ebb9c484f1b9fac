package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// Team kernels: //gompt:kernel team=N dims=teams. The function's first two
// parameters are the team's index, in [0, teams), and the thread's index
// in its team, in [0, N); the N threads of a team run together. Arrays
// declared at the top of the body (var tile [256]float32) are the team's:
// one per team, shared by its threads (__local in OpenCL C, .shared in
// PTX). kernelrt.Barrier() waits until every thread of the team has
// reached it, and makes the team's writes before it visible after it. Every
// thread must reach the same barriers: a barrier inside an if or loop whose
// condition depends on the thread is an error, as is a return.
//
// On an OpenCL or CUDA device a team is a work-group of N work-items; the
// Go image runs a team's threads as loops between barriers (teamgo.go).

// maxTeamThreads is the largest team=.
const maxTeamThreads = 1024

// teamKernel checks a team kernel's directive and signature and finds its
// team arrays; it reports whether k is good.
func (g *gen) teamKernel(k *kernel) bool {
	f := k.fn
	switch {
	case len(k.dims) != 1:
		g.errs.add(k.dirPos, "//gompt:kernel: team= takes dims=TEAMS, one int parameter: the number of teams")
		return false
	case k.reduce != "":
		g.errs.add(k.dirPos, "//gompt:kernel: reduce= with team= is not supported; reduce into a team array and write one result per team")
		return false
	case len(f.params) < 2 || f.params[1].slice || f.params[1].t.kind() != types.Int:
		g.errs.add(f.decl.Type.Params.Pos(), "team kernel %s: its first two parameters must be the team's index and the thread's index in its team (int), then the number of teams and the other parameters", f.name)
		return false
	case k.dims[0] == f.params[1]:
		g.errs.add(k.dirPos, "//gompt:kernel: dims=: %s is the thread's index, not the number of teams", k.dims[0].name)
		return false
	}
	k.thread = f.params[1]
	k.teamArrays = map[*types.Var]int{}
	for _, s := range f.decl.Body.List {
		ds, ok := s.(*ast.DeclStmt)
		if !ok {
			continue
		}
		gd := ds.Decl.(*ast.GenDecl)
		if gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if vs.Type == nil || len(vs.Values) > 0 {
				continue
			}
			arr, ok := g.p.info.TypeOf(vs.Type).(*types.Array)
			if !ok {
				continue
			}
			if sc, ok := scalarOf(arr.Elem()); !ok || sc.isBool() {
				continue
			}
			for _, n := range vs.Names {
				if v, ok := g.p.info.Defs[n].(*types.Var); ok {
					k.teamArrays[v] = int(arr.Len())
				}
			}
		}
	}
	return true
}

// teamArrayOf is the team array e names, or nil.
func teamArrayOf(info *types.Info, f *fn, e ast.Expr) *types.Var {
	if f.kernel == nil || f.kernel.teamArrays == nil {
		return nil
	}
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := info.Uses[id].(*types.Var)
	if v == nil {
		v, _ = info.Defs[id].(*types.Var)
	}
	if _, ok := f.kernel.teamArrays[v]; ok {
		return v
	}
	return nil
}

// teamElem is the element type of team array v.
func teamElem(v *types.Var) scalar {
	s, _ := scalarOf(v.Type().(*types.Array).Elem())
	return s
}

// isBarrier reports whether e calls kernelrt.Barrier.
func isBarrier(info *types.Info, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	pn, ok := info.Uses[id].(*types.PkgName)
	return ok && pn.Imported().Path() == rtPkg && sel.Sel.Name == "Barrier"
}

func isBarrierStmt(info *types.Info, s ast.Stmt) bool {
	es, ok := s.(*ast.ExprStmt)
	return ok && isBarrier(info, es.X)
}

// hasBarrier reports whether s has a barrier.
func hasBarrier(info *types.Info, s ast.Node) bool {
	found := false
	ast.Inspect(s, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && isBarrier(info, e) {
			found = true
		}
		return !found
	})
	return found
}

// checkBarrierCall checks a call of kernelrt.Barrier: only in a team
// kernel's body, as a statement (checkTeams says where).
func (c *checker) checkBarrierCall(e *ast.CallExpr) {
	if c.f.kernel == nil || c.f.kernel.team == 0 {
		c.unsupported(e.Pos(), "kernelrt.Barrier outside a team kernel", "a barrier is in the body of a //gompt:kernel team=N function, not in a helper or a map kernel")
		return
	}
	if len(e.Args) != 0 {
		c.unsupported(e.Pos(), "kernelrt.Barrier with arguments", "")
	}
}

// teamArrayIndex checks an index of a team array (and reports whether ix
// is one).
func (c *checker) teamArrayIndex(ix *ast.IndexExpr) bool {
	if teamArrayOf(c.info(), c.f, ix.X) == nil {
		return false
	}
	c.index(ix.Index)
	return true
}

// teamPlan is how a team kernel's body runs in its Go image: the
// statements at the team level (barriers, and the loops and ifs that hold
// them, and declarations of values the same in every thread), and between
// them, leaves run by each thread in turn.
type teamPlan struct {
	k        *kernel
	varying  *lockstep             // the locals that depend on the thread
	teamDecl map[ast.Stmt]bool     // declarations run once per team
	perThr   map[*types.Var]bool   // locals declared by a leaf: one per thread
	counters map[*types.Var]bool   // the loop counters at the team level
	arrays   map[*types.Var]string // perThr's arrays
}

// checkTeams checks where each team kernel's barriers are, and plans its
// Go image.
func (g *gen) checkTeams() {
	for _, k := range g.kernels {
		if k.team > 0 {
			k.plan = g.planTeam(k)
		}
	}
}

func (g *gen) planTeam(k *kernel) *teamPlan {
	info := g.p.info
	for _, p := range k.params[:2] {
		if k.assigned[p.obj] {
			g.errs.add(p.pos, "team kernel %s assigns %s, the %s; they stay as given", k.fn.name, p.name, map[bool]string{true: "team's index", false: "thread's index"}[p == k.params[0]])
		}
	}
	ls := &lockstep{k: k, varying: map[*types.Var]bool{k.thread.obj: true}}
	for changed := true; changed; {
		changed = ls.taint(g, k.decl.Body.List, false)
	}
	pl := &teamPlan{k: k, varying: ls, teamDecl: map[ast.Stmt]bool{}, perThr: map[*types.Var]bool{}, counters: map[*types.Var]bool{}, arrays: map[*types.Var]string{}}
	var walk func(list []ast.Stmt, under bool, top bool)
	walk = func(list []ast.Stmt, under bool, top bool) {
		for _, s := range list {
			if isBarrierStmt(info, s) {
				if under {
					g.errs.add(s.Pos(), "a barrier under a condition or loop that depends on the thread: every thread of a team must reach the same barriers")
				}
				continue
			}
			if !hasBarrier(info, s) {
				pl.leaf(g, s, top)
				continue
			}
			switch s := s.(type) {
			case *ast.BlockStmt:
				walk(s.List, under, false)
			case *ast.IfStmt:
				if s.Init != nil {
					g.errs.add(s.Pos(), "an if with an init statement around a barrier is not supported; declare the variable before the if")
				}
				c := under || ls.dependsOn(g, s.Cond)
				pl.header(g, s.Cond)
				walk(s.Body.List, c, false)
				switch e := s.Else.(type) {
				case *ast.BlockStmt:
					walk(e.List, c, false)
				case *ast.IfStmt:
					walk([]ast.Stmt{e}, c, false)
				}
			case *ast.ForStmt:
				c := under || s.Cond != nil && ls.dependsOn(g, s.Cond) || s.Init != nil && ls.dependsOn(g, s.Init) || s.Post != nil && ls.dependsOn(g, s.Post)
				if s.Init != nil {
					if as, ok := s.Init.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
						for _, l := range as.Lhs {
							if v, ok := info.Defs[l.(*ast.Ident)].(*types.Var); ok {
								pl.counters[v] = true
							}
						}
						for _, r := range as.Rhs {
							pl.header(g, r)
						}
					} else {
						g.errs.add(s.Init.Pos(), "a loop around a barrier declares its counter (for i := ...)")
					}
				}
				if s.Cond != nil {
					pl.header(g, s.Cond)
				}
				if s.Post != nil {
					ast.Inspect(s.Post, func(n ast.Node) bool {
						if e, ok := n.(ast.Expr); ok {
							if _, isID := e.(*ast.Ident); !isID {
								pl.header(g, e)
								return false
							}
						}
						return true
					})
				}
				for v := range pl.counters {
					if assignedIn(info, s.Body, v) {
						g.errs.add(s.Pos(), "the body of a loop around a barrier assigns its counter %s; only its post statement may", v.Name())
					}
				}
				walk(s.Body.List, c, false)
			case *ast.RangeStmt:
				c := under || ls.dependsOn(g, s.X)
				pl.header(g, s.X)
				if id, ok := s.Key.(*ast.Ident); ok && s.Tok == token.DEFINE {
					if v, ok := info.Defs[id].(*types.Var); ok {
						pl.counters[v] = true
					}
				} else if s.Key != nil {
					g.errs.add(s.Pos(), "a range loop around a barrier declares its variable (for i := range n)")
				}
				walk(s.Body.List, c, false)
			default:
				g.errs.add(s.Pos(), "a barrier in a %s is not supported: barriers are statements of the body, or of ifs and for loops in it", stmtName(s))
			}
		}
	}
	walk(k.decl.Body.List, false, true)
	n := 0
	var vs []*types.Var
	for v := range pl.perThr {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Pos() < vs[j].Pos() })
	for _, v := range vs {
		n++
		pl.arrays[v] = ownName(g, k, v, fmt.Sprintf("gomptT%d%s", n, upperFirst(v.Name())))
	}
	return pl
}

// leaf plans s, a statement without a barrier: a declaration at the top of
// the body of values the same in every thread (and never assigned again)
// runs once per team; other statements run at each thread, the locals they
// declare one per thread. A break or continue may not leave the leaf.
func (pl *teamPlan) leaf(g *gen, s ast.Stmt, top bool) {
	info := g.p.info
	if top && pl.uniformDecl(g, s) {
		pl.teamDecl[s] = true
		return
	}
	if ds, ok := s.(*ast.DeclStmt); ok && top {
		if vs, ok := ds.Decl.(*ast.GenDecl).Specs[0].(*ast.ValueSpec); ok && len(vs.Names) > 0 {
			if v, ok := info.Defs[vs.Names[0]].(*types.Var); ok {
				if _, isArr := pl.k.teamArrays[v]; isArr {
					pl.teamDecl[s] = true
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
					pl.perThr[v] = true
				}
			}
		}
	case *ast.DeclStmt:
		for _, spec := range d.Decl.(*ast.GenDecl).Specs {
			if vs, ok := spec.(*ast.ValueSpec); ok {
				for _, n := range vs.Names {
					if v, ok := info.Defs[n].(*types.Var); ok {
						if _, isArr := pl.k.teamArrays[v]; isArr {
							g.errs.add(n.Pos(), "team array %s is declared at the top of the kernel's body, not in a block", n.Name)
						}
						pl.perThr[v] = true
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
				if n.Label != nil && !labelIn(s, n.Label.Name) || n.Label == nil && inner == 0 && n.Tok != token.FALLTHROUGH {
					g.errs.add(n.Pos(), "a %s out of a loop around a barrier is not supported in a team kernel", n.Tok)
				}
			case *ast.ReturnStmt:
				g.errs.add(n.Pos(), "a return in a team kernel is not supported (every thread reaches every barrier: put the rest in an if)")
			}
			return true
		})
	}
	visit(s, 0)
}

// labelIn reports whether label is defined inside s.
func labelIn(s ast.Node, label string) bool {
	found := false
	ast.Inspect(s, func(n ast.Node) bool {
		if l, ok := n.(*ast.LabeledStmt); ok && l.Label.Name == label {
			found = true
		}
		return !found
	})
	return found
}

// uniformDecl reports whether s declares locals whose values are the same
// in every thread, never assigned again, from an expression without calls
// (but conversions, len, min and max) or atomics.
func (pl *teamPlan) uniformDecl(g *gen, s ast.Stmt) bool {
	info := g.p.info
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
		if !ok || pl.varying.varying[v] || pl.k.assigned[v] {
			return false
		}
	}
	for _, e := range vals {
		if pl.varying.dependsOn(g, e) {
			return false
		}
		if !callsNothing(info, e) {
			return false
		}
		readsTeam := false
		ast.Inspect(e, func(n ast.Node) bool {
			if ix, ok := n.(*ast.IndexExpr); ok && teamArrayOf(info, pl.k.fn, ix.X) != nil {
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
func (pl *teamPlan) header(g *gen, e ast.Expr) {
	info := g.p.info
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			v, ok := info.Uses[n].(*types.Var)
			if !ok {
				return true
			}
			if p := pl.k.byObj[v]; p != nil && !pl.k.assigned[v] {
				return true
			}
			if pl.counters[v] || pl.isTeamDecl(v) {
				return true
			}
			g.errs.add(n.Pos(), "%s in the condition of an if or loop around a barrier: it may use only the kernel's parameters, constants, values declared at the top of the body that are the same in every thread, and counters of loops around barriers", n.Name)
		case *ast.CallExpr:
			tv := info.Types[n.Fun]
			if !tv.IsType() && !tv.IsBuiltin() {
				g.errs.add(n.Pos(), "a call in the condition of an if or loop around a barrier is not supported")
				return false
			}
		case *ast.IndexExpr:
			g.errs.add(n.Pos(), "an element in the condition of an if or loop around a barrier is not supported: it runs once per team")
			return false
		}
		return true
	})
}

func (pl *teamPlan) isTeamDecl(v *types.Var) bool {
	for s := range pl.teamDecl {
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

// assignedIn reports whether n assigns v.
func assignedIn(info *types.Info, n ast.Node, v *types.Var) bool {
	found := false
	is := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && info.Uses[id] == v
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for _, l := range s.Lhs {
				found = found || is(l)
			}
		case *ast.IncDecStmt:
			found = found || is(s.X)
		}
		return !found
	})
	return found
}

// C: the team arrays are the entry's __local arrays, passed to the body.

// teamParams are the body's parameters for the team arrays, in order.
func (c *cfunc) teamParams() []string {
	k := c.f.kernel
	if k == nil || k.team == 0 {
		return nil
	}
	var out []string
	for _, v := range sortedTeamArrays(k) {
		name := cName(v.Name(), c.used)
		c.names[v] = name
		out = append(out, "__local "+teamElem(v).c()+" *"+name)
	}
	return out
}

func sortedTeamArrays(k *kernel) []*types.Var {
	var vs []*types.Var
	for v := range k.teamArrays {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Pos() < vs[j].Pos() })
	return vs
}

// teamLoad is element ix of a team array in C, checked against its length
// unless proven in range (outside: the check fails, and the load gives 0,
// as a buffer's).
func (c *cfunc) teamLoad(ix *ast.IndexExpr) (string, bool) {
	v := teamArrayOf(c.info(), c.f, ix.X)
	if v == nil {
		return "", false
	}
	t := teamElem(v)
	if c.proven(ix) {
		return c.names[v] + "[" + c.index(ix.Index) + "]", true
	}
	if !c.checking() {
		name := "gompt_lload_" + t.c()
		c.pre.need(name, fmt.Sprintf("%s %s %s(__local %s *a, long n, long i) { return (ulong)i < (ulong)n ? a[i] : (%s)0; }", inl, t.c(), name, t.c(), t.c()))
		return fmt.Sprintf("%s(%s, %dL, %s)", name, c.names[v], c.f.kernel.teamArrays[v], c.index(ix.Index)), true
	}
	name := "gompt_lldc_" + t.c()
	c.pre.need(name, fmt.Sprintf("%s %s %s(__local %s *a, long n, long i, __global long *f, int *stop, long site) { if ((ulong)i < (ulong)n) return a[i]; %s(f, stop, site, i, n); return (%s)0; }",
		inl, t.c(), name, t.c(), c.pre.fail(c.file.k), t.c()))
	return fmt.Sprintf("%s(%s, %dL, %s, %s)", name, c.names[v], c.f.kernel.teamArrays[v], c.index(ix.Index), c.site(siteIndex, ix.Index.Pos())), true
}

// teamStore stores val() into element ix of a team array (outside its
// length: dropped), with a test of the index even where it is proven.
func (c *cfunc) teamStore(ix *ast.IndexExpr, val func() string) bool {
	v := teamArrayOf(c.info(), c.f, ix.X)
	if v == nil {
		return false
	}
	// Tested even where proven: POCL ran matmul_tiled 512 in 35 ms so,
	// in 62-65 ms with the proven stores untested. Where not proven, an
	// index outside fails the check.
	c.checkedAt(ix, fmt.Sprintf("%dL", c.f.kernel.teamArrays[v]), true, func(idx string) {
		c.line("%s[%s] = %s;", c.names[v], idx, val())
	})
	return true
}

// teamStoreAt is teamStore of v at the C index idx, already evaluated (a
// tuple assignment's target).
func (c *cfunc) teamStoreAt(ix *ast.IndexExpr, idx, v string) bool {
	tv := teamArrayOf(c.info(), c.f, ix.X)
	if tv == nil {
		return false
	}
	c.checkedIdx(ix, idx, fmt.Sprintf("%dL", c.f.kernel.teamArrays[tv]), true, func(idx string) {
		c.line("%s[%s] = %s;", c.names[tv], idx, v)
	})
	return true
}

// teamEntry is a team kernel's entry point: the team arrays in local
// memory, and the work-group's loop over the teams (one team per
// work-group when the launch has as many, as the launcher's).
func (g *gen) teamEntry(k *kernel, pre *prelude) string {
	w := &entryWriter{}
	line := w.line
	// A checked team kernel's stop flag is set, never read: a team's
	// threads all go on to its barriers (see cfunc.emit).
	names := w.begin(k, fmt.Sprintf("__attribute__((reqd_work_group_size(%d, 1, 1))) ", k.team))
	var locals []string
	for _, v := range sortedTeamArrays(k) {
		n := "gompt_l_" + v.Name()
		line("__local %s %s[%d];", teamElem(v).c(), n, max(k.teamArrays[v], 1))
		locals = append(locals, n)
	}
	rest := lengths(k, pre, names, line)
	teams := "(long)" + names[k.dims[0]]
	line("long gompt_th = (long)get_local_id(0);")
	line("for (long gompt_t = (long)get_group_id(0); gompt_t < %s; gompt_t += (long)get_num_groups(0)) {", teams)
	w.depth++
	args := append([]string{"gompt_t", "gompt_th"}, rest...)
	line("%s(%s%s);", bodyName(k), strings.Join(append(args, locals...), ", "), faultArgsNext)
	line("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")
	w.depth--
	line("}")
	w.depth--
	line("}")
	return w.sb.String()
}

// digits gives the prover ranges for locals defined once as x / c or x % c
// (c a positive constant) of a variable x it knows in [0, h) for a
// constant h: [0, ceil(h/c)) and [0, c). A team kernel splits its thread
// index so (ly, lx := th/16, th%16), and its team arrays' indexes are then
// proven in range (matmul_tiled on POCL: 105 ms with a test at each
// team-array access, 34 ms without).
func (pr *prover) digits() {
	info := pr.g.p.info
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
		c, ok := constOf(mustConst(cv))
		if !ok || c <= 0 {
			continue
		}
		id, ok := ast.Unparen(be.X).(*ast.Ident)
		if !ok {
			continue
		}
		x, _ := info.Uses[id].(*types.Var)
		name, ok := pr.vars[x]
		if !ok {
			continue
		}
		r, ok := pr.ranges[name]
		if !ok || r.lo < 0 {
			continue
		}
		h, ok := constOf(r.hi)
		if !ok || h <= 0 {
			continue
		}
		dn := "l:" + itoa(len(pr.ranges)) + ":" + v.Name()
		pr.vars[v] = dn
		if be.Op == token.QUO {
			pr.ranges[dn] = vrange{hi: constPoly((h + c - 1) / c)}
		} else {
			pr.ranges[dn] = vrange{hi: constPoly(c)}
		}
	}
}

// mustConst is integer constant v as a poly (0 when it does not fit).
func mustConst(v constant.Value) poly {
	n, _ := constant.Int64Val(constant.ToInt(v))
	return constPoly(n)
}
