package check

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"go/ast"
)

// checkBarrierCall checks a call of kernelrt.Barrier: only in a team
// kernel's body, as a statement (checkTeams says where).
func (c *checker) checkBarrierCall(e *ast.CallExpr) {
	if c.f.Kernel == nil || c.f.Kernel.Team == 0 {
		c.unsupported(e.Pos(), "kernelrt.Barrier outside a team kernel", "a barrier is in the body of a //gompt:kernel team=N function, not in a helper or a map kernel")
		return
	}
	if len(e.Args) != 0 {
		c.unsupported(e.Pos(), "kernelrt.Barrier with arguments", "")
	}
}

// teamArrayIndex checks an index of a team array (and reports whether ix
// is one).
func (c *checker) teamArrayIndex(ix *ast.IndexExpr) bool {
	if ir.TeamArrayOf(c.info(), c.f, ix.X) == nil {
		return false
	}
	c.index(ix.Index)
	return true
}
