package ir

import "go/ast"

// Split is the plan of a Go image that splits dimension 0 for a body that
// starts by testing whether the point is on the boundary of the space (a
// stencil's edges): for the points whose dimension-0 index lies in
// [max(Lo...), min(Hi...)) on a row where none of Rows holds, the test
// is known false, and the image runs the body without it (Interior)
// there; elsewhere the test is known true, and the image runs the body
// with its then branch in its place (Edge). The test has no effect and
// cannot fail (plan.Split), so leaving it out changes nothing.
type Split struct {
	Lo, Hi   []Bound
	Rows     []ast.Expr // the tests that do not depend on dimension 0
	Interior []ast.Stmt
	Edge     []ast.Stmt
	Test     *ast.IfStmt // the boundary test, for its position
	InRows   *Rows       // the rows of the interior's buffers (plan/rows.go)
	EdgeRows *Rows       // the rows of the edge's buffers
}

// Bound is one end of a split's interior: E, or the least int above E
// where PlusOne (kernelrt.Above: E+1 would wrap at the largest int); the
// constant 1 where E is nil.
type Bound struct {
	E       ast.Expr
	PlusOne bool
}
