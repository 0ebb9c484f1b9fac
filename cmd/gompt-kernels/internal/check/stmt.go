// Package check is the compiler's second phase: it decides what of a
// kernel's and helper's Go is in the subset, and reports the rest at its
// position, naming the construct and what to do instead.
package check

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// checker walks one function's body, reporting what is outside the subset
// and recording what the translation needs: buffer reads and writes,
// assigned variables, helper calls, inexact math.
type checker struct {
	g   *ir.Program
	f   *ir.Fn
	bad map[*types.Var]bool // locals already reported for their type
}

func Check(g *ir.Program, f *ir.Fn) {
	c := &checker{g: g, f: f, bad: map[*types.Var]bool{}}
	c.reservedNames()
	c.block(f.Decl.Body.List)
}

// reservedNames refuses f's own names (parameters, locals, labels) that
// start with gompt, the prefix of the generated Go's names (gomptJ,
// gomptLo0, gomptrt), but for gompt_, which the Go image never uses (the
// OpenCL C's names of that prefix are suffixed, as every clash there);
// and those that would hide what the Go image writes its conversions and
// unchecked accesses with (goTypeNames).
func (c *checker) reservedNames() {
	ast.Inspect(c.f.Decl, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || id == c.f.Decl.Name {
			return true
		}
		if goTypeNames[id.Name] {
			if _, isVar := c.info().Defs[id].(*types.Var); isVar {
				what := fmt.Sprintf("a type the generated Go image converts with (%s(x))", id.Name)
				if id.Name == "unsafe" {
					what = "the package the generated Go image reaches memory through (unsafe.Add)"
				}
				c.g.Errs.Add(id.Pos(), "variable %s: %s is %s; name the variable otherwise", id.Name, id.Name, what)
			}
			return true
		}
		if !strings.HasPrefix(id.Name, "gompt") || strings.HasPrefix(id.Name, "gompt_") {
			return true
		}
		what := ""
		switch obj := c.info().Defs[id].(type) {
		case *types.Var:
			what = "local"
			if c.f.ByObj[obj] != nil {
				what = "parameter"
			}
		case *types.Label:
			what = "label"
		default:
			return true
		}
		c.g.Errs.Add(id.Pos(), "%s %s: names that start with gompt (but for gompt_) are the generated code's; rename it", what, id.Name)
		return true
	})
}

// goTypeNames are the predeclared types the generated Go image writes
// conversions with, and the package it reaches memory through: a variable
// of the kernel named so would hide them there (float32 := 2 makes its
// float32(3) a call of an int).
var goTypeNames = map[string]bool{
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true,
	"float32": true, "float64": true, "byte": true, "rune": true, "unsafe": true,
}

func (c *checker) info() *types.Info { return c.g.P.Info }

func (c *checker) unsupported(pos token.Pos, construct, hint string) {
	c.g.Errs.Unsupported(pos, construct, hint)
}

func (c *checker) block(list []ast.Stmt) {
	for _, s := range list {
		c.stmt(s)
	}
}

func (c *checker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case nil:
	case *ast.BlockStmt:
		c.block(s.List)
	case *ast.ExprStmt:
		call, ok := ast.Unparen(s.X).(*ast.CallExpr)
		if !ok {
			c.unsupported(s.Pos(), "an expression statement", "only calls of //gompt:func helpers stand alone")
			return
		}
		if tv := c.info().Types[call.Fun]; tv.IsBuiltin() || tv.IsType() {
			before := len(c.g.Errs.Errs)
			c.expr(call)
			if len(c.g.Errs.Errs) == before {
				c.unsupported(s.Pos(), "a call of "+ir.ExprString(call.Fun)+" as a statement", "its value is unused")
			}
			return
		}
		c.expr(call)
	case *ast.AssignStmt:
		c.assign(s)
	case *ast.IncDecStmt:
		c.lhs(s.X, true)
		c.expr(s.X)
	case *ast.DeclStmt:
		gd := s.Decl.(*ast.GenDecl)
		switch gd.Tok {
		case token.CONST:
			// Constants are folded where they are used.
		case token.VAR:
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if len(vs.Names) == 1 && len(vs.Values) == 1 && c.viewDecl(vs.Names[0], vs.Values[0]) {
					continue
				}
				before := len(c.g.Errs.Errs)
				for _, v := range vs.Values {
					c.expr(v)
				}
				for _, name := range vs.Names {
					c.local(name, len(c.g.Errs.Errs) > before)
				}
			}
		default:
			c.unsupported(s.Pos(), "a "+gd.Tok.String()+" declaration", "declare types at package level; kernels use only basic types")
		}
	case *ast.IfStmt:
		c.stmt(s.Init)
		c.cond(s.Cond)
		c.block(s.Body.List)
		c.stmt(s.Else)
	case *ast.ForStmt:
		c.stmt(s.Init)
		if s.Cond != nil {
			c.cond(s.Cond)
		}
		c.stmt(s.Post)
		c.block(s.Body.List)
	case *ast.RangeStmt:
		if c.rangeSlice(s) {
			return
		}
		t := c.info().TypeOf(s.X)
		if sc, ok := ir.ScalarOf(t); !ok || !sc.IsInt() {
			what := "range over a value of type " + c.g.TypeString(t)
			c.unsupported(s.Pos(), what, "range over an int, a slice parameter, a view of one (v := buf[lo:hi]) or a team array")
			return
		}
		if s.Key != nil {
			if s.Tok == token.DEFINE {
				if id, ok := s.Key.(*ast.Ident); ok && id.Name != "_" {
					c.local(id, false)
				}
			} else {
				c.lhs(s.Key, false)
			}
		}
		c.expr(s.X)
		c.block(s.Body.List)
	case *ast.SwitchStmt:
		c.stmt(s.Init)
		if s.Tag != nil {
			c.expr(s.Tag)
		}
		for _, cc := range s.Body.List {
			cl := cc.(*ast.CaseClause)
			for _, e := range cl.List {
				if s.Tag == nil {
					c.cond(e)
				} else {
					c.expr(e)
				}
			}
			c.block(cl.Body)
		}
	case *ast.BranchStmt:
		switch s.Tok {
		case token.GOTO:
			c.unsupported(s.Pos(), "goto", "")
		case token.FALLTHROUGH:
			c.unsupported(s.Pos(), "fallthrough", "list the values in one case, or call a //gompt:func helper from both")
		}
	case *ast.LabeledStmt:
		switch s.Stmt.(type) {
		case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt:
			c.stmt(s.Stmt)
		default:
			c.unsupported(s.Pos(), "a label on a "+ir.StmtName(s.Stmt), "labels are for loops and switches, for break and continue")
		}
	case *ast.ReturnStmt:
		for _, r := range s.Results {
			c.expr(r)
		}
	case *ast.EmptyStmt:
	case *ast.GoStmt:
		c.unsupported(s.Pos(), "a go statement (goroutine)", "the device runs the points in parallel already")
	case *ast.DeferStmt:
		c.unsupported(s.Pos(), "defer", "")
	case *ast.SelectStmt:
		c.unsupported(s.Pos(), "select", "channels are not device data")
	case *ast.SendStmt:
		c.unsupported(s.Pos(), "a channel send", "channels are not device data")
	case *ast.TypeSwitchStmt:
		c.unsupported(s.Pos(), "a type switch", "")
	default:
		c.unsupported(s.Pos(), ir.StmtName(s), "")
	}
}

// local checks the declaration of a local variable; quiet when its value
// was reported already (the variable is then only marked bad).
func (c *checker) local(id *ast.Ident, quiet bool) {
	if id.Name == "_" {
		return
	}
	v, _ := c.info().Defs[id].(*types.Var)
	if v == nil {
		if u, ok := c.info().Uses[id].(*types.Var); ok { // redeclared in a :=
			c.f.Assigned[u] = true
		}
		return
	}
	if ir.TeamArrayOf(c.info(), c.f, id) != nil {
		return
	}
	if _, ok := ir.ScalarOf(v.Type()); !ok {
		c.bad[v] = true
		if quiet {
			return
		}
		what := "a local variable of type " + c.g.TypeString(v.Type())
		hint := ir.TypeHint(v.Type())
		if _, isSlice := v.Type().(*types.Slice); isSlice {
			what = "a local slice variable (" + id.Name + ")"
			hint = "declare a view of a slice parameter, " + id.Name + " := buf[lo:hi], or index the parameter itself"
		}
		c.unsupported(id.Pos(), what, hint)
	}
}

func (c *checker) assign(s *ast.AssignStmt) {
	before := len(c.g.Errs.Errs)
	if s.Tok == token.DEFINE && c.viewDecls(s) {
		return
	}
	if s.Tok == token.DEFINE {
		for _, r := range s.Rhs {
			c.expr(r)
		}
		for _, l := range s.Lhs {
			if id, ok := l.(*ast.Ident); ok { // go/types reports any other (non-name on left side of :=)
				c.local(id, len(c.g.Errs.Errs) > before)
			}
		}
	} else {
		for i, l := range s.Lhs {
			if s.Tok == token.ASSIGN && len(s.Rhs) == len(s.Lhs) && c.appendTo(l, s.Rhs[i]) {
				continue
			}
			c.lhs(l, s.Tok != token.ASSIGN)
		}
		if len(c.g.Errs.Errs) > before {
			return
		}
		for _, r := range s.Rhs {
			c.expr(r)
		}
	}
	if len(s.Rhs) == 1 && len(s.Lhs) > 1 && !c.callsRefused(s.Rhs[0]) {
		c.unsupported(s.Pos(), "an assignment of several values from one expression", "")
	}
	if s.Tok != token.ASSIGN && s.Tok != token.DEFINE {
		for _, l := range s.Lhs {
			if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
				c.expr(ix) // an op-assignment reads the element too
			}
		}
	}
}

// appendTo reports append, when r appends (buf = append(buf, v)), rather
// than the assignment to l, a slice parameter: the append is what a
// kernel cannot do.
func (c *checker) appendTo(l, r ast.Expr) bool {
	call, ok := ast.Unparen(r).(*ast.CallExpr)
	if !ok || !ir.IsBuiltin(c.info(), call, "append") {
		return false
	}
	id, ok := ast.Unparen(l).(*ast.Ident)
	if !ok {
		return false
	}
	if v, _ := c.info().Uses[id].(*types.Var); v == nil || c.f.ByObj[v] == nil || !c.f.ByObj[v].Slice {
		return false
	}
	c.expr(call)
	return true
}

// lhs checks the target of an assignment; opAssign when it also reads it
// (x += v, x++).
func (c *checker) lhs(e ast.Expr, opAssign bool) {
	switch l := ast.Unparen(e).(type) {
	case *ast.Ident:
		if l.Name == "_" {
			return
		}
		v, _ := c.info().Uses[l].(*types.Var)
		if v == nil {
			c.expr(l)
			return
		}
		if p := c.f.ByObj[v]; p != nil && p.Slice {
			c.unsupported(l.Pos(), "assigning to slice parameter "+l.Name, "slices are the kernel's buffers; assign to their elements")
			return
		}
		if c.f.IsView(v) {
			c.unsupported(l.Pos(), "assigning to view "+l.Name, ir.ViewHint+"; declare another view")
			return
		}
		if c.isGlobal(v) {
			c.unsupported(l.Pos(), "package-level variable "+l.Name, "kernels use their parameters, locals and constants")
			return
		}
		c.f.Assigned[v] = true
	case *ast.IndexExpr:
		p := c.buffer(l)
		if p == nil {
			return
		}
		p.Written = true
		c.index(l.Index)
	default:
		c.expr(e)
		c.unsupported(e.Pos(), "assigning to "+ir.ExprString(e), "assign to locals and to elements of slice parameters")
	}
}

// buffer checks that ix indexes a slice parameter, and returns it.
func (c *checker) buffer(ix *ast.IndexExpr) *ir.Param {
	if c.teamArrayIndex(ix) {
		return nil
	}
	if p, _ := c.f.SliceOf(c.info(), ix.X); p != nil {
		return p // a slice parameter, or one a view views
	}
	id, ok := ast.Unparen(ix.X).(*ast.Ident)
	if ok {
		if v, _ := c.info().Uses[id].(*types.Var); v != nil && c.bad[v] { // a local array, reported at its declaration
			c.index(ix.Index)
			return nil
		}
	}
	t := c.info().TypeOf(ix.X)
	switch t.Underlying().(type) {
	case *types.Map:
		c.unsupported(ix.Pos(), "a map", "maps are not device data")
	case *types.Signature:
		c.unsupported(ix.Pos(), "a generic function", "")
	default:
		if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
			c.unsupported(ix.Pos(), "a string", "strings are not device data")
		} else {
			c.unsupported(ix.Pos(), "indexing "+ir.ExprString(ix.X), "kernels index their slice parameters")
		}
	}
	return nil
}

func (c *checker) index(e ast.Expr) {
	c.expr(e)
}

func (c *checker) cond(e ast.Expr) { c.expr(e) }

func (c *checker) isGlobal(v *types.Var) bool {
	return v.Parent() != nil && v.Parent() == v.Pkg().Scope()
}

// expr checks an expression used as a value.
func (c *checker) expr(e ast.Expr) {
	tv := c.info().Types[e]
	if tv.Value != nil {
		if tv.Value.Kind() == constant.String {
			c.unsupported(e.Pos(), "a string", "strings are not device data")
		} else if tv.Value.Kind() == constant.Complex {
			c.unsupported(e.Pos(), "a complex number", "")
		} else if _, ok := ir.ScalarOf(tv.Type); !ok {
			c.unsupported(e.Pos(), "a constant of type "+c.g.TypeString(tv.Type), ir.TypeHint(tv.Type))
		}
		return
	}
	if id, ok := e.(*ast.Ident); ok {
		if v, ok := c.info().Uses[id].(*types.Var); ok && c.bad[v] {
			return
		}
	}
	before := len(c.g.Errs.Errs)
	c.node(e)
	if len(c.g.Errs.Errs) > before {
		return
	}
	if _, isTuple := tv.Type.(*types.Tuple); tv.Type != nil && !tv.IsType() && !isTuple {
		if _, ok := ir.ScalarOf(tv.Type); !ok {
			if _, isSlice := tv.Type.(*types.Slice); !isSlice {
				if _, isSig := tv.Type.(*types.Signature); !isSig {
					c.unsupported(e.Pos(), "a value of type "+c.g.TypeString(tv.Type)+" ("+ir.ExprString(e)+")", ir.TypeHint(tv.Type))
					return
				}
			}
		}
	}
}

// node checks e by its kind of node.
func (c *checker) node(e ast.Expr) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		c.expr(e.X)
	case *ast.Ident:
		switch o := c.info().Uses[e].(type) {
		case *types.Var:
			if c.bad[o] {
				return
			}
			if c.isGlobal(o) {
				c.unsupported(e.Pos(), "package-level variable "+e.Name, "kernels use their parameters, locals and constants; make it a constant or a parameter")
				return
			}
			if p := c.f.ByObj[o]; p != nil && p.Slice {
				c.unsupported(e.Pos(), "slice "+e.Name+" used as a value", "index it, range over it, slice it (v := "+e.Name+"[lo:hi]), take len of it, or pass it to a //gompt:func helper")
			} else if c.f.IsView(o) {
				c.unsupported(e.Pos(), "view "+e.Name+" used as a value", ir.ViewHint)
			}
		case *types.Nil:
			c.unsupported(e.Pos(), "nil", "")
		case *types.Func:
			c.unsupported(e.Pos(), "function "+e.Name+" used as a value", "function values are not supported; call it")
		}
	case *ast.BasicLit:
	case *ast.BinaryExpr:
		c.expr(e.X)
		c.expr(e.Y)
	case *ast.UnaryExpr:
		switch e.Op {
		case token.AND:
			c.unsupported(e.Pos(), "taking an address (&)", "pointers are not device data")
		case token.ARROW:
			c.unsupported(e.Pos(), "a channel receive", "channels are not device data")
		default:
			c.expr(e.X)
		}
	case *ast.IndexExpr:
		if p := c.buffer(e); p != nil {
			p.Read = true
			c.index(e.Index)
		}
	case *ast.IndexListExpr:
		c.unsupported(e.Pos(), "a generic function", "")
	case *ast.CallExpr:
		c.call(e)
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			if _, isPkg := c.info().Uses[id].(*types.PkgName); isPkg {
				c.unsupported(e.Pos(), "package-level variable "+ir.ExprString(e), "kernels use their parameters, locals and constants")
				return
			}
		}
		if sel := c.info().Selections[e]; sel != nil && sel.Kind() != types.FieldVal {
			c.unsupported(e.Pos(), "a method value ("+ir.ExprString(e)+")", "")
		} else {
			c.unsupported(e.Pos(), "a field selector ("+ir.ExprString(e)+")", "structs are not supported; pass one slice per field")
		}
	case *ast.StarExpr:
		c.unsupported(e.Pos(), "a pointer dereference", "pointers are not device data")
	case *ast.FuncLit:
		c.unsupported(e.Pos(), "a closure (function literal)", "write a //gompt:func helper")
	case *ast.CompositeLit:
		c.compositeLit(e)
	case *ast.SliceExpr:
		c.unsupported(e.Pos(), "a slice expression ("+ir.ExprString(e)+") outside a view's declaration or a range", "declare a view of its own, v := "+ir.ExprString(e)+", or range over it")
	case *ast.TypeAssertExpr:
		c.unsupported(e.Pos(), "a type assertion", "")
	case *ast.KeyValueExpr:
		c.unsupported(e.Pos(), "a key-value expression", "")
	default:
		c.unsupported(e.Pos(), fmt.Sprintf("expression %s", ir.ExprString(e)), "")
	}
}

// compositeLit reports a composite literal by what it builds: a map, a
// slice, an array or a struct, none of which is in the subset.
func (c *checker) compositeLit(e *ast.CompositeLit) {
	t := c.info().TypeOf(e)
	what := c.g.TypeString(t)
	switch t.Underlying().(type) {
	case *types.Map:
		c.unsupported(e.Pos(), "a map literal ("+what+")", "maps are not in the kernel subset: they are not device data; pass a slice and index it")
	case *types.Slice:
		c.unsupported(e.Pos(), "a slice literal ("+what+", an allocation)", "kernels allocate nothing; pass a slice")
	case *types.Array:
		c.unsupported(e.Pos(), "an array literal ("+what+")", "arrays are not supported; pass a slice")
	case *types.Struct:
		c.unsupported(e.Pos(), "a struct literal ("+what+")", "structs are not supported; pass one slice per field")
	default:
		c.unsupported(e.Pos(), "a composite literal ("+what+")", "kernels allocate nothing; pass a slice")
	}
}

// BuiltinHints says why each builtin outside the subset is not there.
var BuiltinHints = map[string]string{
	"append":  "it allocates: a kernel cannot grow a slice; it writes into its slice parameters' elements, as many as len(buf)= declares",
	"make":    "an allocation; kernels write into their slice parameters",
	"new":     "an allocation; kernels allocate nothing",
	"panic":   "device code cannot stop the program; write a flag into a buffer and check it on the host",
	"recover": "device code has no panics",
	"print":   "device code cannot print; write into a buffer",
	"println": "device code cannot print; write into a buffer",
	"copy":    "copy element by element, or use kernels.Copy32",
	"clear":   "assign zero element by element",
	"cap":     "use len; a buffer's capacity is its length on a device",
	"delete":  "maps are not device data",
	"close":   "channels are not device data",
	"complex": "use two float slices",
	"real":    "use two float slices",
	"imag":    "use two float slices",
}

func (c *checker) call(e *ast.CallExpr) {
	fun := ast.Unparen(e.Fun)
	tv := c.info().Types[fun]
	switch {
	case tv.IsType():
		if _, ok := ir.ScalarOf(tv.Type); !ok {
			c.unsupported(e.Pos(), "a conversion to "+c.g.TypeString(tv.Type), ir.TypeHint(tv.Type))
			return
		}
		for _, a := range e.Args {
			c.expr(a)
		}
		return
	case tv.IsBuiltin():
		name := fun.(*ast.Ident).Name
		switch name {
		case "len":
			id, ok := ast.Unparen(e.Args[0]).(*ast.Ident)
			if ok {
				if v, _ := c.info().Uses[id].(*types.Var); v != nil && c.bad[v] {
					return
				}
			}
			if p, _ := c.f.SliceOf(c.info(), e.Args[0]); p == nil {
				c.unsupported(e.Pos(), "len of "+ir.ExprString(e.Args[0]), "len takes a slice parameter or a view")
			}
			return
		case "min", "max":
			for _, a := range e.Args {
				c.expr(a)
			}
			return
		}
		c.unsupported(e.Pos(), name, BuiltinHints[name])
		return
	}
	if name, ok := ir.AtomicCallee(c.info(), e); ok {
		c.atomicCall(e, name)
		return
	}
	if ir.IsBarrier(c.info(), e) {
		c.checkBarrierCall(e)
		return
	}
	if sel, ok := fun.(*ast.SelectorExpr); ok {
		if id, ok := sel.X.(*ast.Ident); ok {
			if pn, ok := c.info().Uses[id].(*types.PkgName); ok {
				if pn.Imported().Path() != "math" {
					c.unsupported(e.Pos(), "a call of "+pn.Imported().Path()+"."+sel.Sel.Name, "kernels call //gompt:func helpers of their package and functions of package math")
					return
				}
				mf, ok := ir.MathFuncs[sel.Sel.Name]
				if !ok {
					exact, approx := ir.MathNames()
					c.unsupported(e.Pos(), "math."+sel.Sel.Name, "the math functions with a device counterpart are "+strings.Join(append(exact, approx...), ", "))
					return
				}
				if !mf.Exact {
					c.f.Approx = true
				}
				for _, a := range e.Args {
					c.expr(a)
				}
				return
			}
		}
		c.unsupported(e.Pos(), "a method call ("+ir.ExprString(fun)+")", "call a //gompt:func function")
		return
	}
	id, ok := fun.(*ast.Ident)
	if !ok {
		c.unsupported(e.Pos(), "a call of "+ir.ExprString(fun), "call //gompt:func helpers by name")
		return
	}
	obj, _ := c.info().Uses[id].(*types.Func)
	if obj == nil {
		c.unsupported(e.Pos(), "a call of function value "+id.Name, "function values are not supported; call a //gompt:func helper")
		return
	}
	callee := c.g.Funcs[obj]
	if callee == nil {
		isKernel := c.g.Refused[obj] == ir.KernelDirective
		for _, k := range c.g.Kernels {
			isKernel = isKernel || k.Obj == obj
		}
		switch {
		case isKernel:
			c.unsupported(e.Pos(), "a call of kernel "+id.Name, "a kernel is not device code's to call; move what they share into a //gompt:func helper")
			return
		case c.g.Refused[obj] == ir.FuncDirective:
			return // the helper is refused at its declaration: nothing more to say here
		}
		c.unsupported(e.Pos(), "a call of "+id.Name+", which is not marked //gompt:func", "mark it //gompt:func so that it is translated too")
		return
	}
	c.f.Calls = append(c.f.Calls, &ir.Call{Pos: e.Pos(), Callee: callee, Args: e.Args})
	for i, a := range e.Args {
		if i < len(callee.Params) && callee.Params[i].Slice {
			if p, _ := c.f.SliceOf(c.info(), a); p == nil {
				c.unsupported(a.Pos(), "passing "+ir.ExprString(a)+" as a slice", "pass a slice parameter or a view (v := buf[lo:hi]) as it is")
			}
			continue
		}
		c.expr(a)
	}
}

// callsRefused reports whether e is a call of a //gompt:func helper that
// collect refused: a helper with several results is reported there, not
// at each assignment of them.
func (c *checker) callsRefused(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok {
		return false
	}
	obj, _ := c.info().Uses[id].(*types.Func)
	return obj != nil && c.g.Refused[obj] == ir.FuncDirective
}
