package emitc

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// Views and range over slices in the OpenCL C and the Go image (see
// view.go).

// cview is a view in C: a pointer into its buffer, and the C variables
// of its length and capacity.
type cview struct {
	base       *ir.Param
	ptr, n, cp string
}

// viewOf is the C view e names, or nil.
func (c *cfunc) viewOf(e ast.Expr) *cview {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := c.info().Uses[id].(*types.Var)
	return c.views[v]
}

// cslice is slice e (a slice parameter or a view) in C: its pointer,
// length and capacity, and the parameter it reaches.
func (c *cfunc) cslice(e ast.Expr) (ptr, n, cp string, p *ir.Param) {
	if cv := c.viewOf(e); cv != nil {
		return cv.ptr, cv.n, cv.cp, cv.base
	}
	id := ast.Unparen(e).(*ast.Ident)
	p = c.f.ByObj[c.info().Uses[id].(*types.Var)]
	return c.names[p.Obj], c.lens[p], c.lens[p], p
}

// viewStmt writes s when it declares a view, and reports whether it
// does.
func (c *cfunc) viewStmt(s ast.Stmt) bool {
	var ids []*ast.Ident
	switch s := s.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			for _, l := range s.Lhs {
				ids = append(ids, l.(*ast.Ident))
			}
		}
	case *ast.DeclStmt:
		if gd, ok := s.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR && len(gd.Specs) == 1 {
			ids = gd.Specs[0].(*ast.ValueSpec).Names
		}
	}
	for _, id := range ids {
		if v, _ := c.info().Defs[id].(*types.Var); c.f.Views[v] == nil {
			return false // all views (viewDecls), or none
		}
	}
	if len(ids) == 0 {
		return false
	}
	if c.views == nil {
		c.views = map[*types.Var]*cview{}
	}
	marks := c.marks
	for _, id := range ids {
		v := c.info().Defs[id].(*types.Var)
		c.views[v] = c.sliceView(c.f.Views[v].Expr, id.Name)
	}
	if c.marks != marks && isInit(c.f.Decl.Body, s) {
		// The statements that follow an if's, for's or switch's init
		// are not in its list (stmts): return here, once a check failed,
		// before they use an empty view as if it held hi-lo elements.
		c.line("%s", stopMark)
	}
	return true
}

// isInit reports whether s is the init statement of an if, for or switch
// in body.
func isInit(body *ast.BlockStmt, s ast.Stmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			found = found || n.Init == s
		case *ast.ForStmt:
			found = found || n.Init == s
		case *ast.SwitchStmt:
			found = found || n.Init == s
		}
		return !found
	})
	return found
}

// sliceView declares a view of slice expression se, named after name,
// with Go's checks of its bounds (in Go's order: the high bound against
// the capacity, then the low against the high). Where they fail the check
// fails, the view is empty, and the function returns (a team kernel's
// thread goes on, with the empty view; range and viewStmt return).
func (c *cfunc) sliceView(se *ast.SliceExpr, name string) *cview {
	ptr, n, cp, p := c.cslice(se.X)
	cst := "const "
	if p.Written {
		cst = ""
	}
	cv := &cview{base: p, ptr: ir.CName(name, c.used), n: ir.CName("gompt_len_"+name, c.used), cp: ir.CName("gompt_cap_"+name, c.used)}
	c.line("__global %s%s *%s = %s;", cst, p.T.CMem(), cv.ptr, ptr)
	c.line("long %s = 0, %s = 0;", cv.n, cv.cp)
	c.line("{")
	c.depth++
	bound := func(e ast.Expr, def string) string {
		if e == nil {
			return def
		}
		t := c.newTmp()
		c.line("long %s = %s;", t, c.index(e))
		return t
	}
	lo := bound(se.Low, "0L")
	hi := bound(se.High, n)
	mx := bound(se.Max, cp)
	type check struct{ bad, kind, x, y string }
	var checks []check
	above := func(x, y string) string { return "(ulong)" + x + " > (ulong)" + y }
	if se.Slice3 {
		checks = []check{{above(mx, cp), ir.SiteSlice3Cap, mx, cp}, {above(hi, mx), ir.SiteSlice3Max, hi, mx}, {above(lo, hi), ir.SiteSlice3Order, lo, hi}}
	} else {
		if se.High != nil {
			checks = append(checks, check{above(hi, cp), ir.SiteSliceCap, hi, cp})
		}
		if se.Low != nil {
			checks = append(checks, check{above(lo, hi), ir.SiteSliceOrder, lo, hi})
		}
	}
	if !c.checking() {
		checks = nil
	}
	set := func() {
		c.line("%s = %s + %s;", cv.ptr, ptr, lo)
		c.line("%s = %s - %s;", cv.n, hi, lo)
		c.line("%s = %s - %s;", cv.cp, mx, lo)
	}
	for i, ch := range checks {
		kw := "if"
		if i > 0 {
			kw = "} else if"
		}
		c.line("%s (%s) {", kw, ch.bad)
		c.line("  %s(%s, %s, %s);", c.pre.fail(c.file.k), c.site(ch.kind, se), ch.x, ch.y)
	}
	if len(checks) > 0 {
		c.line("} else {")
		c.depth++
		set()
		c.depth--
		c.line("}")
	} else {
		set()
	}
	c.depth--
	c.line("}")
	return cv
}

// viewLoad is element ix of a view in C, checked against the view's
// length unless proven in range.
func (c *cfunc) viewLoad(ix *ast.IndexExpr) (string, bool) {
	cv := c.viewOf(ix.X)
	if cv == nil {
		return "", false
	}
	idx := c.index(ix.Index)
	if c.proven(ix) {
		return cv.ptr + "[" + idx + "]", true
	}
	return c.pre.loadChecked(c.file.k, cv.base.T) + "(" + cv.ptr + ", " + cv.n + ", " + idx + ", " + c.site(ir.SiteIndex, ix) + ")", true
}

// viewStoreAt stores v into element ix of a view at the C index idx,
// checked against the view's length unless proven in range.
func (c *cfunc) viewStoreAt(ix *ast.IndexExpr, idx, v string) bool {
	cv := c.viewOf(ix.X)
	if cv == nil {
		return false
	}
	if c.proven(ix) {
		c.line("%s[%s] = %s;", cv.ptr, idx, v)
		return true
	}
	c.line("%s(%s, %s, %s, %s, %s);", c.pre.storeChecked(c.file.k, cv.base.T), cv.ptr, cv.n, idx, v, c.site(ir.SiteIndex, ix))
	return true
}

// elemBuffer is the buffer element ix reaches in C: the slice parameter,
// the pointer it indexes (the parameter's, or a view's into it) and that
// pointer's length.
func (c *cfunc) elemBuffer(ix *ast.IndexExpr) (p *ir.Param, ptr, n string) {
	ptr, n, _, p = c.cslice(ix.X)
	return p, ptr, n
}

// rangeSlice writes a range over a slice or a team array, and reports
// whether s is one: the length taken once, over a hidden counter; the
// index and the value (the element, read at the start of the iteration)
// declared in the iteration, or assigned.
func (c *cfunc) rangeSlice(s *ast.RangeStmt, label string) bool {
	var ptr, n string
	var elem ir.Scalar
	switch t := c.info().TypeOf(s.X).Underlying().(type) {
	case *types.Slice:
		elem, _ = ir.ScalarOf(t.Elem())
	case *types.Array:
		elem, _ = ir.ScalarOf(t.Elem())
		team := ir.TeamArrayOf(c.info(), c.f, s.X)
		ptr, n = c.names[team], fmt.Sprintf("%dL", t.Len())
	default:
		return false
	}
	c.line("{")
	c.depth++
	if ptr == "" {
		if se, ok := ast.Unparen(s.X).(*ast.SliceExpr); ok {
			cv := c.sliceView(se, "gompt_range")
			ptr, n = cv.ptr, cv.n
		} else {
			ptr, n, _, _ = c.cslice(s.X)
		}
	}
	cnt, k := c.newTmp(), c.newTmp()
	c.line("long %s = %s;", cnt, n)
	bt := c.push(s, label, false, false)
	c.line("for (long %s = 0; %s; %s++) {", k, cmp64(k, token.LSS, cnt), k)
	c.depth++
	c.flatLoopTop()
	val := func() string { return ptr + "[" + k + "]" }
	if elem.IsBool() {
		val = func() string { return "(" + ptr + "[" + k + "] != 0)" }
	}
	for i, x := range []ast.Expr{s.Key, s.Value} {
		if x == nil || ir.IsBlank(x) {
			continue
		}
		v := func() string { return k }
		if i == 1 {
			v = val
		}
		if s.Tok == token.DEFINE {
			c.declare(x.(*ast.Ident), v())
		} else {
			c.store(x, v)
		}
	}
	c.rangeEnd(s, bt)
	return true
}
