package main

import (
	"go/ast"
	"go/types"
)

// reslicedAtPoint returns the buffers that a Go image running k's points
// in loops over dimension 0 (not in lanes, nor a reduction's or a team's
// image) reslices to the end of its range, gomptHi0, and reads and writes
// as slices: those of declared length dimension 0's extent (so the
// reslice is in range) whose every use is an element at the point's own
// dimension-0 index (so no element past gomptHi0, and no len, is asked
// for). Go's prove pass then drops the bounds test of x in [gomptLo0,
// gomptHi0), as it would in the Go function's loop, with no unsafe (saxpy,
// vecadd, fill and copy32 went from unsafe pointer arithmetic to slices).
func (g *gen) reslicedAtPoint(k *kernel) map[*param]bool {
	x := k.index[0]
	if k.reduce != "" || k.team > 0 || len(k.reduceArrays) > 0 || k.assigned[x.obj] {
		return nil
	}
	info := g.p.info
	atPoint := map[*types.Var]int{} // uses of each variable as v[x]
	ast.Inspect(k.decl.Body, func(n ast.Node) bool {
		ix, ok := n.(*ast.IndexExpr)
		if !ok {
			return true
		}
		id, ok := ast.Unparen(ix.X).(*ast.Ident)
		at, ok2 := ast.Unparen(ix.Index).(*ast.Ident)
		if ok && ok2 && info.Uses[at] == x.obj {
			if v, isVar := info.Uses[id].(*types.Var); isVar {
				atPoint[v]++
			}
		}
		return true
	})
	uses := map[*types.Var]int{}
	for id, obj := range info.Uses {
		if v, ok := obj.(*types.Var); ok && id.Pos() >= k.decl.Body.Pos() && id.Pos() < k.decl.Body.End() {
			uses[v]++
		}
	}
	var r map[*param]bool
	for _, p := range k.args() {
		if !p.slice || atPoint[p.obj] == 0 || atPoint[p.obj] != uses[p.obj] {
			continue
		}
		if terms, ok := k.lens[p].product(); !ok || len(terms) != 1 || terms[0] != k.dims[0].name {
			continue
		}
		if r == nil {
			r = map[*param]bool{}
		}
		r[p] = true
	}
	return r
}
