package emitc

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

func (c *cfunc) isReduceArray(p *ir.Param) bool {
	return c.f.Kernel != nil && c.f.Kernel.ReduceArrays[p] != ""
}

// reduceArrayOf returns the reduction array l indexes, if it is one.
func (c *cfunc) reduceArrayOf(l ast.Expr) (*ast.IndexExpr, *ir.Param) {
	if c.f.Kernel == nil {
		return nil, nil
	}
	ix, _, p := c.f.Kernel.ReduceArrayAt(c.info(), l)
	return ix, p
}

// reduceArrayOpAssign is h[e] += v, h[e]++, h[e] -= v, h[e]-- or h[e] *=
// v on a reduction array (checkReduceArrays allows only its own
// operator's): a subtraction adds -v (Go's wrapping negation; for floats
// x - y is x + (-y) exactly).
func (c *cfunc) reduceArrayOpAssign(l ast.Expr, op token.Token, rhs func() string, r []ast.Expr) bool {
	ix, p := c.reduceArrayOf(l)
	if p == nil {
		return false
	}
	c.reduceArrayUpdate(ix, p, func() string {
		v := rhs()
		if len(r) > 0 {
			v = c.convertTo(r[0], p.T)
		}
		if op != token.SUB {
			return v
		}
		if p.T.IsFloat() {
			return "(-(" + v + "))"
		}
		return c.binop(token.SUB, p.T, "(("+p.T.C()+")0)", v, nil)
	})
	return true
}

// reduceArrayMinMax is h[e] = min(h[e], v, ...) (or max) on a reduction
// array: the other operands' min (max) combined into h[e].
func (c *cfunc) reduceArrayMinMax(s *ast.AssignStmt) bool {
	ix, p := c.reduceArrayOf(s.Lhs[0])
	if p == nil {
		return false
	}
	call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
	if !ok {
		return false
	}
	others := ir.MinMaxOperands(c.info(), call, ix)
	c.reduceArrayUpdate(ix, p, func() string {
		h := c.pre.minmax(p.T, c.f.Kernel.ReduceArrays[p] == "min")
		acc := c.convertTo(others[0], p.T)
		for _, a := range others[1:] {
			acc = h + "(" + acc + ", " + c.convertTo(a, p.T) + ")"
		}
		return acc
	})
	return true
}

// reduceArrayUpdate combines value() into element ix of the team's copy
// of reduction array p with p's operator: atomically in local memory (on
// a CPU device, where one work-item runs the team's points, in place); an
// index outside its length fails the check (unless proven in range), and
// changes nothing.
func (c *cfunc) reduceArrayUpdate(ix *ast.IndexExpr, p *ir.Param, value func() string) {
	op, t := c.f.Kernel.ReduceArrays[p], p.T
	c.checkedAt(ix, c.lens[p], true, func(idx string) {
		v := c.newTmp()
		c.line("%s %s = %s;", t.C(), v, value())
		elem := c.names[p.Obj] + "[" + idx + "]"
		c.b.WriteString("#ifdef " + CPUDefine + "\n")
		c.line("%s = %s;", elem, combineC(op, t, c.pre, elem, v))
		c.b.WriteString("#else\n")
		c.line("%s(&%s, %s);", c.pre.reduceAtomic(op, t, "__local"), elem, v)
		c.b.WriteString("#endif\n")
	})
}

// reduceAtomic returns the helper that combines v into *a with operator
// op, atomically, a in address space space (__local or __global): the
// device's atomic for a 32-bit integer's +, min and max and a 64-bit
// one's +, a compare-and-swap loop on the element's bits otherwise.
func (p *prelude) reduceAtomic(op string, t ir.Scalar, space string) string {
	opName := map[string]string{"+": "add", "*": "mul", "min": "min", "max": "max"}[op]
	name := "gompt_reduce_" + opName + "_" + t.C() + "_" + strings.TrimPrefix(space, "__")
	head := fmt.Sprintf("%s void %s(volatile %s %s *a, %s v) {\n", inl, name, space, t.C(), t.C())
	switch {
	case t.IsInt() && t.Bits() == 32 && op != "*":
		return p.need(name, head+fmt.Sprintf("  atomic_%s(a, v);\n}", opName))
	case t.IsInt() && t.Bits() == 64 && op == "+":
		p.need("gompt_atom64", ir.Atom64)
		return p.need(name, head+"  gompt_atom_add64(a, v);\n}")
	}
	u, cas, from, to := "uint", "atomic_cmpxchg", "(%s)", "(uint)"
	if t.Bits() == 64 {
		u, cas, to = "ulong", "gompt_atom_cas64", "(ulong)"
		p.need("gompt_atom64", ir.Atom64)
	}
	if t.IsFloat() {
		from, to = "as_"+t.C(), "as_"+u
	} else {
		from = fmt.Sprintf(from, t.C())
	}
	body := fmt.Sprintf(`  volatile %[1]s %[2]s *b = (volatile %[1]s %[2]s *)a;
  %[2]s o = *b;
  for (;;) {
    %[2]s n = %[3]s(%[4]s);
    if (n == o) return;
    %[2]s w = %[5]s(b, o, n);
    if (w == o) return;
    o = w;
  }
}`, space, u, to, combineC(op, t, p, from+"(o)", "v"), cas)
	return p.need(name, head+body)
}

// reduceArrayEntry is the entry of a kernel with reduction arrays: each
// work-group zeroes its copies in local memory, runs its points
// grid-stride, and adds its copies into the buffers.
func reduceArrayEntry(g *ir.Program, k *ir.Kernel, pre *prelude) string {
	w := &entryWriter{}
	line := w.line
	names := w.begin(k, "")
	var arrays []*ir.Param
	for _, p := range k.Args() {
		if k.ReduceArrays[p] != "" {
			arrays = append(arrays, p)
			line("__local %s gompt_r_%s[%d];", p.T.C(), names[p], k.ReduceLen[p])
		}
	}
	rest := lengths(k, pre, names, line)
	// The body gets the local copies in place of the buffers.
	for i, a := range rest {
		for _, p := range arrays {
			if a == names[p] {
				rest[i] = "gompt_r_" + names[p]
			}
		}
	}
	line("long gompt_lid = (long)get_local_id(0), gompt_lsz = (long)get_local_size(0);")
	n := "(long)" + names[k.Dims[0]]
	merge := func(lid, lsz string) {
		for _, p := range arrays {
			op := k.ReduceArrays[p]
			line("for (long gompt_l = %s; gompt_l < %d && gompt_l < gompt_len_%s; gompt_l += %s) {", lid, k.ReduceLen[p], names[p], lsz)
			line("  %s gompt_v = gompt_r_%s[gompt_l];", p.T.C(), names[p])
			line("  if (%s) %s(&%s[gompt_l], gompt_v);", notIdentityC(op, p.T, "gompt_v"), pre.reduceAtomic(op, p.T, "__global"), names[p])
			line("}")
		}
	}
	// On a CPU device (POCL), where a work-group's work-items run one
	// after another on one core, atomics into the team's copy cost more
	// than the work: there one work-item runs the team's contiguous share
	// of the points with plain adds, and merges the copy (a histogram of
	// 2^24 values on POCL: 55 ms with local atomics).
	line("#ifdef %s", CPUDefine)
	line("if (gompt_lid == 0) {")
	w.depth++
	for _, p := range arrays {
		line("for (long gompt_l = 0; gompt_l < %d; gompt_l++) gompt_r_%s[gompt_l] = %s;", k.ReduceLen[p], names[p], arrayIdentityC(k.ReduceArrays[p], p.T))
	}
	line("long gompt_chunk = (%s - 1) / (long)get_num_groups(0) + 1;", n)
	line("long gompt_lo = (long)get_group_id(0) * gompt_chunk;")
	line("long gompt_hi = gompt_lo + gompt_chunk < %s ? gompt_lo + gompt_chunk : %s;", n, n)
	line("for (long gompt_i0 = gompt_lo; gompt_i0 < gompt_hi; gompt_i0++) {")
	line("  %s(%s%s);", bodyName(k), strings.Join(append([]string{"gompt_i0"}, rest...), ", "), faultArgsNext)
	if len(k.Sites) > 0 {
		line("  if (gompt_stopped) break;")
	}
	line("}")
	merge("0", "1")
	w.depth--
	line("}")
	line("#else")
	for _, p := range arrays {
		line("for (long gompt_l = gompt_lid; gompt_l < %d; gompt_l += gompt_lsz) gompt_r_%s[gompt_l] = %s;", k.ReduceLen[p], names[p], arrayIdentityC(k.ReduceArrays[p], p.T))
	}
	line("barrier(CLK_LOCAL_MEM_FENCE);")
	line("for (long gompt_i0 = (long)get_global_id(0); gompt_i0 < %s; gompt_i0 += (long)get_global_size(0)) {", n)
	line("  %s(%s%s);", bodyName(k), strings.Join(append([]string{"gompt_i0"}, rest...), ", "), faultArgsNext)
	if len(k.Sites) > 0 {
		line("  if (gompt_stopped) break; // on to the barrier, which every work-item reaches")
	}
	line("}")
	line("barrier(CLK_LOCAL_MEM_FENCE);")
	merge("gompt_lid", "gompt_lsz")
	line("#endif")
	w.depth--
	line("}")
	return w.sb.String()
}

// arrayIdentityC is the identity a team's copy of an array reduction
// starts from, in C: a float sum's is -0, as x + -0 is x for every x (+0
// would turn an element's -0 into +0 where no point added to it).
func arrayIdentityC(op string, t ir.Scalar) string {
	if t.IsFloat() && op == "+" {
		return "((" + t.C() + ")-0.0)"
	}
	return identityC(op, t)
}

// notIdentityC is the C test that value v of a team's copy is not the
// identity, which its merge skips: on a float's bits (a -0 sum skipped,
// a +0 one merged: -0 + +0 is +0).
func notIdentityC(op string, t ir.Scalar, v string) string {
	id := arrayIdentityC(op, t)
	if t.IsFloat() {
		as := "as_uint"
		if t.Bits() == 64 {
			as = "as_ulong"
		}
		return as + "(" + v + ") != " + as + "(" + id + ")"
	}
	return v + " != " + id
}
