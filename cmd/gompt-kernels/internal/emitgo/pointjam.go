package emitgo

import (
	"fmt"
	"go/ast"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// pointJam writes loop s of a point's image as plan.PointJams planned it:
// where its written buffer is apart from those it reads, ir.Jam turns at
// a time, each element of the view through its updates in order, held
// in a local between them, then the turns left one at a time; else the
// loop as written.
func (b *gobody) pointJam(s *ast.ForStmt, pj *ir.PointJam) {
	cond := b.apartCond([]*ir.Param{pj.Written}, pj.Reads)
	var lo, width string
	if pj.Loop != nil {
		// The row from lo's element, where the inner loop has turns (and,
		// for j <= hi, where hi+1 does not wrap).
		hi := b.expr(pj.Hi)
		lo = b.expr(pj.Lo)
		if pj.Incl {
			b.w.imports["math"] = "gomptmath"
			cond += fmt.Sprintf(" && %s <= %s && %s < gomptmath.MaxInt", lo, hi, hi)
			width = fmt.Sprintf("%s-%s+1", hi, lo)
		} else {
			cond += fmt.Sprintf(" && %s < %s", lo, hi)
			width = fmt.Sprintf("%s-%s", hi, lo)
		}
	}
	b.line("if %s {", cond)
	b.depth++
	if pj.Loop != nil {
		b.pos = srcPos(b.g, pj.Loop)
		off := lo
		if pj.Row != nil {
			off = b.expr(pj.Row) + " + " + off
		}
		b.line("gomptRow := %s[%s:][:%s]", b.expr(pj.Elem.X), off, width)
	}
	b.line("%s", b.simple(s.Init))
	ctr := pj.Ctr.Name()
	bnd := b.expr(pj.Bound)
	b.jamLoop(ctr, bnd)
	b.depth++
	saved, savedSubst := b.pos, b.subst
	turns := jamTurns(pj.Ctr, pj.Locals)
	for t := range ir.Jam {
		b.subst = turns[t]
		for i, d := range pj.Defs {
			b.pos = srcPos(b.g, d)
			name := pj.Locals[i].Name()
			if t > 0 {
				name = turns[t][pj.Locals[i]]
			}
			b.line("%s := %s", name, b.expr(d.Rhs[0]))
		}
	}
	b.subst = nil
	var view, key string
	var body *ast.BlockStmt
	if pj.Loop != nil {
		view, key, body = "gomptRow", "gomptJ", pj.Loop.Body
		b.pos = srcPos(b.g, pj.Loop)
		b.line("for %s := range %s {", key, view)
		b.depth++
		if pj.InnerRead {
			b.line("%s := %s + %s", pj.InnerCounter.Name(), lo, key)
		}
	} else {
		key, view, body = pj.Range.Key.(*ast.Ident).Name, b.expr(pj.Range.X), pj.Range.Body
		b.pos = srcPos(b.g, pj.Range)
		b.line("for %s := range %s {", key, view)
		b.depth++
	}
	b.pos = srcPos(b.g, pj.Update)
	b.line("gomptV := %s[%s]", view, key)
	for t := range ir.Jam {
		b.subst = turns[t]
		b.line("gomptV %s %s", pj.Update.Tok, b.expr(pj.Update.Rhs[0]))
	}
	b.subst = savedSubst
	b.line("%s[%s] = gomptV", view, key)
	b.depth--
	b.closing(body.Rbrace, "}")
	b.pos = saved
	b.depth--
	b.line("}")
	b.turnsLeft(s)
	b.depth--
	b.line("} else {")
	b.depth++
	b.noJam = true
	b.stmt(s)
	b.noJam = false
	b.depth--
	b.line("}")
}
