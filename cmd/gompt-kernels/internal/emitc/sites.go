package emitc

import (
	"fmt"
	"go/ast"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// Placeholders in a function's C text, replaced once the file's checks
// are known (see finishFile and cfunc.emit).
const (
	faultParams     = "/*GOMPT_FAULT_PARAMS*/"
	faultParamsNext = ", /*GOMPT_FAULT_PARAMS*/"
	faultArgs       = "/*GOMPT_FAULT_ARGS*/"
	faultArgsNext   = ", /*GOMPT_FAULT_ARGS*/"
	stopMark        = "/*GOMPT_STOP*/"
)

// finishFile replaces the fault placeholders of a kernel file's functions
// and calls: the fault record and the stop flag where the kernel checks,
// nothing where it does not.
func finishFile(code string, checks bool) string {
	params, paramsNext, args, argsNext := "", "", "", ""
	if checks {
		params = "__global long *gompt_fault, int *gompt_stop"
		paramsNext, args = ", "+params, "gompt_fault, gompt_stop"
		argsNext = ", " + args
	}
	return strings.NewReplacer(faultParamsNext, paramsNext, faultParams, params, faultArgsNext, argsNext, faultArgs, args).Replace(code)
}

// checking reports whether the file's kernel checks its indices and
// divisors (not check=off).
func (c *cfunc) checking() bool { return !c.file.k.Nocheck }

// site returns the C arguments that pass the check of kind at node to a
// checking helper: the fault record, the stop flag and the check's number
// in the kernel's plan (plan.Sites). A check the plan lacks is the
// generator's own error.
func (c *cfunc) site(kind string, node ast.Node) string {
	n, ok := c.file.k.SiteOf[ir.SiteKey{Kind: kind, Node: node}]
	if !ok {
		panic(fmt.Sprintf("gompt-kernels: the C of %s checks %s at %s, which its plan has no site for", c.file.k.Name, kind, c.g.Rel(node.Pos())))
	}
	c.file.used[n] = true
	c.marks++
	return "gompt_fault, gompt_stop, " + ir.Itoa(n) + "L"
}

// proven reports whether the index of ix needs no check: the prover
// proved it in range, or the kernel has check=off.
func (c *cfunc) proven(ix *ast.IndexExpr) bool {
	return !c.checking() || c.f.Kernel != nil && c.f.Kernel.Proven[ix]
}

// checkedAt writes a block that evaluates ix's index once, into the
// temporary it passes to body, and runs body where the index is below
// length n; an index outside fails ix's check. A proven index is not
// tested, unless always (team arrays and the private copies of array
// reductions are tested even where proven: see teamStore).
func (c *cfunc) checkedAt(ix *ast.IndexExpr, n string, always bool, body func(idx string)) {
	idx := c.newTmp()
	c.line("{")
	c.depth++
	c.line("long %s = %s;", idx, c.index(ix.Index))
	c.checkedIdx(ix, idx, n, always, body)
	c.depth--
	c.line("}")
}

// checkedIdx is checkedAt for an index already evaluated into idx.
func (c *cfunc) checkedIdx(ix *ast.IndexExpr, idx, n string, always bool, body func(idx string)) {
	if c.proven(ix) && !always {
		body(idx)
	} else {
		c.line("if ((ulong)%s < (ulong)%s) {", idx, n)
		c.depth++
		body(idx)
		c.depth--
		if c.proven(ix) {
			c.line("}")
		} else {
			c.line("} else {")
			c.line("  %s(%s, %s, %s);", c.pre.fail(c.file.k), c.site(ir.SiteIndex, ix), idx, n)
			c.line("}")
		}
	}
}
