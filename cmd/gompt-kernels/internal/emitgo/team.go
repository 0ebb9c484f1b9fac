package emitgo

import (
	"go/ast"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// teamHost writes a team kernel's Go image after its arguments: each team
// of the range in turn, its team arrays fresh (zero), and its body as
// planned (planTeam): the team-level statements once, each leaf in a loop
// over the team's threads (as POCL runs a work-group's work-items between
// barriers, and KernelAbstractions' CPU backend), its locals per thread.
// A barrier is the end of one leaf's loop and the start of the next: every
// thread has run the statements before it when any runs those after it.
func teamHost(g *ir.Program, w *goWriter, k *ir.Kernel) {
	pl := k.Plan
	used := map[*types.Var]bool{}
	for _, p := range k.Args() {
		if p.Slice && provenIn(g, k, p) {
			w.imports["unsafe"] = "unsafe"
			w.p("%s := unsafe.Pointer(unsafe.SliceData(%s))", base(p), p.Name)
		}
	}
	ls := &ir.Lockstep{K: k, Varying: pl.Varying.Varying, Arrays: pl.Arrays}
	for _, v := range ir.SortedVars(pl.Arrays) {
		if pl.Arrays[v] == v.Name() {
			w.p("var %s [%d]%s // per thread", v.Name(), k.Team, localGoType(v))
		} else {
			w.p("var %s [%d]%s // %s, per thread", pl.Arrays[v], k.Team, localGoType(v), v.Name())
		}
	}
	team := k.Params[0].Name
	w.p("gomptLo0, gomptHi0 := gomptR.Clamp(0, %s)", k.Dims[0].Name)
	w.p("for %s := gomptLo0; %s < gomptHi0; %s++ {", team, team, team)
	tb := &gobody{g: g, k: k, w: w, used: used, depth: 1}
	tb.ret = func() string { panic("gompt-kernels: a return in a team kernel passed planTeam") }
	var block func(list []ast.Stmt)
	block = func(list []ast.Stmt) {
		for _, s := range list {
			switch {
			case ir.IsBarrierStmt(g.P.Info, s):
				tb.line("// barrier")
			case pl.TeamDecl[s]:
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
			case ir.HasBarrier(g.P.Info, s):
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
				tb.plain("for gomptJ := 0; gomptJ < %d; gomptJ++ {", k.Team)
				if inner.used[k.Thread.Obj] {
					tb.plain("\t%s := gomptJ", k.Thread.Name)
				}
				tb.sb.WriteString(indent(inner.sb.String(), tb.depth))
				tb.plain("}")
			}
		}
	}
	block(k.Decl.Body.List)
	w.sb.WriteString(tb.sb.String())
	w.p("}")
	for _, v := range ir.SortedVars(pl.Arrays) {
		w.p("_ = %s", pl.Arrays[v])
	}
	for _, p := range k.Args() {
		if !used[p.Obj] && !(p.Slice && provenIn(g, k, p)) {
			w.p("_ = %s", p.Name)
		}
	}
}
