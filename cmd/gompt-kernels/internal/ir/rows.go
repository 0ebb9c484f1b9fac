package ir

import (
	"go/ast"
	"go/types"
)

// Rows is the plan of a Go image's loop over dimension 0 (a map kernel's
// whole body, or a split's interior) that reaches elements of its buffers
// at the point's dimension-0 index plus an offset the same at every point
// of the loop (jacobi's in[i-nx], with i := y*nx + x), or of a counted
// loop of a point that reaches them at its counter plus an offset the
// same at every turn (PolyBench's jacobi-2d, in[i*n+j-1]): each such buffer's
// row is taken once, as a slice of the loop's width, and the element is
// the row's at the point's place in the loop, as a hand-written stencil
// walks its rows. Go then drops the bounds tests, and the image needs no
// unsafe for them (plan/rows.go says which elements qualify).
type Rows struct {
	Turn  string                    // the image's name of the turn's place in the loop (its rows' index)
	List  []*Row                    // in the order of their first use
	At    map[*ast.IndexExpr]*Row   // the elements reached through a row
	Dead  map[ast.Stmt][]*types.Var // the locals s defines that only the rows' offsets read
	DeadX bool                      // the index itself is read only in the rows' offsets
}

// Row is a buffer's row: its elements from the point's dimension-0 index
// plus Terms, over the loop's points.
type Row struct {
	P     *Param
	Terms []Term
	Name  string   // the row's slice in the image
	Stmt  ast.Stmt // the statement that first reaches it, for its position
}

// Term is a term of a row's offset: E, or minus E where Neg.
type Term struct {
	E   ast.Expr
	Neg bool
}

// Row is the row through which the loop reaches ix, nil for none (or no
// rows).
func (rs *Rows) Row(ix *ast.IndexExpr) *Row {
	if rs == nil {
		return nil
	}
	return rs.At[ix]
}
