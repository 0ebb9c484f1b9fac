package plan

import (
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// A poly is a polynomial with integer coefficients over a kernel's int
// variables: monomial (the sorted names of its variables joined by "*",
// "" for the constant term) to coefficient. The prover models int
// expressions as polys: int arithmetic wraps modulo 2^64, so two
// expressions equal as polys are equal as ints. Coefficients are int64s:
// an Add or mul whose coefficient would leave one gives the overflowed
// poly (one monomial, overflowMono, a variable no kernel has and no
// range holds), which every proof takes as unknown.
type poly map[string]int64

// overflowMono is the monomial of a poly whose coefficients overflowed.
const overflowMono = "#overflow"

// overflowed reports whether p's coefficients left an int64 on the way.
func (p poly) overflowed() bool {
	_, bad := p[overflowMono]
	return bad
}

var overflowPoly = poly{overflowMono: 1}

func (p poly) Add(q poly, sign int64) poly {
	if p.overflowed() || q.overflowed() || sign != 1 && sign != -1 {
		return overflowPoly
	}
	r := poly{}
	for m, c := range p {
		r[m] = c
	}
	for m, c := range q {
		sum, ok := addLen(r[m], c, sign)
		if !ok {
			return overflowPoly
		}
		r[m] = sum
	}
	for m, c := range r {
		if c == 0 {
			delete(r, m)
		}
	}
	return r
}

// addLen is a + sign*b (sign 1 or -1), and whether it fits an int64.
func addLen(a, b, sign int64) (int64, bool) {
	if sign < 0 {
		if b == math.MinInt64 {
			return 0, false
		}
		b = -b
	}
	c := a + b
	return c, (c > a) == (b > 0) || b == 0
}

func (p poly) mul(q poly) poly {
	if p.overflowed() || q.overflowed() {
		return overflowPoly
	}
	r := poly{}
	for m1, c1 := range p {
		for m2, c2 := range q {
			hi, lo := bits.Mul64(uint64(absInt(c1)), uint64(absInt(c2)))
			if hi != 0 || lo > math.MaxInt64 || c1 == math.MinInt64 || c2 == math.MinInt64 {
				return overflowPoly
			}
			prod := int64(lo)
			if (c1 < 0) != (c2 < 0) {
				prod = -prod
			}
			m := monoMul(m1, m2)
			sum, ok := addLen(r[m], prod, 1)
			if !ok {
				return overflowPoly
			}
			r[m] = sum
		}
	}
	for m, c := range r {
		if c == 0 {
			delete(r, m)
		}
	}
	return r
}

func absInt(c int64) int64 {
	if c < 0 {
		return -c
	}
	return c
}

func monoMul(a, b string) string {
	var vs []string
	if a != "" {
		vs = strings.Split(a, "*")
	}
	if b != "" {
		vs = append(vs, strings.Split(b, "*")...)
	}
	sort.Strings(vs)
	return strings.Join(vs, "*")
}

func (p poly) Equal(q poly) bool { return len(p.Add(q, -1)) == 0 }

func VarPoly(name string) poly { return poly{name: 1} }

func ConstPoly(c int64) poly {
	if c == 0 {
		return poly{}
	}
	return poly{"": c}
}

// divide returns p / d for a single-monomial d with coefficient c > 0,
// when every term of p is a multiple of d.
func (p poly) divide(d poly) (poly, bool) {
	if len(d) != 1 || p.overflowed() || d.overflowed() {
		return nil, false
	}
	var dm string
	var dc int64
	for m, c := range d {
		dm, dc = m, c
	}
	if dc <= 0 {
		return nil, false
	}
	var dvars []string
	if dm != "" {
		dvars = strings.Split(dm, "*")
	}
	r := poly{}
	for m, c := range p {
		if c%dc != 0 {
			return nil, false
		}
		var vs []string
		if m != "" {
			vs = strings.Split(m, "*")
		}
		for _, dv := range dvars {
			i := indexOf(vs, dv)
			if i < 0 {
				return nil, false
			}
			vs = append(vs[:i:i], vs[i+1:]...)
		}
		m := strings.Join(vs, "*")
		sum, ok := addLen(r[m], c/dc, 1)
		if !ok {
			return nil, false
		}
		r[m] = sum
	}
	return r, !r.overflowed()
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// ConstOf is p's value when p is a constant.
func ConstOf(p poly) (int64, bool) {
	switch len(p) {
	case 0:
		return 0, true
	case 1:
		c, ok := p[""]
		return c, ok
	}
	return 0, false
}

// constFactor is the constant coefficient of q, a single monomial.
func constFactor(q poly) (int64, bool) {
	if len(q) != 1 {
		return 0, false
	}
	for _, c := range q {
		return c, c > 0
	}
	return 0, false
}

// String writes p as its sorted monomials with their coefficients
// ("-1+1*p:n"), one text per poly: a key for sets of polys.
func (p poly) String() string {
	var sb strings.Builder
	for i, m := range sortedMonos(p) {
		if i > 0 {
			sb.WriteByte('+')
		}
		sb.WriteString(strconv.FormatInt(p[m], 10))
		if m != "" {
			sb.WriteByte('*')
			sb.WriteString(m)
		}
	}
	return sb.String()
}
