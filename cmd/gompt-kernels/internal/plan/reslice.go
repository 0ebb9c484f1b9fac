package plan

import (
	"go/ast"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// Resliced returns the buffers that a Go image running k's points
// in loops over dimension 0 (not in lanes, nor a reduction's or a team's
// image) reslices to the end of its range, gomptHi0, and reads and writes
// as slices: those of declared length dimension 0's extent (so the
// reslice is in range) whose every use is an element at the point's own
// dimension-0 index (so no element past gomptHi0, and no len, is asked
// for). Go's prove pass then drops the bounds test of x in [gomptLo0,
// gomptHi0), as it would in the Go function's loop, with no unsafe (saxpy,
// vecadd, fill and copy32 went from unsafe pointer arithmetic to slices).
func Resliced(g *ir.Program, k *ir.Kernel) map[*ir.Param]bool {
	x := k.Index[0]
	if k.Reduce != "" || k.Team > 0 || len(k.ReduceArrays) > 0 || k.Assigned[x.Obj] {
		return nil
	}
	info := g.P.Info
	atPoint := map[*types.Var]int{} // uses of each variable as v[x]
	ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
		ix, ok := n.(*ast.IndexExpr)
		if !ok {
			return true
		}
		id, ok := ast.Unparen(ix.X).(*ast.Ident)
		at, ok2 := ast.Unparen(ix.Index).(*ast.Ident)
		if ok && ok2 && info.Uses[at] == x.Obj {
			if v, isVar := info.Uses[id].(*types.Var); isVar {
				atPoint[v]++
			}
		}
		return true
	})
	uses := map[*types.Var]int{}
	for id, obj := range info.Uses {
		if v, ok := obj.(*types.Var); ok && id.Pos() >= k.Decl.Body.Pos() && id.Pos() < k.Decl.Body.End() {
			uses[v]++
		}
	}
	var r map[*ir.Param]bool
	for _, p := range k.Args() {
		if !p.Slice || atPoint[p.Obj] == 0 || atPoint[p.Obj] != uses[p.Obj] {
			continue
		}
		if terms, ok := k.Lens[p].Product(); !ok || len(terms) != 1 || terms[0] != k.Dims[0].Name {
			continue
		}
		if r == nil {
			r = map[*ir.Param]bool{}
		}
		r[p] = true
	}
	return r
}
