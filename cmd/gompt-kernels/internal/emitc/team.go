package emitc

import (
	"fmt"
	"go/ast"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// C: the team arrays are the entry's __local arrays, passed to the body.

// teamParams are the body's parameters for the team arrays, in order.
func (c *cfunc) teamParams() []string {
	k := c.f.Kernel
	if k == nil || k.Team == 0 {
		return nil
	}
	var out []string
	for _, v := range ir.SortedTeamArrays(k) {
		name := ir.CName(v.Name(), c.used)
		c.names[v] = name
		out = append(out, "__local "+ir.TeamElem(v).C()+" *"+name)
	}
	return out
}

// teamLoad is element ix of a team array in C, checked against its length
// unless proven in range (outside: the check fails, and the load gives 0,
// as a buffer's).
func (c *cfunc) teamLoad(ix *ast.IndexExpr) (string, bool) {
	v := ir.TeamArrayOf(c.info(), c.f, ix.X)
	if v == nil {
		return "", false
	}
	t := ir.TeamElem(v)
	if c.proven(ix) {
		return c.names[v] + "[" + c.index(ix.Index) + "]", true
	}
	if !c.checking() {
		name := "gompt_lload_" + t.C()
		c.pre.need(name, fmt.Sprintf("%s %s %s(__local %s *a, long n, long i) { return (ulong)i < (ulong)n ? a[i] : (%s)0; }", inl, t.C(), name, t.C(), t.C()))
		return fmt.Sprintf("%s(%s, %dL, %s)", name, c.names[v], c.f.Kernel.TeamArrays[v], c.index(ix.Index)), true
	}
	name := "gompt_lldc_" + t.C()
	c.pre.need(name, fmt.Sprintf("%s %s %s(__local %s *a, long n, long i, __global long *f, int *stop, long site) { if ((ulong)i < (ulong)n) return a[i]; %s(f, stop, site, i, n); return (%s)0; }",
		inl, t.C(), name, t.C(), c.pre.fail(c.file.k), t.C()))
	return fmt.Sprintf("%s(%s, %dL, %s, %s)", name, c.names[v], c.f.Kernel.TeamArrays[v], c.index(ix.Index), c.site(ir.SiteIndex, ix)), true
}

// teamStore stores val() into element ix of a team array (outside its
// length: dropped), with a test of the index even where it is proven.
func (c *cfunc) teamStore(ix *ast.IndexExpr, val func() string) bool {
	v := ir.TeamArrayOf(c.info(), c.f, ix.X)
	if v == nil {
		return false
	}
	// Tested even where proven: POCL ran matmul_tiled 512 in 35 ms so,
	// in 62-65 ms with the proven stores untested. Where not proven, an
	// index outside fails the check.
	c.checkedAt(ix, fmt.Sprintf("%dL", c.f.Kernel.TeamArrays[v]), true, func(idx string) {
		c.line("%s[%s] = %s;", c.names[v], idx, val())
	})
	return true
}

// teamStoreAt is teamStore of v at the C index idx, already evaluated (a
// tuple assignment's target).
func (c *cfunc) teamStoreAt(ix *ast.IndexExpr, idx, v string) bool {
	tv := ir.TeamArrayOf(c.info(), c.f, ix.X)
	if tv == nil {
		return false
	}
	c.checkedIdx(ix, idx, fmt.Sprintf("%dL", c.f.Kernel.TeamArrays[tv]), true, func(idx string) {
		c.line("%s[%s] = %s;", c.names[tv], idx, v)
	})
	return true
}

// teamEntry is a team kernel's entry point: the team arrays in local
// memory, and the work-group's loop over the teams (one team per
// work-group when the launch has as many, as the launcher's).
func teamEntry(g *ir.Program, k *ir.Kernel, pre *prelude) string {
	w := &entryWriter{}
	line := w.line
	// A checked team kernel's stop flag is set, never read: a team's
	// threads all go on to its barriers (see cfunc.emit).
	names := w.begin(k, fmt.Sprintf("__attribute__((reqd_work_group_size(%d, 1, 1))) ", k.Team))
	var locals []string
	for _, v := range ir.SortedTeamArrays(k) {
		n := "gompt_l_" + v.Name()
		line("__local %s %s[%d];", ir.TeamElem(v).C(), n, max(k.TeamArrays[v], 1))
		locals = append(locals, n)
	}
	rest := lengths(k, pre, names, line)
	teams := "(long)" + names[k.Dims[0]]
	line("long gompt_th = (long)get_local_id(0);")
	line("for (long gompt_t = (long)get_group_id(0); gompt_t < %s; gompt_t += (long)get_num_groups(0)) {", teams)
	w.depth++
	args := append([]string{"gompt_t", "gompt_th"}, rest...)
	line("%s(%s%s);", bodyName(k), strings.Join(append(args, locals...), ", "), faultArgsNext)
	line("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")
	w.depth--
	line("}")
	w.depth--
	line("}")
	return w.sb.String()
}
