package emitgo

import (
	"go/ast"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// splitLoops writes dimension 0's loops split at the ends of sp's
// interior (plan.Split), its expressions written by b: [lo, a) and
// [b, hi) run the whole body (through rows), [a, b) the interior, in that
// order. The whole body is written once, in a loop over the two edges:
// the user's statements appear once as they are, and once more as the
// interior (the body without its boundary test).
func splitLoops(b *gobody, sp *ir.Split, whole []ast.Stmt, rows *ir.Rows, points func(lo, hi string, list []ast.Stmt, rs *ir.Rows)) {
	w := b.w
	bounds := func(list []ir.Bound) string {
		var out []string
		for _, e := range list {
			switch {
			case e.E == nil:
				out = append(out, "1")
			case e.PlusOne:
				out = append(out, b.expr(e.E)+" + 1")
			default:
				out = append(out, b.expr(e.E))
			}
		}
		return strings.Join(out, ", ")
	}
	lo, hi := "gomptLo0", "gomptHi0"
	if len(sp.Lo) > 0 {
		lo = "min(max(gomptLo0, " + bounds(sp.Lo) + "), gomptHi0)"
	}
	if len(sp.Hi) > 0 {
		hi = "max(gomptIn0, min(gomptHi0, " + bounds(sp.Hi) + "))"
	} else {
		hi = "max(gomptIn0, gomptHi0)"
	}
	pos := srcPos(b.g, sp.Test)
	w.p("// The interior [gomptIn0, gomptIn1), where the boundary test is false.")
	w.p("gomptIn0, gomptIn1 := gomptLo0, gomptLo0")
	if len(sp.Rows) > 0 {
		var rows []string
		for _, r := range sp.Rows {
			rows = append(rows, b.expr(r))
		}
		w.p("if !(%s) { %s%s", strings.Join(rows, " || "), posMark, pos)
	} else {
		w.p("{")
	}
	w.p("gomptIn0 = %s %s%s", lo, posMark, pos)
	w.p("gomptIn1 = %s %s%s", hi, posMark, pos)
	w.p("}")
	w.p("for gomptPart := range 3 {")
	w.p("if gomptPart == 1 {")
	points("gomptIn0", "gomptIn1", sp.Interior, sp.InRows)
	w.p("continue")
	w.p("}")
	w.p("// An edge: [gomptLo0, gomptIn0), then [gomptIn1, gomptHi0).")
	w.p("gomptFrom, gomptTo := gomptLo0, gomptIn0")
	w.p("if gomptPart == 2 {")
	w.p("gomptFrom, gomptTo = gomptIn1, gomptHi0")
	w.p("}")
	points("gomptFrom", "gomptTo", whole, rows)
	w.p("}")
}
