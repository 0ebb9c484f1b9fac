package emitgo

import "strings"

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
	// The rows a statement reaches first, on one line at its position.
	var names, rows []string
	for i, r := range b.rows.List {
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
		rows = append(rows, r.P.Name+"["+off+":][:gomptW]")
		if i+1 == len(b.rows.List) || b.rows.List[i+1].Stmt != r.Stmt {
			w.p("%s := %s %s%s", strings.Join(names, ", "), strings.Join(rows, ", "), posMark, srcPos(b.g, r.Stmt))
			names, rows = nil, nil
		}
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
