package ir

import "go/ast"

// Split is the plan of a Go image that splits dimension 0 for a body that
// starts by testing whether the point is on the boundary of the space (a
// stencil's edges): for the points whose dimension-0 index lies in
// [max(Lo...), min(Hi...)) on a row where none of Rows holds, the test
// is known false, and the image runs the body without it (Interior)
// there; elsewhere the whole body.
type Split struct {
	Lo, Hi   []Bound
	Rows     []ast.Expr // the tests that do not depend on dimension 0
	Interior []ast.Stmt
	Test     *ast.IfStmt // the boundary test: computing the ends may fault (nx/r) there
	InRows   *Rows       // the rows of the interior's buffers (plan/rows.go)
}

// Bound is one end of a split's interior: E, plus one where PlusOne; the
// constant 1 where E is nil.
type Bound struct {
	E       ast.Expr
	PlusOne bool
}
