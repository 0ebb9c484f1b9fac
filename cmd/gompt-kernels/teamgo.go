package main

import (
	"go/ast"
	"go/types"
	"strings"
)

// teamHost writes a team kernel's Go image after its arguments: each team
// of the range in turn, its team arrays fresh (zero), and its body as
// planned (planTeam): the team-level statements once, each leaf in a loop
// over the team's threads (as POCL runs a work-group's work-items between
// barriers, and KernelAbstractions' CPU backend), its locals per thread.
// A barrier is the end of one leaf's loop and the start of the next: every
// thread has run the statements before it when any runs those after it.
func (g *gen) teamHost(w *goWriter, k *kernel) {
	pl := k.plan
	used := map[*types.Var]bool{}
	for _, p := range k.args() {
		if p.slice && g.provenIn(k, p) {
			w.imports["unsafe"] = "unsafe"
			w.p("%s := unsafe.Pointer(unsafe.SliceData(%s))", base(p), p.name)
		}
	}
	ls := &lockstep{k: k, varying: pl.varying.varying, arrays: pl.arrays}
	for _, v := range sortedVars(pl.arrays) {
		if pl.arrays[v] == v.Name() {
			w.p("var %s [%d]%s // per thread", v.Name(), k.team, localGoType(v))
		} else {
			w.p("var %s [%d]%s // %s, per thread", pl.arrays[v], k.team, localGoType(v), v.Name())
		}
	}
	team := k.params[0].name
	w.p("gomptLo0, gomptHi0 := gomptR.Clamp(0, %s)", k.dims[0].name)
	w.p("for %s := gomptLo0; %s < gomptHi0; %s++ {", team, team, team)
	tb := &gobody{g: g, k: k, w: w, used: used, depth: 1}
	tb.ret = func() string { panic("gompt-kernels: a return in a team kernel passed planTeam") }
	var block func(list []ast.Stmt)
	block = func(list []ast.Stmt) {
		for _, s := range list {
			switch {
			case isBarrierStmt(g.p.info, s):
				tb.line("// barrier")
			case pl.teamDecl[s]:
				tb.stmt(s)
				if ds, ok := s.(*ast.DeclStmt); ok {
					for _, spec := range ds.Decl.(*ast.GenDecl).Specs {
						for _, n := range spec.(*ast.ValueSpec).Names {
							tb.line("_ = %s", n.Name)
						}
					}
				}
				if as, ok := s.(*ast.AssignStmt); ok {
					for _, l := range as.Lhs {
						tb.line("_ = %s", l.(*ast.Ident).Name)
					}
				}
			case hasBarrier(g.p.info, s):
				switch s := s.(type) {
				case *ast.BlockStmt:
					tb.line("{")
					tb.depth++
					block(s.List)
					tb.depth--
					tb.line("}")
				case *ast.IfStmt:
					tb.line("if %s {", tb.expr(s.Cond))
					tb.depth++
					block(s.Body.List)
					tb.depth--
					switch e := s.Else.(type) {
					case *ast.IfStmt:
						tb.line("} else {")
						tb.depth++
						block([]ast.Stmt{e})
						tb.depth--
					case *ast.BlockStmt:
						tb.line("} else {")
						tb.depth++
						block(e.List)
						tb.depth--
					}
					tb.line("}")
				case *ast.ForStmt:
					head := "for "
					if s.Init != nil || s.Post != nil {
						head += tb.simple(s.Init) + "; "
						if s.Cond != nil {
							head += tb.expr(s.Cond)
						}
						head += "; " + tb.simple(s.Post)
					} else if s.Cond != nil {
						head += tb.expr(s.Cond)
					}
					tb.line("%s {", strings.TrimRight(head, " "))
					tb.depth++
					block(s.Body.List)
					tb.depth--
					tb.line("}")
				case *ast.RangeStmt:
					head := "for " + tb.rangeVars(s)
					tb.line("%srange %s {", head, tb.expr(s.X))
					tb.depth++
					block(s.Body.List)
					tb.depth--
					tb.line("}")
				}
			default:
				inner := &gobody{g: g, k: k, w: w, used: map[*types.Var]bool{}, ls: ls, leaf: true, depth: 1, top: s}
				inner.ret = tb.ret
				inner.leafStmt(s)
				for v := range inner.used {
					used[v] = true
				}
				tb.plain("for gomptJ := 0; gomptJ < %d; gomptJ++ {", k.team)
				if inner.used[k.thread.obj] {
					tb.plain("\t%s := gomptJ", k.thread.name)
				}
				tb.sb.WriteString(indent(inner.sb.String(), tb.depth))
				tb.plain("}")
			}
		}
	}
	block(k.decl.Body.List)
	w.sb.WriteString(tb.sb.String())
	w.p("}")
	for _, v := range sortedVars(pl.arrays) {
		w.p("_ = %s", pl.arrays[v])
	}
	for _, p := range k.args() {
		if !used[p.obj] && !(p.slice && g.provenIn(k, p)) {
			w.p("_ = %s", p.name)
		}
	}
}

func sortedVars[T any](m map[*types.Var]T) []*types.Var {
	var vs []*types.Var
	for v := range m {
		vs = append(vs, v)
	}
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			if vs[j].Pos() < vs[i].Pos() {
				vs[i], vs[j] = vs[j], vs[i]
			}
		}
	}
	return vs
}
