package plan

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// Needs records k's needs in k.Needs, in the order fp64, int64
// atomics, local memory, team size; only those it has.
func Needs(g *ir.Program, k *ir.Kernel) {
	k.Needs = nil
	if pos := firstFloat64(g, k); pos.IsValid() {
		k.Needs = append(k.Needs, ir.Need{Kind: ir.NeedFP64, Use: "float64", Pos: g.Line(pos)})
	}
	if use, pos := firstAtomic64(g, k); pos.IsValid() {
		k.Needs = append(k.Needs, ir.Need{Kind: ir.NeedInt64Atomics, Use: use, Pos: g.Line(pos)})
	}
	if n, use, pos := localMem(g, k); n > 0 {
		k.Needs = append(k.Needs, ir.Need{Kind: ir.NeedLocalMem, Amount: n, Use: use, Pos: g.Line(pos)})
	}
	if k.Team > 0 {
		k.Needs = append(k.Needs, ir.Need{Kind: ir.NeedTeamSize, Amount: int64(k.Team), Use: fmt.Sprintf("teams of %d threads (team=%d)", k.Team, k.Team), Pos: g.Line(k.DirPos)})
	}
}

// deviceWalk visits a kernel's device code in source order: each
// function's parameters and result, then its body, and at a call of a
// helper, after the call's arguments, the helper (once: a second call of
// it finds nothing new). visit returns whether it found what the walk
// looks for (found, which ends the walk) and whether to look inside n.
type deviceWalk struct {
	g     *ir.Program
	visit func(f *ir.Fn, n ast.Node) (found, descend bool)
	seen  map[*ir.Fn]bool
}

func (w *deviceWalk) fn(f *ir.Fn) bool {
	if w.seen[f] {
		return false
	}
	w.seen[f] = true
	return w.node(f, f.Decl.Type) || w.node(f, f.Decl.Body)
}

func (w *deviceWalk) node(f *ir.Fn, root ast.Node) bool {
	found := false
	ast.Inspect(root, func(n ast.Node) bool {
		if found || n == nil {
			return false
		}
		hit, descend := w.visit(f, n)
		if hit {
			found = true
			return false
		}
		if call, ok := n.(*ast.CallExpr); ok && descend {
			if callee := helperCalled(w.g, call); callee != nil {
				for _, a := range call.Args {
					if w.node(f, a) {
						found = true
						return false
					}
				}
				found = w.fn(callee)
				return false
			}
		}
		return descend
	})
	return found
}

// helperCalled is the //gompt:func helper call calls, if it calls one.
func helperCalled(g *ir.Program, call *ast.CallExpr) *ir.Fn {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok {
		return nil
	}
	obj, _ := g.P.Info.Uses[id].(*types.Func)
	if obj == nil {
		return nil
	}
	return g.Funcs[obj]
}

// isFloat64 reports whether t is float64, or a slice or array of it.
func isFloat64(t types.Type) bool {
	switch u := t.(type) {
	case *types.Slice:
		t = u.Elem()
	case *types.Array:
		t = u.Elem()
	}
	b, ok := t.(*types.Basic)
	return ok && b.Kind() == types.Float64
}

// firstFloat64 is the position of the first use of float64 in k's device
// code (token.NoPos for none): a parameter or result of float64 (or a
// slice of it), a local declared float64 (a team array of them), an
// expression of type float64 that is not a constant (a constant is
// folded into the expression it is part of, which has its own type), a
// math function taking or returning float64 (math.Float64bits(1.5)
// computes with a double too).
func firstFloat64(g *ir.Program, k *ir.Kernel) token.Pos {
	info := g.P.Info
	var at token.Pos
	w := &deviceWalk{g: g, seen: map[*ir.Fn]bool{}}
	w.visit = func(f *ir.Fn, n ast.Node) (bool, bool) {
		switch n := n.(type) {
		case *ast.FuncType:
			for _, fl := range []*ast.FieldList{n.Params, n.Results} {
				if fl == nil {
					continue
				}
				for _, field := range fl.List {
					if isFloat64(info.TypeOf(field.Type)) {
						at = field.Pos()
						return true, false
					}
				}
			}
			return false, false
		case *ast.Ident:
			if v, ok := info.Defs[n].(*types.Var); ok && isFloat64(v.Type()) {
				at = n.Pos()
				return true, false
			}
		case *ast.CallExpr:
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					if pn, ok := info.Uses[id].(*types.PkgName); ok && pn.Imported().Path() == "math" {
						mf := ir.MathFuncs[sel.Sel.Name]
						if strings.Contains(mf.Args, "f") && mf.Args != "f32" || mf.Result == "f" {
							at = n.Pos()
							return true, false
						}
					}
				}
			}
		}
		if e, ok := n.(ast.Expr); ok {
			if tv, ok := info.Types[e]; ok && !tv.IsType() && tv.Value == nil && tv.Type != nil && isFloat64(tv.Type) {
				at = e.Pos()
				return true, false
			}
		}
		return false, true
	}
	w.fn(k.Fn)
	return at
}

// firstAtomic64 is the first use of 64-bit atomics in k's device code
// (its words for the Need's Use, and its position; token.NoPos for none):
// a call of sync/atomic's Add or CompareAndSwap of Int64 or Uint64, an
// update of an array reduction of 64-bit elements. An array reduction of
// them whose body never updates it still merges its team copies with
// 64-bit atomics: its directive is then the position.
func firstAtomic64(g *ir.Program, k *ir.Kernel) (string, token.Pos) {
	info := g.P.Info
	var use string
	var at token.Pos
	w := &deviceWalk{g: g, seen: map[*ir.Fn]bool{}}
	reduction := func(f *ir.Fn, e ast.Expr) bool {
		if f != k.Fn {
			return false // a helper cannot take a reduction array (checkReduceArrays)
		}
		_, _, p := k.ReduceArrayAt(info, e)
		if p == nil || p.T.Bits() != 64 {
			return false
		}
		use, at = reduceArrayUse(k, p), e.Pos()
		return true
	}
	w.visit = func(f *ir.Fn, n ast.Node) (bool, bool) {
		switch n := n.(type) {
		case *ast.CallExpr:
			if name, ok := ir.AtomicCallee(info, n); ok {
				if op, ok := ir.AtomicOps[name]; ok && op.T.Bits() == 64 && op.Kind != "load" {
					use, at = "atomic."+name, n.Pos()
					return true, false
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == 1 && reduction(f, n.Lhs[0]) {
				return true, false
			}
		case *ast.IncDecStmt:
			if reduction(f, n.X) {
				return true, false
			}
		}
		return false, true
	}
	if w.fn(k.Fn) {
		return use, at
	}
	for _, p := range k.Args() {
		if k.ReduceArrays[p] != "" && p.T.Bits() == 64 {
			return reduceArrayUse(k, p), k.DirPos
		}
	}
	return "", token.NoPos
}

// reduceArrayUse names array reduction p: "an array reduction of int64
// (reduce(s)=+)".
func reduceArrayUse(k *ir.Kernel, p *ir.Param) string {
	return fmt.Sprintf("an array reduction of %s (reduce(%s)=%s)", p.T.GoName(), p.Name, k.ReduceArrays[p])
}

// localMem is the bytes of __local memory k's entry declares, what they
// hold, and where the source asks for them: its team arrays (at least one
// element each; the first one's declaration), its array reductions' team
// copies and a reduction's scratch of one value per thread (the
// directive).
func localMem(g *ir.Program, k *ir.Kernel) (int64, string, token.Pos) {
	var n int64
	var what []string
	at := token.NoPos
	if arrays := ir.SortedTeamArrays(k); len(arrays) > 0 {
		var names []string
		for _, v := range arrays {
			n += int64(max(k.TeamArrays[v], 1)) * int64(ir.TeamElem(v).Bits()/8)
			names = append(names, v.Name())
		}
		what = append(what, ir.Plural(len(names), "team array ", "team arrays ")+strings.Join(names, ", "))
		at = arrays[0].Pos()
	}
	var copies []string
	for _, p := range k.Args() {
		if op := k.ReduceArrays[p]; op != "" {
			n += int64(k.ReduceLen[p]) * int64(p.T.Bits()/8)
			copies = append(copies, fmt.Sprintf("reduce(%s)=%s", p.Name, op))
		}
	}
	if len(copies) > 0 {
		what = append(what, "the team's "+ir.Plural(len(copies), "copy", "copies")+" of "+strings.Join(copies, ", "))
		if !at.IsValid() {
			at = k.DirPos
		}
	}
	if k.Reduce != "" {
		n += ir.MaxThreads * int64(k.Result.Bits()/8)
		what = append(what, fmt.Sprintf("reduce=%s's scratch: %d %s, one per thread", k.Reduce, ir.MaxThreads, k.Result.GoName()))
		if !at.IsValid() {
			at = k.DirPos
		}
	}
	if n == 0 {
		return 0, "", token.NoPos
	}
	return n, fmt.Sprintf("%d bytes of team-local memory (%s)", n, strings.Join(what, "; ")), at
}
