package emitc

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"strconv"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// bufferOf is the slice parameter ix indexes.
func (c *cfunc) bufferOf(ix *ast.IndexExpr) *ir.Param {
	id := ast.Unparen(ix.X).(*ast.Ident)
	return c.f.ByObj[c.info().Uses[id].(*types.Var)]
}

// index is an index expression as a C long.
func (c *cfunc) index(e ast.Expr) string {
	t := c.typeOf(e)
	s := c.expr(e)
	if t.Kind() == types.Int || t.Kind() == types.Int64 {
		return s
	}
	return "(long)(" + s + ")"
}

// convertTo is e converted to t, where Go converts it implicitly (an
// untyped constant takes its type from where it is used).
func (c *cfunc) convertTo(e ast.Expr, t ir.Scalar) string {
	tv := c.info().Types[e]
	if tv.Value != nil {
		return c.constant(tv.Value, t)
	}
	return c.expr(e)
}

// expr is e as a C expression of the C type of e's Go type.
func (c *cfunc) expr(e ast.Expr) string {
	tv := c.info().Types[e]
	if tv.Value != nil {
		t, _ := ir.ScalarOf(tv.Type)
		return c.constant(tv.Value, t)
	}
	if ix, ok := e.(*ast.IndexExpr); ok {
		if s, ok := c.teamLoad(ix); ok {
			return s
		}
		if s, ok := c.viewLoad(ix); ok {
			return s
		}
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.expr(e.X)
	case *ast.Ident:
		if v, ok := c.info().Uses[e].(*types.Var); ok {
			return c.names[v]
		}
		panic("gompt-kernels: identifier " + e.Name + " passed the check")
	case *ast.BinaryExpr:
		t := c.typeOf(e.X)
		if tv := c.info().Types[e.X]; tv.Value != nil && e.Op != token.SHL && e.Op != token.SHR {
			t = c.typeOf(e.Y)
		}
		switch e.Op {
		case token.LAND, token.LOR:
			x := c.expr(e.X)
			saved := c.callsFirst
			c.callsFirst = false // the right operand runs only where the left says
			y := c.expr(e.Y)
			c.callsFirst = saved
			return "(" + x + " " + e.Op.String() + " " + y + ")"
		case token.SHL, token.SHR:
			t = c.typeOf(e)
			return c.binop(e.Op, t, c.convertTo(e.X, t), c.expr(e.Y), e.Y)
		}
		return c.binop(e.Op, t, c.convertTo(e.X, t), c.convertTo(e.Y, t), e.Y)
	case *ast.UnaryExpr:
		t := c.typeOf(e)
		x := c.expr(e.X)
		switch e.Op {
		case token.ADD:
			return x
		case token.NOT:
			return "(!" + x + ")"
		case token.XOR:
			return "((" + t.C() + ")(~" + x + "))"
		case token.SUB:
			if t.IsFloat() {
				return "(-" + x + ")"
			}
			return "((" + t.C() + ")((" + t.CUnsigned() + ")0 - (" + t.CUnsigned() + ")" + x + "))"
		}
	case *ast.IndexExpr:
		p := c.bufferOf(e)
		idx := c.index(e.Index)
		if c.proven(e) {
			return c.names[p.Obj] + "[" + idx + "]"
		}
		return c.pre.loadChecked(c.file.k, p.T) + "(" + c.names[p.Obj] + ", " + c.lens[p] + ", " + idx + ", " + c.site(ir.SiteIndex, e) + ")"
	case *ast.CallExpr:
		return c.call(e)
	}
	panic(fmt.Sprintf("gompt-kernels: expression %T passed the check", e))
}

// Signed 64-bit orderings. Mesa's OpenCL compiler (22.3; seen with
// rusticl on llvmpipe) gets a signed 64-bit <, <=, > or >= between a
// value sign-extended from 32 bits and a constant wrong, (long)x < 5
// false and (long)x > 5 true for every int x, whatever the int's source
// (see device/opencl's SextCompareDefine). The constant need not be the
// source's: it folds a helper's argument in, and a loop counter once it
// unrolls the loop, so that a loop for (k = 0; k < (long)x; k++) that
// breaks after 20 turns ran 20 for x = -5. So the generator writes every
// signed 64-bit ordering as cmp64: GOMPT_CMP64(x, op, y) (cmp64Macro),
// the plain comparison but where the OpenCL plugin defines
// GOMPT_SEXT_COMPARE, on such a driver: there an unsigned comparison of
// the operands with their sign bits flipped, which orders them as the
// signed one does and which the driver gets right. The code other
// drivers build, and the PTX, are what they were.

// cmp64 is x op y, signed 64-bit operands, op <, <=, > or >=.
func cmp64(x string, op token.Token, y string) string {
	return cmp64Name + "(" + x + ", " + op.String() + ", " + y + ")"
}

// binop is x op y for operands of type t (for shifts, the left operand's
// type; y is then any integer type), with Go's integer rules: +, - and *
// wrap (computed in the unsigned type, since signed overflow is undefined
// in C), / and % go through helpers unless the divisor is a constant that
// cannot trap, shifts by the width or more give 0 (or -1).
func (c *cfunc) binop(op token.Token, t ir.Scalar, x, y string, ye ast.Expr) string {
	var yc constant.Value
	if ye != nil {
		yc = c.info().Types[ye].Value
	}
	switch op {
	case token.LSS, token.LEQ, token.GTR, token.GEQ:
		if t.IsInt() && t.Signed() && t.Bits() == 64 {
			return cmp64(x, op, y)
		}
		return "(" + x + " " + op.String() + " " + y + ")"
	case token.EQL, token.NEQ:
		return "(" + x + " " + op.String() + " " + y + ")"
	case token.LAND, token.LOR:
		return "(" + x + " " + op.String() + " " + y + ")"
	}
	if t.IsFloat() {
		return "(" + x + " " + op.String() + " " + y + ")"
	}
	if t.IsBool() {
		return "(" + x + " " + op.String() + " " + y + ")"
	}
	cast := func(s string) string { return "((" + t.C() + ")(" + s + "))" }
	u := t.CUnsigned()
	switch op {
	case token.ADD, token.SUB, token.MUL:
		if !t.Signed() && t.Bits() >= 32 {
			return "(" + x + " " + op.String() + " " + y + ")"
		}
		return cast("(" + u + ")" + x + " " + op.String() + " (" + u + ")" + y)
	case token.QUO, token.REM:
		if yc != nil {
			if v, ok := constant.Int64Val(constant.ToInt(yc)); ok && v != 0 && v != -1 {
				return cast(x + " " + op.String() + " " + y)
			}
		}
		if ye != nil && c.checking() {
			return c.pre.divChecked(c.file.k, t, op == token.REM) + "(" + x + ", " + y + ", " + c.site(ir.SiteDivide, ye) + ")"
		}
		return c.pre.div(t, op == token.REM) + "(" + x + ", " + y + ")"
	case token.AND, token.OR, token.XOR:
		return cast(x + " " + op.String() + " " + y)
	case token.AND_NOT:
		return cast(x + " & ~" + y)
	case token.SHL, token.SHR:
		if yc != nil {
			v, exact := constant.Uint64Val(constant.ToInt(yc))
			if exact && v < uint64(t.Bits()) {
				if op == token.SHL {
					return cast("(" + u + ")" + x + " << " + strconv.FormatUint(v, 10))
				}
				return cast(x + " >> " + strconv.FormatUint(v, 10))
			}
			if op == token.SHL || !t.Signed() {
				return "((" + t.C() + ")0)"
			}
			return cast(x + " >> " + ir.Itoa(t.Bits()-1))
		}
		return c.pre.shift(t, op == token.SHL) + "(" + x + ", (ulong)(" + y + "))"
	}
	panic("gompt-kernels: operator " + op.String())
}

// constant is v as a C literal of type t.
func (c *cfunc) constant(v constant.Value, t ir.Scalar) string {
	switch {
	case t.IsBool():
		if constant.BoolVal(v) {
			return "true"
		}
		return "false"
	case t.IsFloat():
		f, _ := constant.Float64Val(constant.ToFloat(v))
		if t.Bits() == 32 {
			f32, _ := constant.Float32Val(constant.ToFloat(v))
			return floatLit(float64(f32), true)
		}
		return floatLit(f, false)
	}
	iv := constant.ToInt(v)
	if t.Signed() {
		n, _ := constant.Int64Val(iv)
		switch {
		case t.Bits() == 64 && n == math.MinInt64:
			return "((long)0x8000000000000000UL)"
		case t.Bits() == 64:
			return "(" + strconv.FormatInt(n, 10) + "L)"
		case t.Bits() == 32 && n == math.MinInt32:
			return "((int)0x80000000U)"
		case t.Bits() == 32:
			return "(" + strconv.FormatInt(n, 10) + ")"
		}
		return "((" + t.C() + ")" + strconv.FormatInt(n, 10) + ")"
	}
	n, _ := constant.Uint64Val(iv)
	switch t.Bits() {
	case 64:
		return strconv.FormatUint(n, 10) + "UL"
	case 32:
		return strconv.FormatUint(n, 10) + "U"
	}
	return "((" + t.C() + ")" + strconv.FormatUint(n, 10) + "U)"
}

// floatLit is f exactly, as a C hexadecimal floating literal (f32: with
// the f suffix).
func floatLit(f float64, f32 bool) string {
	s := strconv.FormatFloat(f, 'x', -1, 64)
	if f32 {
		s = strconv.FormatFloat(f, 'x', -1, 32)
		return "(" + s + "f)"
	}
	return "(" + s + ")"
}

// bare is s without the parentheses around it, if it has them: C warns
// of "if ((a == b))".
func bare(s string) string {
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return s
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i != len(s)-1 {
				return s
			}
		}
	}
	return s[1 : len(s)-1]
}
