package emitgo

import (
	"go/ast"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// sumJam writes loop s of a point's image as plan.SumJams planned it:
// where the buffers its tails write are apart from those its heads and
// inner loop read, ir.Jam turns at a time (the turns' heads, one inner
// loop running each turn's body in turn order, the turns' tails in
// order; turn t's locals named gompt<t><Name>, its counter ctr + t), then
// the turns left one at a time; else the loop as written.
func (b *gobody) sumJam(s *ast.ForStmt, sj *ir.SumJam) {
	cond := b.apartCond(sj.Written, sj.Reads)
	b.line("if %s {", cond)
	b.depth++
	b.line("%s", b.simple(s.Init))
	ctr := sj.Ctr.Name()
	bnd := b.expr(sj.Bound)
	b.jamLoop(ctr, bnd)
	b.depth++
	savedSubst := b.subst
	turns := jamTurns(sj.Ctr, sj.Locals)
	run := func(list []ast.Stmt) {
		for t := range ir.Jam {
			b.subst = turns[t]
			b.stmts(list)
		}
		b.subst = nil
	}
	run(sj.Head)
	in := sj.Inner
	saved := b.pos
	b.pos = srcPos(b.g, in)
	b.line("for %s; %s; %s {", b.simple(in.Init), b.expr(in.Cond), b.simple(in.Post))
	b.pos = saved
	b.depth++
	run(in.Body.List)
	b.depth--
	b.closing(in.Body.Rbrace, "}")
	run(sj.Tail)
	b.subst = savedSubst
	b.depth--
	b.plain("}")
	// The turns left, one at a time, from where the jammed turns stopped.
	b.line("for ; %s; %s {", b.expr(s.Cond), b.simple(s.Post))
	b.depth++
	b.asWritten(s.Body.List)
	b.depth--
	b.closing(s.Body.Rbrace, "}")
	b.depth--
	b.plain("} else {")
	b.depth++
	b.asWritten([]ast.Stmt{s})
	b.depth--
	b.plain("}")
}

// asWritten writes list with no jam of its planned loops.
func (b *gobody) asWritten(list []ast.Stmt) {
	saved := b.noJam
	b.noJam = true
	b.stmts(list)
	b.noJam = saved
}
