package main

import (
	"go/ast"
	"go/types"
	"strings"
)

// Atomics: sync/atomic's Add, CompareAndSwap and Load of 32- and 64-bit
// integers on an element of a slice parameter, &buf[i]. OpenCL C has them
// as atomic_add and atomic_cmpxchg (32 bits, OpenCL 1.1 core) and atom_add
// and atom_cmpxchg (64 bits, cl_khr_int64_base_atomics); the PTX gets
// clang's __sync builtins for 64 bits (libclc has no 64-bit atom_add for
// nvptx), which become atom.global.add.u64 and atom.global.cas.b64; a Load
// is a volatile read. The Go image calls sync/atomic itself.

const atomicPkg = "sync/atomic"

// atomicOp is one sync/atomic function a kernel may call.
type atomicOp struct {
	kind string // "add", "cas" or "load"
	t    scalar // the element type
}

var atomicOps = map[string]atomicOp{
	"AddInt32":             {"add", scalar(types.Int32)},
	"AddUint32":            {"add", scalar(types.Uint32)},
	"AddInt64":             {"add", scalar(types.Int64)},
	"AddUint64":            {"add", scalar(types.Uint64)},
	"CompareAndSwapInt32":  {"cas", scalar(types.Int32)},
	"CompareAndSwapUint32": {"cas", scalar(types.Uint32)},
	"CompareAndSwapInt64":  {"cas", scalar(types.Int64)},
	"CompareAndSwapUint64": {"cas", scalar(types.Uint64)},
	"LoadInt32":            {"load", scalar(types.Int32)},
	"LoadUint32":           {"load", scalar(types.Uint32)},
	"LoadInt64":            {"load", scalar(types.Int64)},
	"LoadUint64":           {"load", scalar(types.Uint64)},
}

const atomicHint = "kernels call atomic.AddT, CompareAndSwapT and LoadT for T Int32, Uint32, Int64 and Uint64, with &buf[i], an element of a slice parameter, as the address; there are no float atomics (reduce a float with reduce=+, or add integers)"

// atomicCallee returns the name of the sync/atomic function e calls, if it
// calls one.
func atomicCallee(info *types.Info, e *ast.CallExpr) (string, bool) {
	sel, ok := ast.Unparen(e.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	pn, ok := info.Uses[id].(*types.PkgName)
	if !ok || pn.Imported().Path() != atomicPkg {
		return "", false
	}
	return sel.Sel.Name, true
}

// atomicAddr is the element &buf[i] an atomic's first argument takes the
// address of, or nil.
func atomicAddr(e ast.Expr) *ast.IndexExpr {
	u, ok := ast.Unparen(e).(*ast.UnaryExpr)
	if !ok || u.Op.String() != "&" {
		return nil
	}
	ix, _ := ast.Unparen(u.X).(*ast.IndexExpr)
	return ix
}

// atomicCall checks a call of sync/atomic's name: one of atomicOps, on
// &buf[i]. The buffer is read, and written by Add and CompareAndSwap.
func (c *checker) atomicCall(e *ast.CallExpr, name string) {
	if _, ok := atomicOps[name]; !ok {
		c.unsupported(e.Pos(), "atomic."+name, atomicHint)
		return
	}
	ix := atomicAddr(e.Args[0])
	if ix == nil {
		c.unsupported(e.Args[0].Pos(), "atomic."+name+" of "+exprString(e.Args[0]), atomicHint)
		return
	}
	if teamArrayOf(c.info(), c.f, ix.X) != nil {
		c.unsupported(e.Args[0].Pos(), "atomic."+name+" of "+exprString(e.Args[0]), "a team array's elements are not atomic; give each thread its own element, and combine them after a kernelrt.Barrier()")
		return
	}
	p := c.buffer(ix)
	if p == nil {
		return
	}
	p.read = true
	if atomicOps[name].kind != "load" {
		p.written = true
	}
	c.index(ix.Index)
	for _, a := range e.Args[1:] {
		c.expr(a)
	}
	c.f.atomic = true
}

// atomicCall is a call of sync/atomic's name in C: Go's result (Add's new
// value, CompareAndSwap's success, Load's value). An index not proven in
// range is checked: outside the buffer the check fails (the kernel's
// fault record, as for any element; see cfile), nothing is changed, and
// Add and Load give 0 and CompareAndSwap false to the rest of the
// statement.
func (c *cfunc) atomicCall(e *ast.CallExpr, name string) string {
	op := atomicOps[name]
	t := op.t
	ix := atomicAddr(e.Args[0])
	p, buf, n := c.elemBuffer(ix) // a buffer's element, or a view's
	idx := c.index(ix.Index)
	var args []string
	for _, a := range e.Args[1:] {
		args = append(args, c.convertTo(a, t))
	}
	h := c.pre.atomic(c.file.k, t, op.kind, p.written)
	if c.proven(ix) {
		return h + "(" + strings.Join(append([]string{"&" + buf + "[" + idx + "]"}, args...), ", ") + ")"
	}
	return h + "_at(" + strings.Join(append([]string{buf, n, idx}, args...), ", ") + ", " + c.site(siteIndex, ix.Index.Pos()) + ")"
}

// atomic returns the helper of an atomic Add, CompareAndSwap or Load
// (kind) of t: NAME(p, ...) on a pointer, and NAME_at(buf, len, i, ...,
// fault record, stop flag, check) with the check of i against len. A Load from a buffer the kernel does not
// write takes a const pointer (the buffer's type in the body).
func (p *prelude) atomic(k *kernel, t scalar, kind string, written bool) string {
	ct, u := t.c(), t.cUnsigned()
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
		if t.bits() == 64 {
			fn = "gompt_atom_cas64"
		}
		body = "return " + fn + "(a, o, n) == o;"
	default:
		name = "gompt_atomic_add_" + ct
		params, args, zero = ct+" d", "d", "0"
		fn := "atomic_add"
		if t.bits() == 64 {
			fn = "gompt_atom_add64"
		}
		// Go's Add returns the new value; C's the old one. The sum wraps.
		body = "return (" + ct + ")((" + u + ")" + fn + "(a, d) + (" + u + ")d);"
	}
	ret := ct
	if cas {
		ret = "bool"
	}
	if t.bits() == 64 && kind != "load" {
		p.need("gompt_atom64", atom64)
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

// atom64 defines the 64-bit atomics: cl_khr_int64_base_atomics' on an
// OpenCL device (a device without the extension fails the build with a
// message saying so), clang's builtins for PTX (libclc lacks the
// extension's functions for nvptx).
const atom64 = `
#ifdef __NVPTX__
#define gompt_atom_add64(a, d) __sync_fetch_and_add(a, d)
#define gompt_atom_cas64(a, o, n) __sync_val_compare_and_swap(a, o, n)
#else
#ifndef cl_khr_int64_base_atomics
#error "gompt: this kernel uses 64-bit atomics (sync/atomic on int64 or uint64, or an array reduction of them), and this OpenCL device lacks cl_khr_int64_base_atomics"
#endif
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define gompt_atom_add64(a, d) atom_add(a, d)
#define gompt_atom_cas64(a, o, n) atom_cmpxchg(a, o, n)
#endif
`

// atomicCall is a call of sync/atomic's name in the Go image.
func (b *gobody) atomicCall(e *ast.CallExpr, name string) string {
	b.w.imports[atomicPkg] = "gomptatomic"
	return "gomptatomic." + name + "(" + b.exprList(e.Args) + ")"
}
