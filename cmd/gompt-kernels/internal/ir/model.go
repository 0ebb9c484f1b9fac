// Package ir is the kernel compiler's model, shared by its phases (see
// ../doc.go): the kernels and helpers load finds, their parameters and
// calls, the plan plan makes of each kernel, the errors, and the facts of
// the subset every phase agrees on.
package ir

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// Scalar is one of the basic types a kernel computes with.
type Scalar types.BasicKind

func ScalarOf(t types.Type) (Scalar, bool) {
	b, ok := t.(*types.Basic) // not Underlying: a defined type is not in the subset
	if !ok {
		return 0, false
	}
	switch b.Kind() {
	case types.Bool, types.Int, types.Int8, types.Int16, types.Int32, types.Int64,
		types.Uint, types.Uint8, types.Uint16, types.Uint32, types.Uint64, types.Float32, types.Float64:
		return Scalar(b.Kind()), true
	case types.UntypedBool:
		return Scalar(types.Bool), true
	case types.UntypedInt, types.UntypedRune:
		return Scalar(types.Int), true
	case types.UntypedFloat:
		return Scalar(types.Float64), true
	}
	return 0, false
}

func (s Scalar) Kind() types.BasicKind { return types.BasicKind(s) }

func (s Scalar) GoName() string { return types.Typ[s.Kind()].Name() }

func (s Scalar) IsBool() bool { return s.Kind() == types.Bool }

func (s Scalar) IsFloat() bool { return s.Kind() == types.Float32 || s.Kind() == types.Float64 }

func (s Scalar) IsInt() bool { return !s.IsBool() && !s.IsFloat() }

func (s Scalar) Signed() bool {
	switch s.Kind() {
	case types.Int, types.Int8, types.Int16, types.Int32, types.Int64:
		return true
	}
	return false
}

// Bits is the width of s (1 for bool).
func (s Scalar) Bits() int {
	switch s.Kind() {
	case types.Int8, types.Uint8, types.Bool:
		return 8
	case types.Int16, types.Uint16:
		return 16
	case types.Int32, types.Uint32, types.Float32:
		return 32
	}
	return 64
}

// C is s's OpenCL C type.
func (s Scalar) C() string {
	switch s.Kind() {
	case types.Bool:
		return "bool"
	case types.Int8:
		return "char"
	case types.Uint8:
		return "uchar"
	case types.Int16:
		return "short"
	case types.Uint16:
		return "ushort"
	case types.Int32:
		return "int"
	case types.Uint32:
		return "uint"
	case types.Int, types.Int64:
		return "long"
	case types.Uint, types.Uint64:
		return "ulong"
	case types.Float32:
		return "float"
	}
	return "double"
}

// CMem is s's type in device memory: bool is a byte there, as in Go.
func (s Scalar) CMem() string {
	if s.IsBool() {
		return "uchar"
	}
	return s.C()
}

// CUnsigned is the unsigned C type in which s's arithmetic wraps as Go's:
// uint for types up to 32 bits (C promotes narrower ones to int), ulong for
// 64-bit ones.
func (s Scalar) CUnsigned() string {
	if s.Bits() == 64 {
		return "ulong"
	}
	return "uint"
}

// ParamKind is the device.ParamKind a scalar parameter of s is passed as,
// and elemKind the one of a buffer of s.
func (s Scalar) ParamKind() string {
	switch s.Kind() {
	case types.Bool, types.Int8, types.Int16, types.Int32:
		return "ParamInt32"
	case types.Uint8, types.Uint16, types.Uint32:
		return "ParamUint32"
	case types.Float32:
		return "ParamFloat32"
	case types.Float64:
		return "ParamFloat64"
	}
	return "ParamInt64"
}

// CParam is the C type of a scalar parameter of s in a kernel's entry.
func (s Scalar) CParam() string {
	switch s.ParamKind() {
	case "ParamInt32":
		return "int"
	case "ParamUint32":
		return "uint"
	case "ParamFloat32":
		return "float"
	case "ParamFloat64":
		return "double"
	}
	return "long"
}

func (s Scalar) ElemKind() string {
	switch s.Kind() {
	case types.Int8:
		return "ParamInt8"
	case types.Uint8:
		return "ParamUint8"
	case types.Int16:
		return "ParamInt16"
	case types.Uint16:
		return "ParamUint16"
	case types.Int32:
		return "ParamInt32"
	case types.Uint32:
		return "ParamUint32"
	case types.Int, types.Int64:
		return "ParamInt64"
	case types.Uint, types.Uint64:
		return "ParamUint64"
	case types.Float32:
		return "ParamFloat32"
	case types.Float64:
		return "ParamFloat64"
	}
	return ""
}

// Param is one parameter of a kernel or helper.
type Param struct {
	Obj   *types.Var
	Name  string
	T     Scalar // the scalar, or a slice's element type
	Slice bool
	Pos   token.Pos

	Read, Written bool // a slice's elements, here or in a helper it is passed to
}

// Fn is a function the generator translates: a kernel or a //gompt:func
// helper.
type Fn struct {
	Decl   *ast.FuncDecl
	Obj    *types.Func
	Name   string
	Params []*Param
	Result *Scalar // nil when it returns nothing
	Kernel *Kernel // nil for a helper
	Calls  []*Call // calls of helpers in the body, in source order
	Approx bool    // calls a math function with no correctly rounded device counterpart (or a helper that does)
	Atomic bool    // calls a sync/atomic function (atomics.go)

	Assigned map[*types.Var]bool // variables assigned after their declaration
	ByObj    map[*types.Var]*Param
	Views    map[*types.Var]*View // its views (v := buf[lo:hi], view.go)
}

type Call struct {
	Pos    token.Pos
	Callee *Fn
	Args   []ast.Expr
}

// Kernel is a //gompt:kernel function.
type Kernel struct {
	*Fn
	DirPos  token.Pos
	Name    string // device.Kernel.Name
	VarName string
	RunName string
	Entry   string // the OpenCL C and PTX entry point
	Dims    []*Param
	Index   []*Param // the point's indices: params[:len(dims)]
	Reduce  string   // "", "+", "*", "min", "max"
	Lens    map[*Param]LenExpr
	Work    LenExpr           // a point's work (device.Kernel.Work), planned by plan.Work; nil for none
	Bounds  []LenExpr         // bounds of loops and slice expressions the proofs need to fit an int64 (device.Kernel.Bounds), planned by the prover
	Maps    map[*Param]string // "To", "From" or "ToFrom"
	Proven  map[ast.Expr]bool // index expressions proven in range
	Nocheck bool              // check=off: no run-time checks
	Sites   []Site            // the run-time checks of its device code (device.Kernel.Faults), planned by plan.Sites
	SiteOf  map[SiteKey]int   // and each one's number (its index in Sites, plus one), by its node

	// A team kernel (team=N, team.go): N threads per team, the thread's
	// index parameter, and the team-local arrays (their lengths).
	Team       int
	Thread     *Param
	TeamArrays map[*types.Var]int
	Plan       *TeamPlan

	// reduce(buf)=OP (reducearray.go): buffers the points combine into
	// with OP (+, *, min or max), through a private copy per team; their
	// constant lengths.
	ReduceArrays map[*Param]string
	ReduceLen    map[*Param]int

	// Needs is what its device code needs of a device beyond what every
	// device gives (device.Kernel.Needs), planned by plan.Needs (plan/needs.go)
	// once the checks pass; the emitters only read it.
	Needs needList

	// The Go image's plan (plan.Host): lanes for a body with a loop
	// around work that depends on the point (Lanes, plan/lanes.go), else
	// the buffers resliced to the range's end (Resliced, plan/reslice.go),
	// a stencil's split at its boundary (Split, plan/split.go) and the rows
	// of the buffers its loops walk (Rows, plan/rows.go).
	Lanes    *Lockstep
	Resliced map[*Param]bool
	Split    *Split
	Rows     *Rows // of the loops running the whole body (plan/rows.go)
	// PointJams are the loops of a point's image whose turns run Jam at
	// a time over an inner loop's elements (plan/pointjam.go).
	PointJams map[*ast.ForStmt]*PointJam
	// SumJams are the loops of a point's image whose turns run Jam at a
	// time around one inner loop (plan/sumjam.go).
	SumJams map[*ast.ForStmt]*SumJam
	// LoopRows are the rows of a point's counted loops, by loop
	// (plan/looprows.go).
	LoopRows map[*ast.ForStmt]*Rows

	// Wide is the number of neighbouring points one work-item of a CPU
	// OpenCL device runs together, statement by statement, where the
	// lanes plan applies and the device code makes no checks
	// (plan/wide.go); 0 for one point a work-item.
	Wide int

	// Launch is what its launchers do beyond mapping and launching:
	// parameters they compute (arg(PARAM)=FUNC), its variants
	// (//gompt:variant); variant.go. nil for neither.
	Launch *launchPlan
}

// Site is one run-time check of a kernel's device code: its kind (the
// device.FaultKind constant's name) and source position ("heat.go:14").
type Site struct {
	Kind, Pos string
	Unsigned  bool // the value checked is of an unsigned type (device.FaultSite.Unsigned)
}

// SiteKey is a run-time check of a kernel's device code: its kind and the
// node it checks (an index expression, a divisor, a slice expression).
type SiteKey struct {
	Kind string
	Node ast.Node
}

// The kinds of a slice expression's checks (device.FaultSliceCap...), in
// the order Go's run time makes them.
const (
	SiteSliceCap    = "FaultSliceCap"    // [:hi] with capacity c
	SiteSliceOrder  = "FaultSliceOrder"  // [lo:hi]
	SiteSlice3Cap   = "FaultSlice3Cap"   // [::max] with capacity c
	SiteSlice3Max   = "FaultSlice3Max"   // [:hi:max]
	SiteSlice3Order = "FaultSlice3Order" // [lo:hi:]
)

// Helpers lists the helpers f calls, directly or not, each once, callees
// before their callers: the functions of its device code besides f.
func (f *Fn) Helpers() []*Fn {
	var out []*Fn
	seen := map[*Fn]bool{}
	var visit func(f *Fn)
	visit = func(f *Fn) {
		for _, c := range f.Calls {
			if !seen[c.Callee] {
				seen[c.Callee] = true
				visit(c.Callee)
				out = append(out, c.Callee)
			}
		}
	}
	visit(f)
	return out
}

const (
	SiteIndex  = "FaultIndex"
	SiteDivide = "FaultDivide"
)

// Args are the kernel's parameters less the point's indices (and a team
// kernel's thread index): the device.Kernel's Params, in order (a
// reduction adds "partial").
func (k *Kernel) Args() []*Param {
	n := len(k.Dims)
	if k.Thread != nil {
		n++
	}
	return k.Params[n:]
}

// LenExpr is a buffer's length (len(buf)=, or the product of the
// extents): a sum and difference of products of terms, each a whole number
// or the name of a signed integer parameter, with Go's precedence: the
// grammar of device.Param.Len. Its value is Go's on int64s, the length 0
// where it is 0 or negative.
type LenExpr []LenProd

// LenProd is one product of a lenExpr, subtracted when sub.
type LenProd struct {
	Sub   bool
	Terms []string
}

// Product returns e's terms when e is one product (not subtracted).
func (e LenExpr) Product() ([]string, bool) {
	if len(e) != 1 || e[0].Sub {
		return nil, false
	}
	return e[0].Terms, true
}

// Format writes e with each term as term(t), the terms of a product
// joined by mul, and the products by plus and minus.
func (e LenExpr) Format(term func(string) string, mul, plus, minus string) string {
	var sb strings.Builder
	for i, p := range e {
		switch {
		case p.Sub:
			sb.WriteString(minus)
		case i > 0:
			sb.WriteString(plus)
		}
		for j, t := range p.Terms {
			if j > 0 {
				sb.WriteString(mul)
			}
			sb.WriteString(term(t))
		}
	}
	return sb.String()
}

// LenString is buffer p's Param.Len, its parameters named by names (the
// OpenCL C entry's, entryParams).
func (k *Kernel) LenString(p *Param, names map[*Param]string) string {
	return k.Lens[p].Format(func(t string) string {
		if q := ParamNamed(k, t); q != nil {
			return names[q]
		}
		return t
	}, "*", "+", "-")
}

// WorkString is k's device.Kernel.Work, its parameters named by names
// (as LenString's).
func (k *Kernel) WorkString(names map[*Param]string) string { return k.ExprString(k.Work, names) }

// ExprString writes e, an expression of Len's form over k's parameters,
// its parameters named by names (as LenString's).
func (k *Kernel) ExprString(e LenExpr, names map[*Param]string) string {
	return e.Format(func(t string) string {
		if q := ParamNamed(k, t); q != nil {
			return names[q]
		}
		return t
	}, "*", "+", "-")
}

// ErrList collects positioned errors, reported sorted by position.
type ErrList struct {
	Fset *token.FileSet
	Cwd  string
	Errs []posErr
}

type posErr struct {
	pos token.Position
	msg string
}

func (e *ErrList) Add(pos token.Pos, format string, args ...any) {
	e.Errs = append(e.Errs, posErr{e.Fset.Position(pos), fmt.Sprintf(format, args...)})
}

// Unsupported reports construct, at pos, as outside the subset.
func (e *ErrList) Unsupported(pos token.Pos, construct, hint string) {
	if hint != "" {
		e.Add(pos, "%s is not supported in a gompt kernel (%s)", construct, hint)
	} else {
		e.Add(pos, "%s is not supported in a gompt kernel", construct)
	}
}

func (e *ErrList) Error() string {
	sort.SliceStable(e.Errs, func(i, j int) bool {
		a, b := e.Errs[i].pos, e.Errs[j].pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	var sb strings.Builder
	for i, err := range e.Errs {
		if i > 0 {
			sb.WriteByte('\n')
		}
		pos := err.pos
		pos.Filename = relPath(e.Cwd, pos.Filename)
		fmt.Fprintf(&sb, "%s: %s", pos, err.msg)
	}
	return sb.String()
}
