package emitgo

import (
	"go/ast"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// atomicCall is a call of sync/atomic's name in the Go image.
func (b *gobody) atomicCall(e *ast.CallExpr, name string) string {
	b.w.imports[ir.AtomicPkg] = "gomptatomic"
	return "gomptatomic." + name + "(" + b.exprList(e.Args) + ")"
}
