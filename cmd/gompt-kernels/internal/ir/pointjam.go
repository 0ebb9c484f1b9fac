package ir

import (
	"go/ast"
	"go/types"
)

// PointJam is a counted loop of a point's Go image (for Ctr := ...; Ctr <
// Bound; Ctr++) whose turns define locals (Defs) and then update each
// element of a view (for j := range c { c[j] op= e }, Range and Update):
// the image runs Jam turns together, each element through its Jam
// updates in order (v := c[j]; v op= e0; ...; c[j] = v), where Written,
// the buffer c views, is apart from every buffer of Reads at run time;
// else the loop as written.
//
// The inner loop may instead be a counted loop over a row of a buffer,
// for j := Lo; j < Hi; j++ (j <= Hi where Incl) { buf[Row + j] op= e }
// (syrk's C[i*n+j] += a * A[j*m+k]; Row nil for buf[j]): the image takes
// the row once, as a slice from Lo's element, where the loop has turns.
type PointJam struct {
	Ctr     *types.Var
	Bound   ast.Expr
	Defs    []*ast.AssignStmt
	Locals  []*types.Var // what Defs define, in order
	Range   *ast.RangeStmt
	Update  *ast.AssignStmt
	Written *Param
	Reads   []*Param

	Loop         *ast.ForStmt   // the inner counted loop, where Range is nil
	Elem         *ast.IndexExpr // its element, buf[Row + j]
	Row, Lo, Hi  ast.Expr
	Incl         bool
	InnerCounter *types.Var // j
	InnerRead    bool       // the update reads j (beyond its element's index)
}
