package emitc

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// sumJam writes loop s as plan.SumJams planned it (ir.SumJam), as the Go
// image does: where the buffers its tails write are apart from those its
// heads and inner loop read, ir.Jam turns at a time (each turn's locals
// under C names of their own, its counter ctr + t), then the turns left
// one at a time, all of them where the buffers overlap. It writes
// nothing and reports false for a loop whose tails may fail (sj.Checked:
// its checks stop the work-item in the order of the statements, which
// the jam changes), in a wide or flat body. The jammed loops test no stop
// flag: nothing in them checks, and a check before them has returned.
func (c *cfunc) sumJam(s *ast.ForStmt, sj *ir.SumJam, label string) bool {
	if sj.Checked || c.wide != nil || c.flat {
		return false
	}
	c.line("{")
	c.depth++
	c.stmt(s.Init, "")
	var apart []string
	for _, w := range sj.Written {
		for _, r := range sj.Reads {
			if r != w { // each turn reaches its own element of one of Own
				apart = append(apart, c.apart(w, r))
			}
		}
	}
	cond := "1"
	if len(apart) > 0 {
		cond = strings.Join(apart, " && ")
	}
	ctr := c.names[sj.Ctr]
	bound := c.expr(sj.Bound)
	c.line("if (%s) {", cond)
	c.depth++
	c.line("for (;;) {")
	c.depth++
	// bound-ctr, where ctr < bound, wraps only past the largest long: the
	// turns then run one at a time.
	left := fmt.Sprintf("(long)((ulong)%s - (ulong)%s)", bound, ctr)
	c.line("if (!(%s && %s)) break;", cmp64(ctr, token.LSS, bound), cmp64(left, token.GEQ, fmt.Sprintf("%dL", ir.Jam)))
	turns := make([]map[*types.Var]string, ir.Jam)
	for t := range turns {
		turns[t] = map[*types.Var]string{}
	}
	run := func(list []ast.Stmt) {
		for t := range ir.Jam {
			for v, n := range turns[t] {
				c.names[v] = n
			}
			c.names[sj.Ctr] = ctr
			if t > 0 {
				c.names[sj.Ctr] = fmt.Sprintf("((long)((ulong)%s + (ulong)%dL))", ctr, t)
			}
			c.stmts(list)
			for _, v := range sj.Locals {
				if n, ok := c.names[v]; ok {
					turns[t][v] = n
				}
			}
		}
		c.names[sj.Ctr] = ctr
	}
	run(sj.Head)
	in := sj.Inner
	c.line("{")
	c.depth++
	c.stmt(in.Init, "")
	c.line("for (;;) {")
	c.depth++
	c.line("if (!%s) break;", c.expr(in.Cond))
	c.line("{")
	c.depth++
	run(in.Body.List)
	c.depth--
	c.line("}")
	c.stmt(in.Post, "")
	c.depth--
	c.line("}")
	c.depth--
	c.line("}")
	run(sj.Tail)
	c.line("%s = (long)((ulong)%s + (ulong)%dL);", ctr, ctr, ir.Jam)
	c.depth--
	c.line("}")
	c.depth--
	c.line("}")
	// The turns left, one at a time, from where the jammed turns stopped.
	c.loop(s, label)
	c.depth--
	c.line("}")
	return true
}

// apart is the C test that buffers w and r share no byte (their
// declared lengths from their pointers).
func (c *cfunc) apart(w, r *ir.Param) string {
	end := func(p *ir.Param) string {
		n := c.names[p.Obj]
		return fmt.Sprintf("(ulong)%s + (ulong)%s * sizeof(*%s)", n, c.lens[p], n)
	}
	return fmt.Sprintf("(%s <= (ulong)%s || %s <= (ulong)%s)", end(w), c.names[r.Obj], end(r), c.names[w.Obj])
}
