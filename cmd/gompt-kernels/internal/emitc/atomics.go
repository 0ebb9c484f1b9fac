package emitc

import (
	"go/ast"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// atomicCall is a call of sync/atomic's name in C: Go's result (Add's new
// value, CompareAndSwap's success, Load's value). An index not proven in
// range is checked: outside the buffer the check fails (the kernel's
// fault record, as for any element; see cfile), nothing is changed, and
// Add and Load give 0 and CompareAndSwap false to the rest of the
// statement.
func (c *cfunc) atomicCall(e *ast.CallExpr, name string) string {
	op := ir.AtomicOps[name]
	t := op.T
	ix := ir.AtomicAddr(e.Args[0])
	p, buf, n := c.elemBuffer(ix) // a buffer's element, or a view's
	idx := c.index(ix.Index)
	var args []string
	for _, a := range e.Args[1:] {
		args = append(args, c.convertTo(a, t))
	}
	h := c.pre.atomic(c.file.k, t, op.Kind, p.Written)
	if c.proven(ix) {
		return h + "(" + strings.Join(append([]string{"&" + buf + "[" + idx + "]"}, args...), ", ") + ")"
	}
	return h + "_at(" + strings.Join(append([]string{buf, n, idx}, args...), ", ") + ", " + c.site(ir.SiteIndex, ix) + ")"
}

// atomic returns the helper of an atomic Add, CompareAndSwap or Load
// (kind) of t: NAME(p, ...) on a pointer, and NAME_at(buf, len, i, ...,
// fault record, stop flag, check) with the check of i against len. A Load from a buffer the kernel does not
// write takes a const pointer (the buffer's type in the body).
func (p *prelude) atomic(k *ir.Kernel, t ir.Scalar, kind string, written bool) string {
	ct, u := t.C(), t.CUnsigned()
	var name, body, params, args, zero string
	cas := kind == "cas"
	ptr := "volatile __global " + ct + " *a"
	buf := "__global " + ct + " *b"
	switch kind {
	case "load":
		name = "gompt_atomic_load_" + ct
		zero = "0"
		body = "return *a;"
		if !written {
			name += "_const"
			ptr = "volatile __global const " + ct + " *a"
			buf = "__global const " + ct + " *b"
		}
	case "cas":
		name = "gompt_atomic_cas_" + ct
		params, args, zero = ct+" o, "+ct+" n", "o, n", "false"
		fn := "atomic_cmpxchg"
		if t.Bits() == 64 {
			fn = "gompt_atom_cas64"
		}
		body = "return " + fn + "(a, o, n) == o;"
	default:
		name = "gompt_atomic_add_" + ct
		params, args, zero = ct+" d", "d", "0"
		fn := "atomic_add"
		if t.Bits() == 64 {
			fn = "gompt_atom_add64"
		}
		// Go's Add returns the new value; C's the old one. The sum wraps.
		body = "return (" + ct + ")((" + u + ")" + fn + "(a, d) + (" + u + ")d);"
	}
	ret := ct
	if cas {
		ret = "bool"
	}
	if t.Bits() == 64 && kind != "load" {
		p.need("gompt_atom64", ir.Atom64)
	}
	if params != "" {
		params, args = ", "+params, ", "+args
	}
	p.need(name, inl+" "+ret+" "+name+"("+ptr+params+") {\n  "+body+"\n}")
	p.need(name+"_at", inl+" "+ret+" "+name+"_at("+buf+", long len, long i"+params+", __global long *f, int *stop, long site) {\n"+
		"  if ((ulong)i >= (ulong)len) { "+p.fail(k)+"(f, stop, site, i, len); return "+zero+"; }\n"+
		"  return "+name+"(&b[i]"+args+");\n}")
	return name
}
