package emitc

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

func (c *cfunc) call(e *ast.CallExpr) string {
	fun := ast.Unparen(e.Fun)
	tv := c.info().Types[fun]
	switch {
	case tv.IsType():
		to, _ := ir.ScalarOf(tv.Type)
		return c.conversion(e.Args[0], to)
	case tv.IsBuiltin():
		switch fun.(*ast.Ident).Name {
		case "len":
			_, n, _, _ := c.cslice(e.Args[0]) // a buffer's, or a view's
			return n
		case "min", "max":
			t := c.typeOf(e)
			isMin := fun.(*ast.Ident).Name == "min"
			h := c.pre.minmax(t, isMin)
			acc := c.convertTo(e.Args[0], t)
			for _, a := range e.Args[1:] {
				acc = h + "(" + acc + ", " + c.convertTo(a, t) + ")"
			}
			return acc
		}
	}
	if name, ok := ir.AtomicCallee(c.info(), e); ok {
		return c.atomicCall(e, name)
	}
	if ir.IsBarrier(c.info(), e) {
		return "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"
	}
	if sel, ok := fun.(*ast.SelectorExpr); ok {
		mf := ir.MathFuncs[sel.Sel.Name]
		var args []any
		for i, a := range e.Args {
			var t ir.Scalar
			switch mf.Args[min(i, len(mf.Args)-1):][0] {
			case 'f':
				t = ir.Scalar(types.Float64)
				if mf.Args == "f32" {
					t = ir.Scalar(types.Float32)
				}
			case 'i':
				t = ir.Scalar(types.Int)
			case 'u':
				t = ir.Scalar(types.Uint32)
				if mf.Args == "u64" {
					t = ir.Scalar(types.Uint64)
				}
			}
			args = append(args, c.convertTo(a, t))
		}
		if strings.HasPrefix(mf.C, "gompt_") {
			c.pre.mathHelper(mf.C[:strings.Index(mf.C, "(")])
		}
		return "(" + fmt.Sprintf(mf.C, args...) + ")"
	}
	callee := c.g.Funcs[c.info().Uses[fun.(*ast.Ident)].(*types.Func)]
	var args []string
	for i, a := range e.Args {
		p := callee.Params[i]
		if p.Slice {
			ptr, n, _, _ := c.cslice(a) // a buffer, or a view
			args = append(args, ptr, n)
			continue
		}
		args = append(args, c.convertTo(a, p.T))
	}
	if c.file.faulty[callee] {
		c.marks++
	}
	call := helperName(callee) + "(" + faultArgs + ")"
	if len(args) > 0 {
		call = helperName(callee) + "(" + strings.Join(args, ", ") + faultArgsNext + ")"
	}
	if c.callsFirst && callee.Result != nil && writesSlice(callee) {
		tmp := c.newTmp()
		c.line("%s %s = %s;", callee.Result.C(), tmp, call)
		return tmp
	}
	return call
}

// writesSlice reports whether f writes an element of a slice it is given.
func writesSlice(f *ir.Fn) bool {
	for _, p := range f.Params {
		if p.Slice && p.Written {
			return true
		}
	}
	return false
}

// conversion is T(e) with Go's conversion rules.
func (c *cfunc) conversion(e ast.Expr, to ir.Scalar) string {
	tv := c.info().Types[e]
	if tv.Value != nil {
		return c.constant(tv.Value, to)
	}
	from := c.typeOf(e)
	x := c.expr(e)
	switch {
	case from == to:
		return x
	case from.IsFloat() && to.IsInt():
		return c.pre.cvt(to, from) + "(" + x + ")"
	}
	return "((" + to.C() + ")" + x + ")"
}
