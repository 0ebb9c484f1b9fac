package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// scalar is one of the basic types a kernel computes with.
type scalar types.BasicKind

func scalarOf(t types.Type) (scalar, bool) {
	b, ok := t.(*types.Basic) // not Underlying: a defined type is not in the subset
	if !ok {
		return 0, false
	}
	switch b.Kind() {
	case types.Bool, types.Int, types.Int8, types.Int16, types.Int32, types.Int64,
		types.Uint, types.Uint8, types.Uint16, types.Uint32, types.Uint64, types.Float32, types.Float64:
		return scalar(b.Kind()), true
	case types.UntypedBool:
		return scalar(types.Bool), true
	case types.UntypedInt, types.UntypedRune:
		return scalar(types.Int), true
	case types.UntypedFloat:
		return scalar(types.Float64), true
	}
	return 0, false
}

func (s scalar) kind() types.BasicKind { return types.BasicKind(s) }

func (s scalar) goName() string { return types.Typ[s.kind()].Name() }

func (s scalar) isBool() bool  { return s.kind() == types.Bool }
func (s scalar) isFloat() bool { return s.kind() == types.Float32 || s.kind() == types.Float64 }
func (s scalar) isInt() bool   { return !s.isBool() && !s.isFloat() }

func (s scalar) signed() bool {
	switch s.kind() {
	case types.Int, types.Int8, types.Int16, types.Int32, types.Int64:
		return true
	}
	return false
}

// bits is the width of s (1 for bool).
func (s scalar) bits() int {
	switch s.kind() {
	case types.Int8, types.Uint8, types.Bool:
		return 8
	case types.Int16, types.Uint16:
		return 16
	case types.Int32, types.Uint32, types.Float32:
		return 32
	}
	return 64
}

// c is s's OpenCL C type.
func (s scalar) c() string {
	switch s.kind() {
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

// cMem is s's type in device memory: bool is a byte there, as in Go.
func (s scalar) cMem() string {
	if s.isBool() {
		return "uchar"
	}
	return s.c()
}

// cUnsigned is the unsigned C type in which s's arithmetic wraps as Go's:
// uint for types up to 32 bits (C promotes narrower ones to int), ulong for
// 64-bit ones.
func (s scalar) cUnsigned() string {
	if s.bits() == 64 {
		return "ulong"
	}
	return "uint"
}

// paramKind is the device.ParamKind a scalar parameter of s is passed as,
// and elemKind the one of a buffer of s.
func (s scalar) paramKind() string {
	switch s.kind() {
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

// cParam is the C type of a scalar parameter of s in a kernel's entry.
func (s scalar) cParam() string {
	switch s.paramKind() {
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

func (s scalar) elemKind() string {
	switch s.kind() {
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

// param is one parameter of a kernel or helper.
type param struct {
	obj   *types.Var
	name  string
	t     scalar // the scalar, or a slice's element type
	slice bool
	pos   token.Pos

	read, written bool // a slice's elements, here or in a helper it is passed to
}

// fn is a function the generator translates: a kernel or a //gompt:func
// helper.
type fn struct {
	decl   *ast.FuncDecl
	obj    *types.Func
	name   string
	params []*param
	result *scalar // nil when it returns nothing
	kernel *kernel // nil for a helper
	calls  []*call // calls of helpers in the body, in source order
	approx bool    // calls a math function with no correctly rounded device counterpart (or a helper that does)
	atomic bool    // calls a sync/atomic function (atomics.go)

	assigned map[*types.Var]bool // variables assigned after their declaration
	byObj    map[*types.Var]*param
	views    map[*types.Var]*view // its views (v := buf[lo:hi], view.go)
}

type call struct {
	pos    token.Pos
	callee *fn
	args   []ast.Expr
}

// kernel is a //gompt:kernel function.
type kernel struct {
	*fn
	dirPos  token.Pos
	name    string // device.Kernel.Name
	varName string
	runName string
	entry   string // the OpenCL C and PTX entry point
	dims    []*param
	index   []*param // the point's indices: params[:len(dims)]
	reduce  string   // "", "+", "*", "min", "max"
	lens    map[*param]lenExpr
	maps    map[*param]string // "To", "From" or "ToFrom"
	proven  map[ast.Expr]bool // index expressions proven in range
	nocheck bool              // check=off: no run-time checks
	sites   []site            // the run-time checks of its device code (device.Kernel.Faults), found by openCL

	// A team kernel (team=N, team.go): N threads per team, the thread's
	// index parameter, and the team-local arrays (their lengths).
	team       int
	thread     *param
	teamArrays map[*types.Var]int
	plan       *teamPlan

	// reduce(buf)=OP (reducearray.go): buffers the points combine into
	// with OP (+, *, min or max), through a private copy per team; their
	// constant lengths.
	reduceArrays map[*param]string
	reduceLen    map[*param]int

	// needs is what its device code needs of a device beyond what every
	// device gives (device.Kernel.Needs), planned by planNeeds (needs.go)
	// once the checks pass; the emitters only read it.
	needs needList

	// launch is what its launchers do beyond mapping and launching:
	// parameters they compute (arg(PARAM)=FUNC), its variants
	// (//gompt:variant); variant.go. nil for neither.
	launch *launchPlan
}

// site is one run-time check of a kernel's device code: its kind (the
// device.FaultKind constant's name) and source position ("heat.go:14").
type site struct {
	kind, pos string
}

const (
	siteIndex  = "FaultIndex"
	siteDivide = "FaultDivide"
)

// args are the kernel's parameters less the point's indices (and a team
// kernel's thread index): the device.Kernel's Params, in order (a
// reduction adds "partial").
func (k *kernel) args() []*param {
	n := len(k.dims)
	if k.thread != nil {
		n++
	}
	return k.params[n:]
}

// lenExpr is a buffer's length (len(buf)=, or the product of the
// extents): a sum and difference of products of terms, each a whole number
// or the name of a signed integer parameter, with Go's precedence: the
// grammar of device.Param.Len. Its value is Go's on int64s, the length 0
// where it is 0 or negative.
type lenExpr []lenProd

// lenProd is one product of a lenExpr, subtracted when sub.
type lenProd struct {
	sub   bool
	terms []string
}

// product returns e's terms when e is one product (not subtracted).
func (e lenExpr) product() ([]string, bool) {
	if len(e) != 1 || e[0].sub {
		return nil, false
	}
	return e[0].terms, true
}

// format writes e with each term as term(t), the terms of a product
// joined by mul, and the products by plus and minus.
func (e lenExpr) format(term func(string) string, mul, plus, minus string) string {
	var sb strings.Builder
	for i, p := range e {
		switch {
		case p.sub:
			sb.WriteString(minus)
		case i > 0:
			sb.WriteString(plus)
		}
		for j, t := range p.terms {
			if j > 0 {
				sb.WriteString(mul)
			}
			sb.WriteString(term(t))
		}
	}
	return sb.String()
}

// lenString is buffer p's Param.Len, its parameters named by names (the
// OpenCL C entry's, entryParams).
func (k *kernel) lenString(p *param, names map[*param]string) string {
	return k.lens[p].format(func(t string) string {
		if q := paramNamed(k, t); q != nil {
			return names[q]
		}
		return t
	}, "*", "+", "-")
}

// errList collects positioned errors, reported sorted by position.
type errList struct {
	fset *token.FileSet
	cwd  string
	errs []posErr
}

type posErr struct {
	pos token.Position
	msg string
}

func (e *errList) add(pos token.Pos, format string, args ...any) {
	e.errs = append(e.errs, posErr{e.fset.Position(pos), fmt.Sprintf(format, args...)})
}

// unsupported reports construct, at pos, as outside the subset.
func (e *errList) unsupported(pos token.Pos, construct, hint string) {
	if hint != "" {
		e.add(pos, "%s is not supported in a gompt kernel (%s)", construct, hint)
	} else {
		e.add(pos, "%s is not supported in a gompt kernel", construct)
	}
}

func (e *errList) Error() string {
	sort.SliceStable(e.errs, func(i, j int) bool {
		a, b := e.errs[i].pos, e.errs[j].pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	var sb strings.Builder
	for i, err := range e.errs {
		if i > 0 {
			sb.WriteByte('\n')
		}
		pos := err.pos
		pos.Filename = relPath(e.cwd, pos.Filename)
		fmt.Fprintf(&sb, "%s: %s", pos, err.msg)
	}
	return sb.String()
}
