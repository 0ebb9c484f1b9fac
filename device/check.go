package device

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// IterationDims returns the number of dimensions k iterates over: k.Dims,
// or 1 when it is 0.
func (k *Kernel) IterationDims() int {
	if k.Dims <= 0 {
		return 1
	}
	return k.Dims
}

// NeedLen returns how many elements (bytes for an untyped buffer) buffer
// parameter i of k must hold for a launch over s, from the parameter's Len;
// scalar(j) is the argument of scalar parameter j, as Arg.Bits. It returns 0
// for an undeclared Len, and for a Len whose value is 0 or negative. The
// error says what in Len cannot be evaluated: a name that is not an
// integer scalar parameter, Shape.Teams left to the device, a value
// outside an int64 (or an int). NeedLen does not allocate unless it
// fails; runtimes call it before every launch.
func (k *Kernel) NeedLen(i int, s Shape, scalar func(j int) uint64) (int, error) {
	expr := k.Params[i].Len
	if expr == "" {
		return 0, nil
	}
	n, err := k.lenValue(expr, s, scalar)
	if err != nil {
		return 0, fmt.Errorf("Len %q: %w", expr, err)
	}
	if n <= 0 {
		return 0, nil
	}
	if uint64(n) > math.MaxInt {
		return 0, fmt.Errorf("Len %q: more than %d elements", expr, math.MaxInt)
	}
	return int(n), nil
}

// CheckBounds reports an error naming the first of k's Bounds whose value
// in a launch over s leaves an int64 (scalar as for NeedLen); nil when
// every one fits. It does not allocate unless it fails.
func (k *Kernel) CheckBounds(s Shape, scalar func(j int) uint64) error {
	for _, b := range k.Bounds {
		if _, err := k.lenValue(b, s, scalar); err != nil {
			if _, ok := err.(overflowError); ok {
				return fmt.Errorf("bound %s leaves an int64 with these arguments: Go's int would wrap there, and the kernel's dropped bounds checks assume it does not (Kernel.Bounds: bounds of its loops and slice expressions)", b)
			}
			return fmt.Errorf("bound %q: %w", b, err)
		}
	}
	return nil
}

// FitExtents sets the Size of launch shape s to k's points (Extents;
// scalar as for NeedLen): each dimension's Size becomes its extent. A
// kernel with Extents runs their points on any device whatever the Size
// (its device code strides over them and guards the rest, its Go image
// runs the Size's points clamped to them), so fitted, every device runs
// the same points, split alike among teams. Where an extent is 0 or less
// the kernel has no points and s stays as it is: the device code and the
// Go image run nothing. The error names extents whose points are more
// than an int counts; s is then unchanged. Nothing changes for a kernel
// without Extents. It does not allocate unless it fails.
func (k *Kernel) FitExtents(s *Shape, scalar func(j int) uint64) error {
	var size [3]int
	points := uint64(1)
	for d, j := range k.Extents {
		n := k.scalarInt(j, scalar(j))
		if n <= 0 {
			return nil
		}
		hi, lo := bits.Mul64(points, uint64(n))
		if hi != 0 || lo > math.MaxInt {
			return k.extentsErr(scalar)
		}
		points, size[d] = lo, int(n)
	}
	for d := range k.Extents {
		s.Size[d] = size[d]
	}
	return nil
}

// extentsErr says that k's points are more than an int counts.
func (k *Kernel) extentsErr(scalar func(j int) uint64) error {
	names := make([]string, len(k.Extents))
	values := make([]string, len(k.Extents))
	for d, j := range k.Extents {
		names[d] = k.Params[j].Name
		values[d] = strconv.FormatInt(k.scalarInt(j, scalar(j)), 10)
	}
	return fmt.Errorf("its points, %s = %s with these arguments (Kernel.Extents), are more than an int counts (%d)",
		strings.Join(names, " x "), strings.Join(values, " x "), math.MaxInt)
}

// scalarInt returns the value of integer scalar parameter j of k, whose
// argument's bits are b, as Go reads it.
func (k *Kernel) scalarInt(j int, b uint64) int64 {
	switch k.Params[j].Kind {
	case ParamInt32:
		return int64(int32(uint32(b)))
	case ParamUint32:
		return int64(uint32(b))
	}
	return int64(b)
}

// PointWork returns the work of one point of a launch of k over s (Work,
// evaluated as NeedLen evaluates a Len; scalar as there): at least 1;
// math.MaxInt64 where it is larger than an int64; 1 where Work is empty or
// cannot be evaluated otherwise, since it only weighs the points.
func (k *Kernel) PointWork(s Shape, scalar func(j int) uint64) int64 {
	if k.Work == "" {
		return 1
	}
	n, err := k.lenValue(k.Work, s, scalar)
	if o, ok := err.(overflowError); ok && o.positive {
		return math.MaxInt64
	}
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// lenValue evaluates a Len expression, a sum and difference of products
// (Param.Len), as Go evaluates it on int64s but for an overflow, which
// is an error. With scalar nil it only checks the expression (every
// parameter and shape term 1).
func (k *Kernel) lenValue(expr string, s Shape, scalar func(j int) uint64) (int64, error) {
	sum, sub := int64(0), false
	for rest := expr; ; {
		end := strings.IndexAny(rest, "+-")
		prod := rest
		if end >= 0 {
			prod = rest[:end]
		}
		p, err := k.lenProduct(prod, s, scalar)
		if o, ok := err.(overflowError); ok && sub {
			return 0, overflowError{!o.positive} // a product past an int64, subtracted
		}
		if err != nil {
			return 0, err
		}
		var ok bool
		if sub {
			sum, ok = subLen(sum, p)
		} else {
			sum, ok = addLen(sum, p)
		}
		if !ok {
			return 0, lenOverflow(p > 0 != sub)
		}
		if end < 0 {
			return sum, nil
		}
		sub = rest[end] == '-'
		rest = rest[end+1:]
	}
}

// lenProduct evaluates one product of a Len expression.
func (k *Kernel) lenProduct(prod string, s Shape, scalar func(j int) uint64) (int64, error) {
	n := int64(1)
	for rest := prod; ; {
		term, tail, more := strings.Cut(rest, "*")
		v, err := k.lenTerm(strings.TrimSpace(term), s, scalar)
		if err != nil {
			return 0, err
		}
		p, ok := mulLen(n, v)
		if !ok {
			return 0, lenOverflow((n < 0) == (v < 0))
		}
		n = p
		if !more {
			return n, nil
		}
		rest = tail
	}
}

// lenOverflow is the error of a Len whose value leaves an int64 (above
// when positive, below otherwise).
func lenOverflow(positive bool) error { return overflowError{positive} }

type overflowError struct{ positive bool }

func (e overflowError) Error() string {
	if e.positive {
		return fmt.Sprintf("more than %d elements", int64(math.MaxInt64))
	}
	return fmt.Sprintf("a value below %d", int64(math.MinInt64))
}

// addLen is a+b, and whether it fits an int64; subLen a-b.
func addLen(a, b int64) (int64, bool) {
	c := a + b
	return c, (c > a) == (b > 0)
}

func subLen(a, b int64) (int64, bool) {
	c := a - b
	return c, (c < a) == (b > 0)
}

// mulLen is a*b, and whether it fits an int64.
func mulLen(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
	neg := (a < 0) != (b < 0)
	switch {
	case a == math.MinInt64 || b == math.MinInt64:
		return a * b, a == 0 || b == 0 || a == 1 || b == 1
	case hi != 0 || lo > math.MaxInt64 && !(neg && lo == 1<<63):
		return 0, false
	case neg:
		return -int64(lo), true
	}
	return int64(lo), true
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// lenTerm evaluates one term of a Len expression. With scalar nil it only
// checks the term (values are 1).
func (k *Kernel) lenTerm(term string, s Shape, scalar func(j int) uint64) (int64, error) {
	if term == "" {
		return 0, fmt.Errorf("empty term; want a number, an integer scalar parameter, Shape.Size[d] or Shape.Teams")
	}
	if c := term[0]; c >= '0' && c <= '9' {
		v, err := strconv.ParseInt(term, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("term %q is not a whole number", term)
		}
		return v, nil
	}
	if strings.ContainsFunc(term, func(r rune) bool { return !isLenNameRune(r) }) {
		return 0, fmt.Errorf("term %q: a Len is a sum or difference (+, -) of products (*) of whole numbers, integer scalar parameters, Shape.Size[d] and Shape.Teams, without parentheses", term)
	}
	if strings.HasPrefix(term, "Shape.") {
		switch term {
		case "Shape.Size[0]", "Shape.Size[1]", "Shape.Size[2]":
			return int64(max(s.Size[term[11]-'0'], 1)), nil
		case "Shape.Teams":
			if scalar == nil {
				return 1, nil
			}
			if s.Teams <= 0 {
				return 0, fmt.Errorf("uses Shape.Teams, which the launch leaves to the device (0); set Shape.Teams")
			}
			return int64(s.Teams), nil
		}
		return 0, fmt.Errorf("term %q: the shape terms are Shape.Size[0], Shape.Size[1], Shape.Size[2] and Shape.Teams", term)
	}
	for j := range k.Params {
		p := &k.Params[j]
		if p.Name != term {
			continue
		}
		if scalar == nil {
			if p.Kind != ParamInt32 && p.Kind != ParamUint32 && p.Kind != ParamInt64 {
				break
			}
			return 1, nil
		}
		b := scalar(j)
		switch p.Kind {
		case ParamInt32:
			return int64(int32(uint32(b))), nil
		case ParamUint32:
			return int64(uint32(b)), nil
		case ParamInt64:
			return int64(b), nil
		}
		break
	}
	return 0, fmt.Errorf("%q is not an integer scalar parameter (int32, uint32 or int64) of kernel %s", term, k.Name)
}

// Check reports the first mistake in k's declaration: no name, parameters
// without a name or with the same name, an unknown kind, an element type
// or Len on a scalar, an element type that is not a number kind, a Len,
// Work or Bounds that cannot be evaluated, Extents not one integer scalar
// parameter per dimension, Dims outside 0..3, a negative MaxThreads. It
// does not look at the images. devicetest checks every kernel it runs
// with it, and package target checks each kernel at its first construct
// (and again at every use of a kernel that failed), refusing the
// construct before any device work.
func (k *Kernel) Check() error {
	if k.Name == "" {
		return fmt.Errorf("kernel has no name")
	}
	if k.Dims < 0 || k.Dims > 3 {
		return fmt.Errorf("kernel %s: Dims %d: want 1 to 3 (0 means 1)", k.Name, k.Dims)
	}
	if k.MaxThreads < 0 {
		return fmt.Errorf("kernel %s: MaxThreads %d is negative", k.Name, k.MaxThreads)
	}
	for _, n := range k.Needs {
		switch n.Kind {
		case NeedFP64, NeedInt64Atomics:
			if n.Amount != 0 {
				return fmt.Errorf("kernel %s: Needs: %v takes no Amount (%d)", k.Name, n.Kind, n.Amount)
			}
		case NeedLocalMem, NeedTeamSize:
			if n.Amount <= 0 {
				return fmt.Errorf("kernel %s: Needs: %v of %d: want a positive Amount", k.Name, n.Kind, n.Amount)
			}
		default:
			return fmt.Errorf("kernel %s: Needs: unknown kind %v; want NeedFP64, NeedInt64Atomics, NeedLocalMem or NeedTeamSize", k.Name, n.Kind)
		}
	}
	if t := k.TeamSize(); t > 0 && k.MaxThreads > 0 && t > k.MaxThreads {
		return fmt.Errorf("kernel %s: Needs teams of %d threads, more than its MaxThreads %d", k.Name, t, k.MaxThreads)
	}
	for i := range k.Params {
		p := &k.Params[i]
		if p.Name == "" {
			return fmt.Errorf("kernel %s parameter %d has no name", k.Name, i)
		}
		for j := range i {
			if k.Params[j].Name == p.Name {
				return fmt.Errorf("kernel %s: parameters %d and %d are both named %s", k.Name, j, i, p.Name)
			}
		}
		switch {
		case p.Kind < ParamBuffer || p.Kind > ParamFloat64 && !p.Kind.ElemOnly():
			return fmt.Errorf("kernel %s parameter %s: unknown kind %v", k.Name, p.Name, p.Kind)
		case p.Kind.ElemOnly():
			return fmt.Errorf("kernel %s parameter %s: kind %v is a buffer element type only; pass a scalar of it as int32, uint32 or int64 and convert it in the device code", k.Name, p.Name, p.Kind)
		case p.Kind != ParamBuffer && (p.Elem != 0 || p.Len != ""):
			return fmt.Errorf("kernel %s parameter %s: kind %v is a scalar; Elem and Len are for buffers", k.Name, p.Name, p.Kind)
		case p.Kind == ParamBuffer && (p.Elem == ParamBuffer || p.Elem > ParamFloat64 && !p.Elem.ElemOnly()):
			return fmt.Errorf("kernel %s parameter %s: element type %v; want int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64 or 0 (untyped)", k.Name, p.Name, p.Elem)
		}
		if p.Len == "" {
			continue
		}
		if _, err := k.lenValue(p.Len, Shape{}, nil); err != nil {
			return fmt.Errorf("kernel %s parameter %s: Len %q: %w", k.Name, p.Name, p.Len, err)
		}
	}
	if k.Work != "" {
		if _, err := k.lenValue(k.Work, Shape{}, nil); err != nil {
			return fmt.Errorf("kernel %s: Work %q: %w", k.Name, k.Work, err)
		}
	}
	for _, b := range k.Bounds {
		if _, err := k.lenValue(b, Shape{}, nil); err != nil {
			return fmt.Errorf("kernel %s: Bounds %q: %w", k.Name, b, err)
		}
	}
	if k.Extents != nil && len(k.Extents) != k.IterationDims() {
		return fmt.Errorf("kernel %s: %d Extents for %d dimensions (Dims): want one per dimension", k.Name, len(k.Extents), k.IterationDims())
	}
	for d, j := range k.Extents {
		if j < 0 || j >= len(k.Params) {
			return fmt.Errorf("kernel %s: Extents[%d] is %d: want the index of a parameter (0 to %d)", k.Name, d, j, len(k.Params)-1)
		}
		if p := k.Params[j]; p.Kind != ParamInt32 && p.Kind != ParamUint32 && p.Kind != ParamInt64 {
			return fmt.Errorf("kernel %s: Extents[%d] is parameter %d (%s), a %v; an extent is an integer scalar parameter (int32, uint32 or int64)", k.Name, d, j, p.Name, p.Kind)
		}
	}
	return nil
}

// isLenNameRune reports whether r may be in a term of a Len: a letter,
// digit or _ of a name or number, or the . and brackets of Shape.Size[d].
func isLenNameRune(r rune) bool {
	return r == '_' || r == '.' || r == '[' || r == ']' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r >= 0x80
}
