package plan

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// inRange proves 0 <= p < q from the ranges of e, by reading p as a
// mixed-radix number: p = (v + c) + R*p' where the digit v + c (v a
// variable, c p's constant term or 0) lies in [0, R), R divides q, and
// 0 <= p' < q/R.
func (pr *prover) inRange(p, q poly, e env) bool {
	if p.overflowed() || q.overflowed() {
		return false
	}
	// A length with a positive constant term (len(rowPtr)=rows+1): 0 <=
	// p < q where 0 <= p-d < q-qc for a d in [0, qc] (0, p's constant
	// term, qc).
	if qc := q[""]; qc > 0 && len(q) > 1 {
		qm := q.Add(ConstPoly(qc), -1)
		for _, d := range []int64{0, p[""], qc} {
			if d >= 0 && d <= qc && pr.inRange(p.Add(ConstPoly(d), -1), qm, e) {
				return true
			}
		}
	}
	if len(p) == 0 {
		return pr.positive(q)
	}
	consts := []int64{0}
	c := p[""]
	if c != 0 {
		consts = append(consts, c)
	}
	// A constant digit: p = c + R*p' with 0 <= c < R, R the constant
	// factor of q (out[9*i+3] of a buffer of 9*n).
	if qc, ok := constFactor(q); ok && qc > 1 && c >= 0 && c < qc {
		p2, ok1 := p.Add(ConstPoly(c), -1).divide(ConstPoly(qc))
		q2, ok2 := q.divide(ConstPoly(qc))
		if ok1 && ok2 && pr.inRange(p2, q2, e) {
			return true
		}
	}
	for m, coef := range p {
		r, ok := e[m]
		if coef != 1 || !ok {
			continue
		}
		for _, c := range consts {
			if r.lo+c < 0 {
				continue
			}
			digitHi := r.hi.Add(ConstPoly(c), 1)
			rest := p.Add(VarPoly(m), -1).Add(ConstPoly(c), -1)
			for _, radix := range append([]poly{pr.ranges[m].hi, r.hi, q}, varFactors(q)...) {
				if !pr.digitBelow(digitHi, radix, e) {
					continue // the digit may reach the radix
				}
				p2, ok1 := rest.divide(radix)
				q2, ok2 := q.divide(radix)
				if ok1 && ok2 && pr.inRange(p2, q2, e) {
					return true
				}
			}
		}
	}
	return false
}

// digitBelow reports whether hi <= radix: their difference is a constant at
// least 0, or is once a variable v of hi (coefficient 1) is taken at
// its largest, its range's end minus 1 (j <= i, with i below n, makes
// j's end i+1, at most n).
func (pr *prover) digitBelow(hi, radix poly, e env) bool {
	if slack, ok := ConstOf(radix.Add(hi, -1)); ok {
		return slack >= 0
	}
	for m, coef := range hi {
		r, ok := e[m]
		if m == "" || coef != 1 || !ok {
			continue
		}
		top := hi.Add(VarPoly(m), -1).Add(r.hi, 1).Add(ConstPoly(1), -1)
		if slack, ok := ConstOf(radix.Add(top, -1)); ok && slack >= 0 {
			return true
		}
	}
	return false
}

// varFactors are the variables of q, a single monomial, each as a poly:
// the radixes of a row-major index whose digits run over less than their
// extent (j in [1, n-1) in i*n + j, with a buffer of n*n).
func varFactors(q poly) []poly {
	if len(q) != 1 {
		return nil
	}
	var out []poly
	for m := range q {
		if m == "" {
			return nil
		}
		vs := strings.Split(m, "*") // sorted: a repeated variable is adjacent
		for i, v := range vs {
			if i == 0 || vs[i-1] != v {
				out = append(out, VarPoly(v))
			}
		}
	}
	return out
}

// positive reports whether q is at least 1 in a running kernel: a positive
// constant times extents.
func (pr *prover) positive(q poly) bool {
	if len(q) != 1 {
		return false
	}
	for m, c := range q {
		if c <= 0 {
			return false
		}
		if m == "" {
			return true
		}
		for _, v := range strings.Split(m, "*") {
			if !pr.extent[v] {
				return false
			}
		}
	}
	return true
}

// below reports whether integer expression e lies in [0, n) whatever its
// operands: a value of an unsigned type narrower than n's range (a uint8
// indexes 256 elements), x & c or c & x for a constant 0 <= c < n, x % c
// for an unsigned x and a constant 0 < c <= n, and conversions of these
// that keep their value; through locals defined once.
func (pr *prover) below(e ast.Expr, n int64) bool {
	info := pr.g.P.Info
	if n <= 0 {
		return false
	}
	if tv := info.Types[e]; tv.Value != nil {
		v, ok := constant.Int64Val(constant.ToInt(tv.Value))
		return ok && v >= 0 && v < n
	}
	t, _ := ir.ScalarOf(info.TypeOf(e))
	if t.IsInt() && !t.Signed() && t.Bits() < 63 && int64(1)<<t.Bits() <= n {
		return true
	}
	constArg := func(x ast.Expr) (int64, bool) {
		tv := info.Types[x]
		if tv.Value == nil {
			return 0, false
		}
		return constant.Int64Val(constant.ToInt(tv.Value))
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return pr.below(e.X, n)
	case *ast.Ident:
		if v, _ := info.Uses[e].(*types.Var); v != nil {
			if d, ok := pr.defs[v]; ok {
				delete(pr.defs, v) // no cycles
				ok := pr.below(d, n)
				pr.defs[v] = d
				return ok
			}
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.AND:
			for _, x := range []ast.Expr{e.X, e.Y} {
				if c, ok := constArg(x); ok && c >= 0 && c < n {
					return true
				}
			}
			return pr.below(e.X, n) || pr.below(e.Y, n)
		case token.REM:
			xt, _ := ir.ScalarOf(info.TypeOf(e.X))
			c, ok := constArg(e.Y)
			return ok && xt.IsInt() && !xt.Signed() && c > 0 && c <= n
		}
	case *ast.CallExpr:
		// A conversion keeps a value in [0, n) when the type holds n-1.
		if tv := info.Types[e.Fun]; tv.IsType() && len(e.Args) == 1 {
			to, ok := ir.ScalarOf(tv.Type)
			if !ok || !to.IsInt() {
				return false
			}
			bits := to.Bits()
			if to.Signed() {
				bits--
			}
			return (bits >= 63 || n-1 < int64(1)<<bits) && pr.below(e.Args[0], n)
		}
	}
	return false
}
