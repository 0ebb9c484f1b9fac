package ir

import (
	"go/ast"
	"go/types"
)

// Atomics: sync/atomic's Add, CompareAndSwap and Load of 32- and 64-bit
// integers on an element of a slice parameter, &buf[i]. OpenCL C has them
// as atomic_add and atomic_cmpxchg (32 bits, OpenCL 1.1 core) and atom_add
// and atom_cmpxchg (64 bits, cl_khr_int64_base_atomics); the PTX gets
// clang's __sync builtins for 64 bits (libclc has no 64-bit atom_add for
// nvptx), which become atom.global.add.u64 and atom.global.cas.b64; a Load
// is a volatile read. The Go image calls sync/atomic itself.

const AtomicPkg = "sync/atomic"

// atomicOp is one sync/atomic function a kernel may call.
type atomicOp struct {
	Kind string // "add", "cas" or "load"
	T    Scalar // the element type
}

var AtomicOps = map[string]atomicOp{
	"AddInt32":             {"add", Scalar(types.Int32)},
	"AddUint32":            {"add", Scalar(types.Uint32)},
	"AddInt64":             {"add", Scalar(types.Int64)},
	"AddUint64":            {"add", Scalar(types.Uint64)},
	"CompareAndSwapInt32":  {"cas", Scalar(types.Int32)},
	"CompareAndSwapUint32": {"cas", Scalar(types.Uint32)},
	"CompareAndSwapInt64":  {"cas", Scalar(types.Int64)},
	"CompareAndSwapUint64": {"cas", Scalar(types.Uint64)},
	"LoadInt32":            {"load", Scalar(types.Int32)},
	"LoadUint32":           {"load", Scalar(types.Uint32)},
	"LoadInt64":            {"load", Scalar(types.Int64)},
	"LoadUint64":           {"load", Scalar(types.Uint64)},
}

const AtomicHint = "kernels call atomic.AddT, CompareAndSwapT and LoadT for T Int32, Uint32, Int64 and Uint64, with &buf[i], an element of a slice parameter, as the address; there are no float atomics (reduce a float with reduce=+, or add integers)"

// AtomicCallee returns the name of the sync/atomic function e calls, if it
// calls one.
func AtomicCallee(info *types.Info, e *ast.CallExpr) (string, bool) {
	sel, ok := ast.Unparen(e.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	pn, ok := info.Uses[id].(*types.PkgName)
	if !ok || pn.Imported().Path() != AtomicPkg {
		return "", false
	}
	return sel.Sel.Name, true
}

// AtomicAddr is the element &buf[i] an atomic's first argument takes the
// address of, or nil.
func AtomicAddr(e ast.Expr) *ast.IndexExpr {
	u, ok := ast.Unparen(e).(*ast.UnaryExpr)
	if !ok || u.Op.String() != "&" {
		return nil
	}
	ix, _ := ast.Unparen(u.X).(*ast.IndexExpr)
	return ix
}

// Atom64 defines the 64-bit atomics: cl_khr_int64_base_atomics' on an
// OpenCL device (a device without the extension fails the build with a
// message saying so), clang's builtins for PTX (libclc lacks the
// extension's functions for nvptx).
const Atom64 = `
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
