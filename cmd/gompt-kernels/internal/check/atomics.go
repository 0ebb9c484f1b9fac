package check

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"go/ast"
)

// atomicCall checks a call of sync/atomic's name: one of atomicOps, on
// &buf[i]. The buffer is read, and written by Add and CompareAndSwap.
func (c *checker) atomicCall(e *ast.CallExpr, name string) {
	if _, ok := ir.AtomicOps[name]; !ok {
		c.unsupported(e.Pos(), "atomic."+name, ir.AtomicHint)
		return
	}
	ix := ir.AtomicAddr(e.Args[0])
	if ix == nil {
		c.unsupported(e.Args[0].Pos(), "atomic."+name+" of "+ir.ExprString(e.Args[0]), ir.AtomicHint)
		return
	}
	if ir.TeamArrayOf(c.info(), c.f, ix.X) != nil {
		c.unsupported(e.Args[0].Pos(), "atomic."+name+" of "+ir.ExprString(e.Args[0]), "a team array's elements are not atomic; give each thread its own element, and combine them after a kernelrt.Barrier()")
		return
	}
	p := c.buffer(ix)
	if p == nil {
		return
	}
	p.Read = true
	if ir.AtomicOps[name].Kind != "load" {
		p.Written = true
	}
	c.index(ix.Index)
	for _, a := range e.Args[1:] {
		c.expr(a)
	}
	c.f.Atomic = true
}
