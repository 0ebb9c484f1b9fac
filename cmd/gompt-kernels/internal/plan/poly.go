package plan

import (
	"sort"
	"strconv"
	"strings"
)

// A poly is a polynomial with integer coefficients over a kernel's int
// variables: monomial (the sorted names of its variables joined by "*",
// "" for the constant term) to coefficient. The prover models int
// expressions as polys: int arithmetic wraps modulo 2^64, so two
// expressions equal as polys are equal as ints.
type poly map[string]int64

func (p poly) Add(q poly, sign int64) poly {
	r := poly{}
	for m, c := range p {
		r[m] += c
	}
	for m, c := range q {
		r[m] += sign * c
	}
	for m, c := range r {
		if c == 0 {
			delete(r, m)
		}
	}
	return r
}

func (p poly) mul(q poly) poly {
	r := poly{}
	for m1, c1 := range p {
		for m2, c2 := range q {
			r[monoMul(m1, m2)] += c1 * c2
		}
	}
	for m, c := range r {
		if c == 0 {
			delete(r, m)
		}
	}
	return r
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
	if len(d) != 1 {
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
		r[strings.Join(vs, "*")] += c / dc
	}
	return r, true
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
