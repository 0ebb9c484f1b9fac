package emitgo

import (
	"go/ast"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// rowsLoop writes the loop over dimension 0 from lo to hi (labelled l
// where labelled) whose body b has written, reaching b.rows's elements
// through their rows (plan.RowsOf): where the loop has points, each row
// is taken once, as a slice of the loop's width from the first point's
// element, and the point's element is the row's at gomptJ, the point's
// place in the loop; Go drops the bounds test of [gomptJ] in the loop up
// to that width. The index is lo + gomptJ.
func rowsLoop(b *gobody, lo, hi, l string, labelled bool) {
	w := b.w
	ix := b.k.Index[0].Name
	w.p("if %s < %s {", lo, hi)
	w.p("gomptW := %s - %s", hi, lo)
	for _, d := range rowDecls(b, b.rows, lo, "gomptW") {
		w.p("%s %s%s", d.text, posMark, srcPos(b.g, d.stmt))
	}
	if labelled {
		w.p("%s:", l)
	}
	w.p("for gomptJ := range gomptW {")
	w.p("%s := %s + gomptJ", ix, lo)
	if b.rows.DeadX {
		w.p("_ = %s", ix)
	}
	w.sb.WriteString(b.sb.String())
	w.p("}")
	w.p("}")
}

// loopRowsFor writes counted loop s through its rows rs (plan.LoopRows):
// where the loop has turns, each row is taken once, as a slice of the
// turns from the first turn's element, and the turn's element is the
// row's at the turn's place (rs.Turn); the counter is the first turn's
// plus that place.
func (b *gobody) loopRowsFor(s *ast.ForStmt, rs *ir.Rows) {
	init := s.Init.(*ast.AssignStmt)
	ctr := init.Lhs[0].(*ast.Ident).Name
	tag := strings.TrimPrefix(rs.Turn, "gomptT")
	lo, width := "gomptFrom"+tag, "gomptTurns"+tag
	bound := b.expr(s.Cond.(*ast.BinaryExpr).Y)
	b.line("if %s := %s; %s < %s {", lo, b.expr(init.Rhs[0]), lo, bound)
	b.depth++
	b.line("%s := %s - %s", width, bound, lo)
	saved := b.pos
	for _, d := range rowDecls(b, rs, lo, width) {
		b.pos = srcPos(b.g, d.stmt)
		b.line("%s", d.text)
	}
	b.pos = saved
	b.line("for %s := range %s {", rs.Turn, width)
	b.depth++
	b.line("%s := %s + %s", ctr, lo, rs.Turn)
	if rs.DeadX {
		b.line("_ = %s", ctr)
	}
	b.loopRows = append(b.loopRows, rs)
	for _, st := range s.Body.List {
		b.stmt(st)
		for _, v := range rs.Dead[st] {
			b.line("_ = %s", v.Name())
		}
	}
	b.loopRows = b.loopRows[:len(b.loopRows)-1]
	b.depth--
	b.closing(s.Body.Rbrace, "}")
	b.depth--
	b.plain("}")
}

// rowDecl declares rows: the rows a statement reaches first, on one line.
type rowDecl struct {
	text string
	stmt ast.Stmt
}

// rowDecls declares rs's rows as slices of width elements from the
// first turn's, lo being the first turn's place.
func rowDecls(b *gobody, rs *ir.Rows, lo, width string) []rowDecl {
	var out []rowDecl
	var names, rows []string
	for i, r := range rs.List {
		off := ""
		for _, t := range r.Terms {
			e := b.expr(t.E)
			switch {
			case t.Neg:
				off += " - " + e
			case off == "":
				off = e
			default:
				off += " + " + e
			}
		}
		off = strings.TrimPrefix(off+" + "+lo, " + ")
		if strings.HasPrefix(off, " - ") {
			off = "-" + off[3:]
		}
		b.used[r.P.Obj] = true
		names = append(names, r.Name)
		rows = append(rows, r.P.Name+"["+off+":][:"+width+"]")
		if i+1 == len(rs.List) || rs.List[i+1].Stmt != r.Stmt {
			out = append(out, rowDecl{strings.Join(names, ", ") + " := " + strings.Join(rows, ", "), r.Stmt})
			names, rows = nil, nil
		}
	}
	return out
}
