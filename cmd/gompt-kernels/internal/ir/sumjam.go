package ir

import (
	"go/ast"
	"go/types"
)

// SumJam is a counted loop of a point's Go image (for Ctr := ...; Ctr <
// Bound; Ctr++) whose turns each define locals (Head), update them in an
// inner counted loop that is the same in every turn (Inner), and then use
// them (Tail), as 2mm's row does:
//
//	for j := 0; j < nj; j++ {
//		var s float64
//		for k := 0; k < nk; k++ {
//			s += alpha * A[i*nk+k] * B[k*nj+j]
//		}
//		tmp[i*nj+j] = s
//	}
//
// The image runs Jam turns together, where every buffer Written (by the
// tails) is apart from every buffer of Reads (by the heads and the inner
// loop) at run time, but those of Own, which the heads and tails reach
// only at the turn's own element (2mm's D[i*nl+j]), from themselves: the turns' heads, one inner loop whose every turn
// runs each outer turn's body in order, then the turns' tails in order.
// Each turn's locals (Locals) have names of their own. Else the loop as
// written.
type SumJam struct {
	Ctr     *types.Var
	Bound   ast.Expr
	Head    []ast.Stmt
	Inner   *ast.ForStmt
	Tail    []ast.Stmt
	Locals  []*types.Var // every local the loop's body defines
	Written []*Param
	Reads   []*Param
	Own     []*Param // of Written and Reads: each turn's head and tail reach its own element
	// Checked: a tail may fail (an element not proven in range, an
	// integer division or shift). The OpenCL C then runs the loop as
	// written (its checks stop the work-item between statements, in
	// order); the Go image jams it (its tails panic in order).
	Checked bool
}
