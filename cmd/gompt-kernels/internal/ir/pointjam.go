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
type PointJam struct {
	Ctr     *types.Var
	Bound   ast.Expr
	Defs    []*ast.AssignStmt
	Locals  []*types.Var // what Defs define, in order
	Range   *ast.RangeStmt
	Update  *ast.AssignStmt
	Written *Param
	Reads   []*Param
}
