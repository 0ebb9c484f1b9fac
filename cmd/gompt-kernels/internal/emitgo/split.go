package emitgo

import (
	"go/ast"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// splitLoops writes dimension 0's loops split at the ends of sp's
// interior (plan.Split), its expressions written by b: [lo, a) and
// [b, hi) run the edge (the body where its boundary test is true), [a, b)
// the interior (where it is false), in that order, each through its rows.
// The edge is written once, in a loop that runs it twice (once per edge)
// with the interior between: each of the user's statements appears once,
// but for those before the boundary test (jacobi's i := y*nx + x) and
// after a then branch that does not return, which are in both. The loop
// costs nothing: jacobi_512's image on one core (kernels_test, 8 runs
// interleaved, low ends, 2026-12-06) took 203.4 us, against 211.0 us for
// 069ff17's hand-written one and 216.4 us for a loop over three parts
// with a branch to the interior.
func splitLoops(b *gobody, sp *ir.Split, points func(lo, hi string, list []ast.Stmt, rs *ir.Rows)) {
	w := b.w
	bounds := func(list []ir.Bound) string {
		var out []string
		for _, e := range list {
			switch {
			case e.E == nil:
				out = append(out, "1")
			case e.PlusOne:
				out = append(out, "gomptrt.Above("+b.expr(e.E)+")")
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
	w.p("// The left edge, the interior, the right edge; the boundary test is true at the edges.")
	w.p("gomptFrom, gomptTo := gomptLo0, gomptIn0")
	w.p("for gomptRight := false; ; gomptRight = true {")
	points("gomptFrom", "gomptTo", sp.Edge, sp.EdgeRows)
	w.p("if gomptRight {")
	w.p("break")
	w.p("}")
	points("gomptIn0", "gomptIn1", sp.Interior, sp.InRows)
	w.p("gomptFrom, gomptTo = gomptIn1, gomptHi0")
	w.p("}")
}
