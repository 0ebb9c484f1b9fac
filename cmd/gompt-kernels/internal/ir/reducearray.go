package ir

import (
	"go/ast"
	"go/types"
)

// Array reductions: //gompt:kernel dims=n reduce(h)=+ len(h)=256 (or
// reduce(h)=*, =min, =max). The points combine values into h's elements
// with the operator (h[b] += v, h[b]++; h[b] *= v; h[b] = min(h[b], v);
// h[b] = max(h[b], v); nothing else); each team combines into a private
// copy of h at the operator's identity (OpenCL __local memory, local
// atomics or compare-and-swap loops; a Go array in the Go image), and
// combines its copy into h once, atomically. The result is h's values
// combined with the points', exact for integers and for min and max.

// maxReduceLen is the largest array reduction: 16384 elements, and
// maxReduceBytes the most local memory a kernel's private copies take
// together: 48 KiB, the static shared memory of a CUDA block (NVIDIA's
// OpenCL reports the same); POCL has more, a GPU not always.
const (
	MaxReduceLen   = 16384
	MaxReduceBytes = 48 << 10
)

// IsBuiltin reports whether call calls Go's built-in function name.
func IsBuiltin(info *types.Info, call *ast.CallExpr, name string) bool {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	return ok && id.Name == name && info.Types[call.Fun].IsBuiltin()
}

// SameElement returns the operand of min or max call that is element ix
// of the same buffer at the same index (written the same way), if one is.
func SameElement(info *types.Info, call *ast.CallExpr, ix *ast.IndexExpr) *ast.IndexExpr {
	want := ExprString(ix)
	for _, a := range call.Args {
		if o, ok := ast.Unparen(a).(*ast.IndexExpr); ok && ExprString(o) == want {
			if id, ok := ast.Unparen(o.X).(*ast.Ident); ok && info.Uses[id] == info.Uses[ast.Unparen(ix.X).(*ast.Ident)] {
				return o
			}
		}
	}
	return nil
}

// MinMaxOperands are the operands of call other than element ix.
func MinMaxOperands(info *types.Info, call *ast.CallExpr, ix *ast.IndexExpr) []ast.Expr {
	same := SameElement(info, call, ix)
	var rest []ast.Expr
	for _, a := range call.Args {
		if ast.Unparen(a) != same {
			rest = append(rest, a)
		}
	}
	return rest
}

// CallsNothing reports whether e calls nothing but conversions and Go's
// built-in functions (len, min, max: the subset's), so that evaluating it
// twice gives the same value.
func CallsNothing(info *types.Info, e ast.Expr) bool {
	pure := true
	ast.Inspect(e, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if tv := info.Types[call.Fun]; !tv.IsType() && !tv.IsBuiltin() {
				pure = false
			}
		}
		return pure
	})
	return pure
}

// ReduceArrayAt is the element of one of k's reduction arrays e is, if
// it is one: its index expression, the array's identifier and parameter.
func (k *Kernel) ReduceArrayAt(info *types.Info, e ast.Expr) (*ast.IndexExpr, *ast.Ident, *Param) {
	ix, ok := ast.Unparen(e).(*ast.IndexExpr)
	if !ok {
		return nil, nil, nil
	}
	id, ok := ast.Unparen(ix.X).(*ast.Ident)
	if !ok {
		return nil, nil, nil
	}
	v, _ := info.Uses[id].(*types.Var)
	if p := k.ByObj[v]; p != nil && k.ReduceArrays[p] != "" {
		return ix, id, p
	}
	return nil, nil, nil
}
