package ir

import (
	"go/ast"
	"go/types"
)

// Views and range over slices.
//
// A view is a local slice variable declared from a slice expression of a
// slice parameter or of another view, once, in a statement of its own:
//
//	row := A[i*n : (i+1)*n]   // or var row = A[...]; A[lo:], A[:hi], A[lo:hi:max]
//	for j, a := range row { s += a * x[j] }
//
// It is Go's slice: the expression checks its bounds as Go does (against
// the parent's capacity, a buffer's being its length on a device) and
// fails with Go's "slice bounds out of range" where they are not; an
// index of the view is checked against the view's length (not the
// buffer's), len(v) is its length. A kernel may index a view, range over
// it, take its len, slice it again and pass it to a //gompt:func helper
// that takes a slice. It may not assign to it after its declaration, use
// it as a value otherwise (w := v, v == nil), or let it leave the body:
// a view is an offset and a length into its buffer, not memory.
//
// range over a slice (a slice parameter, a view, a slice expression) or
// a team array has Go's semantics: the length is taken once, the value
// variable is a copy of the element read at the start of each
// iteration, and the variables are each iteration's own (Go 1.22).
//
// The checker records each view (fn.views) with the parameter it views:
// reads and writes through it are the parameter's, for the maps the
// launcher makes. The prover knows a view's length as hi-lo where both
// are polynomials (in a team kernel, whose threads go on after a failed
// check, only as the view's own length), and a range's index as in
// [0, len). The C keeps a view as a pointer into the buffer, its length
// and its capacity (emitc/view.go); the Go image is Go's own slice.

// View is one view of a function.
type View struct {
	Obj    *types.Var
	Base   *Param // the slice parameter it views
	Parent *View  // the view it slices, nil when it slices base
	Expr   *ast.SliceExpr
}

// SliceOf is the slice parameter or view e names, if it names one.
func (f *Fn) SliceOf(info *types.Info, e ast.Expr) (*Param, *View) {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil, nil
	}
	v, _ := info.Uses[id].(*types.Var)
	if v == nil {
		return nil, nil
	}
	if w := f.Views[v]; w != nil {
		return w.Base, w
	}
	if p := f.ByObj[v]; p != nil && p.Slice {
		return p, nil
	}
	return nil, nil
}

// IsView reports whether v is one of f's views.
func (f *Fn) IsView(v *types.Var) bool { return f.Views[v] != nil }

// ViewHint says what a kernel may do with a view.
const ViewHint = "a view (v := buf[lo:hi]) is indexed, ranged over, sliced, passed to a //gompt:func helper or given to len, and declared once"

func IsBlank(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && id.Name == "_"
}

// WritesTeamArray reports whether n assigns an element of team array v.
func WritesTeamArray(info *types.Info, n ast.Node, v *types.Var) bool {
	found := false
	is := func(e ast.Expr) {
		if ix, ok := ast.Unparen(e).(*ast.IndexExpr); ok {
			if id, ok := ast.Unparen(ix.X).(*ast.Ident); ok && info.Uses[id] == v {
				found = true
			}
		}
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for _, l := range s.Lhs {
				is(l)
			}
		case *ast.IncDecStmt:
			is(s.X)
		}
		return !found
	})
	return found
}

// UsesSlices reports whether f declares a view or ranges over a slice or
// an array: the lockstep Go image, whose varying locals are arrays of
// scalars, does not take them.
func UsesSlices(info *types.Info, f *Fn) bool {
	if len(f.Views) > 0 {
		return true
	}
	found := false
	ast.Inspect(f.Decl.Body, func(n ast.Node) bool {
		if r, ok := n.(*ast.RangeStmt); ok {
			if _, isInt := ScalarOf(info.TypeOf(r.X)); !isInt {
				found = true
			}
		}
		return !found
	})
	return found
}

// SliceParamArg is the slice parameter of f that helper argument a (a
// slice parameter or a view) reaches.
func (g *Program) SliceParamArg(f *Fn, a ast.Expr) *Param {
	p, _ := f.SliceOf(g.P.Info, a)
	return p
}
