package plan

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// unknownTrips is the turns Work counts for a loop whose count it cannot
// write from the parameters (a CSR row's nonzeros, a loop until a value
// converges): a loop at all makes a point heavier than a statement.
const unknownTrips = 16

// Work plans k's Work (device.Kernel.Work): about how many times one
// point's loops run, over the integer parameters, for a runtime that
// weighs points to choose how many teams to run (nil for a point without
// loops, a team kernel or a reduction, whose launchers choose their
// teams). A loop counts its turns times one plus its body's work; the
// branches of an if both count. A bound that depends on the point
// (j <= i, a triangle) counts the point's extent in its place, one of an
// outer loop's variable that loop's end; a count it cannot write at all
// counts unknownTrips.
func Work(g *ir.Program, k *ir.Kernel) {
	if k.Team > 0 || k.Reduce != "" {
		return
	}
	w := &worker{pr: NewProver(g, k), g: g, k: k}
	total := w.list(k.Decl.Body.List)
	if total.overflowed() {
		return // past an int64: unknown, as no Work
	}
	if e := lenExprOf(total); len(e) > 0 && !e[0].Sub { // no loop, or a count below one
		k.Work = e
	}
}

// lenExprOf writes p in Len's form: its positive products first, then
// those subtracted (each coefficient a term of its own where it is not
// 1), its variables by their parameters' names; nil for the zero poly.
func lenExprOf(p poly) ir.LenExpr {
	var pos, neg []ir.LenProd
	for _, m := range sortedMonos(p) {
		c := p[m]
		if c == 0 {
			continue
		}
		lp := ir.LenProd{Sub: c < 0}
		if c < 0 {
			c = -c
		}
		if c != 1 || m == "" {
			lp.Terms = append(lp.Terms, strconv.FormatInt(c, 10))
		}
		for _, v := range splitMono(m) {
			lp.Terms = append(lp.Terms, strings.TrimPrefix(v, "p:"))
		}
		if lp.Sub {
			neg = append(neg, lp)
		} else {
			pos = append(pos, lp)
		}
	}
	return append(pos, neg...)
}

type worker struct {
	pr *prover
	g  *ir.Program
	k  *ir.Kernel
}

// list is the work of the statements of list.
func (w *worker) list(list []ast.Stmt) poly {
	total := poly{}
	for _, s := range list {
		total = total.Add(w.stmt(s), 1)
	}
	return total
}

func (w *worker) stmt(s ast.Stmt) poly {
	switch s := s.(type) {
	case *ast.ForStmt:
		return w.trips(w.forTrips(s)).mul(ConstPoly(1).Add(w.list(s.Body.List), 1))
	case *ast.RangeStmt:
		var trips poly
		if n, ok := w.pr.Poly(s.X); ok {
			trips = n
		} else if n, ok := w.pr.rangeBound(s); ok {
			trips = n
		}
		return w.trips(trips).mul(ConstPoly(1).Add(w.list(s.Body.List), 1))
	case *ast.IfStmt:
		work := w.list(s.Body.List)
		if s.Else != nil {
			work = work.Add(w.stmt(s.Else), 1)
		}
		return work
	case *ast.BlockStmt:
		return w.list(s.List)
	case *ast.LabeledStmt:
		return w.stmt(s.Stmt)
	case *ast.SwitchStmt:
		work := poly{}
		for _, cc := range s.Body.List {
			work = work.Add(w.list(cc.(*ast.CaseClause).Body), 1)
		}
		return work
	}
	return poly{}
}

// forTrips is a counted loop's number of turns (for v := A; v < B; v++,
// or v <= B), nil where it is not one.
func (w *worker) forTrips(s *ast.ForStmt) poly {
	info := w.g.P.Info
	init, ok := s.Init.(*ast.AssignStmt)
	if !ok || init.Tok != token.DEFINE || len(init.Lhs) != 1 || len(init.Rhs) != 1 {
		return nil
	}
	v, _ := info.Defs[init.Lhs[0].(*ast.Ident)].(*types.Var)
	cond, ok := s.Cond.(*ast.BinaryExpr)
	if v == nil || !ok || (cond.Op != token.LSS && cond.Op != token.LEQ) {
		return nil
	}
	if id, ok := ast.Unparen(cond.X).(*ast.Ident); !ok || info.Uses[id] != v {
		return nil
	}
	post, ok := s.Post.(*ast.IncDecStmt)
	if !ok || post.Tok != token.INC {
		return nil
	}
	if id, ok := post.X.(*ast.Ident); !ok || info.Uses[id] != v {
		return nil
	}
	lo, ok1 := w.pr.Poly(init.Rhs[0])
	hi, ok2 := w.pr.Poly(cond.Y)
	if !ok1 || !ok2 {
		return nil
	}
	n := hi.Add(lo, -1)
	if cond.Op == token.LEQ {
		n = n.Add(ConstPoly(1), 1)
	}
	return n
}

// trips writes n over the parameters: a point's index becomes its
// dimension's extent, an outer loop's variable that loop's end; nil, or a
// term of anything else, is unknownTrips.
func (w *worker) trips(n poly) poly {
	for range 8 { // loop variables bounded by loop variables, a few deep
		if n == nil {
			break
		}
		next, changed := poly{}, false
		for m, c := range n {
			term := ConstPoly(c)
			for _, v := range splitMono(m) {
				r := VarPoly(v)
				switch {
				case w.isIndex(v) != nil:
					r, changed = VarPoly("p:"+w.isIndex(v).Name), true
				case strings.HasPrefix(v, "l:"):
					if b, ok := w.pr.ranges[v]; ok && b.hi != nil {
						r, changed = b.hi, true
					} else {
						return ConstPoly(unknownTrips)
					}
				case !w.isParam(v):
					return ConstPoly(unknownTrips)
				}
				term = term.mul(r)
			}
			next = next.Add(term, 1)
		}
		n = next
		if !changed {
			return n
		}
	}
	return ConstPoly(unknownTrips)
}

// isIndex is the extent of the point's index named v in polys, nil where v
// is not one.
func (w *worker) isIndex(v string) *ir.Param {
	for i, ix := range w.k.Index {
		if v == "p:"+ix.Name {
			return w.k.Dims[i]
		}
	}
	return nil
}

// isParam reports whether v names an integer parameter of the device
// kernel (not an index) in polys.
func (w *worker) isParam(v string) bool {
	for _, p := range w.k.Args() {
		if v == "p:"+p.Name && !p.Slice {
			return true
		}
	}
	return false
}

func splitMono(m string) []string {
	if m == "" {
		return nil
	}
	return strings.Split(m, "*")
}

func sortedMonos(p poly) []string {
	ms := make([]string, 0, len(p))
	for m := range p {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	return ms
}
