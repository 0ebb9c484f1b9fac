package emitc

import (
	"fmt"
	"go/ast"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// A wide body (plan.Wide) runs k.Wide neighbouring points of a map
// kernel in one work-item of a CPU device: gompt_wide_K(first, ...) takes
// the first point's index where the body takes the point's, and writes
// the statements that do not depend on the point once (the loops the
// points share), and each leaf (ir.Lockstep.Leaf) once per point, in the
// points' order, each point with locals of its own (s, s_2, s_3, s_4).
// The CPU compiler vectorizes the points' copies of a statement together.

// wideFirst is the name of a wide body's first parameter.
const wideFirst = "gompt_x0"

// wideLanes is a wide body's state: each point's names of the varying
// locals declared so far, and of the point's index.
type wideLanes struct {
	ls     *ir.Lockstep
	names  []map[*types.Var]string
	inLeaf bool // writing a leaf: its statements are the point's
}

func wideName(k *ir.Kernel) string { return "gompt_wide_" + k.Name }

// wideBody returns k's wide body, as a C function.
func wideBody(g *ir.Program, k *ir.Kernel, pre *prelude, file *cfile) string {
	w := &wideLanes{ls: k.Lanes, names: make([]map[*types.Var]string, k.Wide)}
	for i := range w.names {
		w.names[i] = map[*types.Var]string{}
	}
	c := &cfunc{g: g, f: k.Fn, pre: pre, file: file, wide: w}
	out := c.emit()
	if c.marks > 0 {
		panic(fmt.Sprintf("gompt-kernels: the wide body of %s makes a check, which plan.Wide excludes", k.Name))
	}
	return out
}

// wideIndexes declares each point's index: the first point's, plus its
// place among the points.
func (c *cfunc) wideIndexes() {
	ix := c.f.Kernel.Index[0]
	for l, names := range c.wide.names {
		name := ir.CName(ix.Name, c.used)
		names[ix.Obj] = name
		if l == 0 {
			c.line("long %s = %s;", name, wideFirst)
		} else {
			c.line("long %s = %s + %d;", name, wideFirst, l)
		}
	}
}

// wideLeaf writes leaf s once per point, each with the point's names.
func (c *cfunc) wideLeaf(s ast.Stmt) {
	for _, names := range c.wide.names {
		for v, name := range names {
			c.names[v] = name
		}
		c.wide.inLeaf = true
		c.stmt(s, "")
		c.wide.inLeaf = false
		for v := range c.wide.ls.Varying {
			if name, ok := c.names[v]; ok {
				names[v] = name
			}
		}
	}
}
