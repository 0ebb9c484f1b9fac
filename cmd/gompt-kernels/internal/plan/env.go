package plan

import (
	"go/ast"
	"go/token"
	"go/types"
	"math"
)

// vrange is what the prover knows of an int variable: lo <= v < hi.
type vrange struct {
	lo int64
	hi poly
}

// env is the ranges in force at a point of the body: the variables'
// declared ranges narrowed by the conditions of the branches taken.
type env map[string]vrange

func (e env) with(name string, r vrange) env {
	out := make(env, len(e)+1)
	for k, v := range e {
		out[k] = v
	}
	out[name] = r
	return out
}

// refine narrows e by cond being truth: the conjuncts of a true &&, the
// disjuncts of a false ||, each a comparison of a ranged variable with a
// poly.
func (pr *prover) refine(e env, cond ast.Expr, truth bool) env {
	switch c := ast.Unparen(cond).(type) {
	case *ast.BinaryExpr:
		switch {
		case c.Op == token.LAND && truth, c.Op == token.LOR && !truth:
			return pr.refine(pr.refine(e, c.X, truth), c.Y, truth)
		case c.Op == token.LAND || c.Op == token.LOR:
			return e
		}
		return pr.atom(e, c, truth)
	case *ast.UnaryExpr:
		if c.Op == token.NOT {
			return pr.refine(e, c.X, !truth)
		}
	}
	return e
}

var (
	FlipOp   = map[token.Token]token.Token{token.LSS: token.GTR, token.GTR: token.LSS, token.LEQ: token.GEQ, token.GEQ: token.LEQ, token.EQL: token.EQL, token.NEQ: token.NEQ}
	negateOp = map[token.Token]token.Token{token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR, token.EQL: token.NEQ, token.NEQ: token.EQL}
)

// atom narrows e by comparison c being truth.
func (pr *prover) atom(e env, c *ast.BinaryExpr, truth bool) env {
	op, ok := FlipOp[c.Op]
	if !ok {
		return e
	}
	op = c.Op
	name, other := pr.rangedVar(c.X, e), c.Y
	if name == "" {
		name, other, op = pr.rangedVar(c.Y, e), c.X, FlipOp[c.Op]
	}
	if name == "" {
		return e
	}
	if !truth {
		op = negateOp[op]
	}
	val, ok := pr.Poly(other)
	if !ok {
		return e
	}
	r := e[name]
	c0, isConst := ConstOf(val)
	// le reports whether a <= b, known from their difference.
	le := func(a, b poly) bool {
		d, ok := ConstOf(b.Add(a, -1))
		return ok && d >= 0
	}
	switch op {
	case token.NEQ:
		if isConst && c0 == r.lo && c0 < math.MaxInt64 {
			r.lo++
		} else if val.Equal(r.hi.Add(ConstPoly(1), -1)) {
			r.hi = val
		}
	case token.EQL:
		if isConst && c0 >= r.lo && c0 < math.MaxInt64 {
			r.lo = c0
			if h := ConstPoly(c0 + 1); le(h, r.hi) {
				r.hi = h
			}
		}
	case token.LSS, token.LEQ:
		if op == token.LEQ {
			val = val.Add(ConstPoly(1), 1)
		}
		if le(val, r.hi) {
			r.hi = val
		}
	case token.GTR, token.GEQ:
		if op == token.GTR {
			if c0 == math.MaxInt64 {
				break // j > MaxInt: never true
			}
			c0++
		}
		if isConst && c0 > r.lo {
			r.lo = c0
		}
	}
	return e.with(name, r)
}

// rangedVar is the name of the ranged variable x is, or "".
func (pr *prover) rangedVar(x ast.Expr, e env) string {
	id, ok := ast.Unparen(x).(*ast.Ident)
	if !ok {
		return ""
	}
	v, _ := pr.g.P.Info.Uses[id].(*types.Var)
	name, ok := pr.Vars[v]
	if _, ranged := e[name]; !ok || !ranged {
		return ""
	}
	return name
}
