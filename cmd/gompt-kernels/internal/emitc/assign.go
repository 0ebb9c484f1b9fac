package emitc

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// declare declares local id with initial value val (its zero value when
// empty), or assigns it when id names an existing variable (a := that
// redeclares).
func (c *cfunc) declare(id *ast.Ident, val string) {
	if id.Name == "_" {
		if val != "" {
			c.line("(void)(%s);", val)
		}
		return
	}
	v, _ := c.info().Defs[id].(*types.Var)
	if ir.TeamArrayOf(c.info(), c.f, id) != nil {
		return // an argument of the body: the entry's __local array
	}
	if v == nil {
		c.line("%s = %s;", c.names[c.info().Uses[id].(*types.Var)], val)
		return
	}
	t, _ := ir.ScalarOf(v.Type())
	if val == "" {
		val = c.zero(t)
	}
	if c.predeclared[v] {
		c.line("%s = %s;", c.names[v], val) // declared before its guard (flat.go)
		return
	}
	name := ir.CName(id.Name, c.used)
	c.names[v] = name
	c.line("%s %s = %s;", t.C(), name, val)
}

func (c *cfunc) zero(t ir.Scalar) string {
	switch {
	case t.IsBool():
		return "false"
	case t.IsFloat():
		return c.constant(constant.MakeInt64(0), t)
	}
	return "(" + t.C() + ")0"
}

func (c *cfunc) assign(s *ast.AssignStmt) {
	switch s.Tok {
	case token.DEFINE:
		if len(s.Lhs) == 1 {
			c.declare(s.Lhs[0].(*ast.Ident), c.convertTo(s.Rhs[0], c.typeOf(s.Lhs[0])))
			return
		}
		vals := make([]string, len(s.Rhs))
		for i, r := range s.Rhs {
			t := c.typeOf(s.Lhs[i])
			if s.Lhs[i].(*ast.Ident).Name == "_" {
				t = c.typeOf(r)
			}
			tmp := c.newTmp()
			c.line("%s %s = %s;", t.C(), tmp, c.convertTo(r, t))
			vals[i] = tmp
		}
		for i, l := range s.Lhs {
			c.declare(l.(*ast.Ident), vals[i])
		}
	case token.ASSIGN:
		if len(s.Lhs) == 1 {
			if c.reduceArrayMinMax(s) {
				return
			}
			c.store(s.Lhs[0], func() string { return c.convertTo(s.Rhs[0], c.typeOf(s.Lhs[0])) })
			return
		}
		// Go evaluates the index operands on the left and the values on
		// the right first, then assigns from left to right.
		type target struct {
			e   ast.Expr
			idx string
		}
		var targets []target
		for _, l := range s.Lhs {
			t := target{e: l}
			if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
				t.idx = c.newTmp()
				c.line("long %s = %s;", t.idx, c.index(ix.Index))
			}
			targets = append(targets, t)
		}
		vals := make([]string, len(s.Rhs))
		for i, r := range s.Rhs {
			t := c.typeOf(s.Lhs[i])
			if id, ok := s.Lhs[i].(*ast.Ident); ok && id.Name == "_" {
				t = c.typeOf(r)
			}
			tmp := c.newTmp()
			c.line("%s %s = %s;", t.C(), tmp, c.convertTo(r, t))
			vals[i] = tmp
		}
		for i, t := range targets {
			val := vals[i]
			if t.idx != "" {
				ix := ast.Unparen(t.e).(*ast.IndexExpr)
				c.storeAt(ix, t.idx, val)
			} else {
				c.store(t.e, func() string { return val })
			}
		}
	default:
		op := map[token.Token]token.Token{
			token.ADD_ASSIGN: token.ADD, token.SUB_ASSIGN: token.SUB, token.MUL_ASSIGN: token.MUL,
			token.QUO_ASSIGN: token.QUO, token.REM_ASSIGN: token.REM, token.AND_ASSIGN: token.AND,
			token.OR_ASSIGN: token.OR, token.XOR_ASSIGN: token.XOR, token.SHL_ASSIGN: token.SHL,
			token.SHR_ASSIGN: token.SHR, token.AND_NOT_ASSIGN: token.AND_NOT,
		}[s.Tok]
		c.opAssign(s.Lhs[0], op, func() string { return "" }, s.Rhs[0])
	}
}

// store assigns val() to l: a local, a parameter, _ or a buffer element.
func (c *cfunc) store(l ast.Expr, val func() string) {
	switch l := ast.Unparen(l).(type) {
	case *ast.Ident:
		if l.Name == "_" {
			c.line("(void)(%s);", val())
			return
		}
		c.line("%s = %s;", c.names[c.info().Uses[l].(*types.Var)], val())
	case *ast.IndexExpr:
		if c.teamStore(l, val) {
			return
		}
		idx := c.index(l.Index)
		v := val()
		c.storeAt(l, idx, v)
	}
}

// storeAt stores v into element ix, of a buffer or a team array, at the
// C index idx (already evaluated: a tuple assignment evaluates its
// targets' indexes before its values, as Go does).
func (c *cfunc) storeAt(ix *ast.IndexExpr, idx, v string) {
	if c.teamStoreAt(ix, idx, v) || c.viewStoreAt(ix, idx, v) {
		return
	}
	p := c.bufferOf(ix)
	name := c.names[p.Obj]
	if c.proven(ix) {
		c.line("%s[%s] = %s;", name, idx, v)
		return
	}
	c.line("%s(%s, %s, %s, %s, %s);", c.pre.storeChecked(c.file.k, p.T), name, c.lens[p], idx, v, c.site(ir.SiteIndex, ix))
}

// opAssign is l op= r (rhs() when r is nil: ++ and --).
func (c *cfunc) opAssign(l ast.Expr, op token.Token, rhs func() string, r ...ast.Expr) {
	if c.reduceArrayOpAssign(l, op, rhs, r) {
		return
	}
	t := c.typeOf(l)
	operand := func() (string, ast.Expr) {
		if len(r) == 0 {
			return rhs(), nil
		}
		if op == token.SHL || op == token.SHR {
			return c.expr(r[0]), r[0]
		}
		return c.convertTo(r[0], t), r[0]
	}
	switch l := ast.Unparen(l).(type) {
	case *ast.Ident:
		name := c.names[c.info().Uses[l].(*types.Var)]
		v, re := operand()
		c.line("%s = %s;", name, c.binop(op, t, name, v, re))
	case *ast.IndexExpr:
		// A buffer's element, or a team array's (tested even where
		// proven, as teamStore says).
		var name, n string
		team := ir.TeamArrayOf(c.info(), c.f, l.X)
		if team != nil {
			name, n = c.names[team], fmt.Sprintf("%dL", c.f.Kernel.TeamArrays[team])
		} else {
			_, name, n = c.elemBuffer(l) // a buffer's, or a view's
		}
		c.checkedAt(l, n, team != nil, func(idx string) {
			v, re := operand()
			elem := name + "[" + idx + "]"
			if team != nil || !c.proven(l) {
				vt := t // a shift's count keeps its own type
				if op == token.SHL || op == token.SHR {
					vt = c.typeOf(re)
				}
				val := c.newTmp()
				c.line("%s %s = %s;", vt.C(), val, v)
				v = val
			}
			c.line("%s = %s;", elem, c.binop(op, t, elem, v, re))
		})
	}
}
