package emitc

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

func (c *cfunc) stmts(list []ast.Stmt) {
	guard := false // flat: a statement before made checks
	for _, s := range list {
		if c.wide != nil && !c.wide.inLeaf && c.wide.ls.Leaf(c.info(), s) {
			c.wideLeaf(s)
			continue
		}
		if guard && !c.isViewDecl(s) {
			c.guarded(s)
			continue
		}
		marks := c.marks
		c.stmt(s, "")
		switch {
		case c.marks == marks:
		case c.flat:
			guard = true
		default:
			c.line("%s", stopMark)
		}
	}
}

func (c *cfunc) block(list []ast.Stmt) {
	c.depth++
	c.stmts(list)
	c.depth--
}

func (c *cfunc) stmt(s ast.Stmt, label string) {
	if c.viewStmt(s) {
		return
	}
	switch s.(type) {
	case *ast.ExprStmt, *ast.AssignStmt, *ast.IncDecStmt, *ast.DeclStmt:
		saved := c.callsFirst
		c.callsFirst = true
		defer func() { c.callsFirst = saved }()
	}
	switch s := s.(type) {
	case nil, *ast.EmptyStmt:
	case *ast.BlockStmt:
		c.line("{")
		c.block(s.List)
		c.line("}")
	case *ast.ExprStmt:
		c.line("%s;", c.expr(s.X))
	case *ast.AssignStmt:
		c.assign(s)
	case *ast.IncDecStmt:
		op := token.ADD
		if s.Tok == token.DEC {
			op = token.SUB
		}
		t := c.typeOf(s.X)
		one := "1"
		if t.IsFloat() {
			one = c.constant(constant.MakeInt64(1), t)
		}
		c.opAssign(s.X, op, func() string { return one })
	case *ast.DeclStmt:
		gd := s.Decl.(*ast.GenDecl)
		if gd.Tok != token.VAR {
			return
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			var vals []string
			for _, v := range vs.Values {
				vals = append(vals, c.expr(v))
			}
			if len(vals) > 1 { // evaluated before any is declared
				for i, v := range vals {
					t := c.typeOf(vs.Names[i])
					tmp := c.newTmp()
					c.line("%s %s = %s;", t.C(), tmp, v)
					vals[i] = tmp
				}
			}
			for i, id := range vs.Names {
				val := ""
				if i < len(vals) {
					val = vals[i]
				}
				c.declare(id, val)
			}
		}
	case *ast.IfStmt:
		if s.Init != nil {
			c.line("{")
			c.depth++
			c.stmt(s.Init, "")
		}
		c.ifChain(s)
		if s.Init != nil {
			c.depth--
			c.line("}")
		}
	case *ast.ForStmt:
		c.forStmt(s, label)
	case *ast.RangeStmt:
		c.rangeStmt(s, label)
	case *ast.SwitchStmt:
		c.switchStmt(s, label)
	case *ast.LabeledStmt:
		c.stmt(s.Stmt, s.Label.Name)
	case *ast.BranchStmt:
		c.branch(s)
	case *ast.ReturnStmt:
		if len(s.Results) == 0 {
			c.line("return;")
		} else {
			c.line("return %s;", c.convertTo(s.Results[0], *c.f.Result))
		}
	default:
		panic(fmt.Sprintf("gompt-kernels: statement %T passed the check", s))
	}
}

func (c *cfunc) ifChain(s *ast.IfStmt) {
	c.b.WriteString(strings.Repeat("  ", c.depth))
	c.ifTail(s)
}

// ifTail writes an if statement (without an init) from the current
// position of the line: "if (cond) {", the body, and its else chain.
func (c *cfunc) ifTail(s *ast.IfStmt) {
	fmt.Fprintf(&c.b, "if (%s) {\n", bare(c.expr(s.Cond)))
	c.block(s.Body.List)
	switch e := s.Else.(type) {
	case nil:
		c.line("}")
	case *ast.IfStmt:
		if e.Init == nil {
			c.b.WriteString(strings.Repeat("  ", c.depth) + "} else ")
			c.ifTail(e)
			return
		}
		c.line("} else {")
		c.depth++
		c.stmt(e, "")
		c.depth--
		c.line("}")
	case *ast.BlockStmt:
		c.line("} else {")
		c.block(e.List)
		c.line("}")
	}
}

func (c *cfunc) push(s ast.Stmt, label string, isSwitch, hasPost bool) *branchTarget {
	c.tmp++
	t := &branchTarget{node: s, label: label, isSwitch: isSwitch, hasPost: hasPost, id: c.tmp}
	c.stack = append(c.stack, t)
	return t
}

func (c *cfunc) pop() { c.stack = c.stack[:len(c.stack)-1] }

// forStmt: Go's for, with its post statement at the end of the body (after
// the label that continue jumps to).
func (c *cfunc) forStmt(s *ast.ForStmt, label string) {
	if k := c.f.Kernel; k != nil && k.SumJams[s] != nil && c.sumJam(s, k.SumJams[s], label) {
		return
	}
	c.line("{")
	c.depth++
	c.stmt(s.Init, "")
	c.loop(s, label)
	c.depth--
	c.line("}")
}

// loop writes for statement s but for its init statement.
func (c *cfunc) loop(s *ast.ForStmt, label string) {
	t := c.push(s, label, false, s.Post != nil)
	c.line("for (;;) {")
	c.depth++
	if s.Cond != nil {
		c.line("if (!%s) break;", c.expr(s.Cond))
	}
	if c.flat {
		c.flatLoopTop()
	} else {
		c.line("%s", stopMark)
	}
	c.line("{")
	c.block(s.Body.List)
	c.line("}")
	if t.contUs {
		c.line("gompt_c%d:;", t.id)
	}
	if s.Post != nil {
		c.stmt(s.Post, "")
	}
	c.depth--
	c.line("}")
	c.pop()
	if t.breakUsed {
		c.line("gompt_b%d:;", t.id)
	}
}

// rangeStmt: for i := range n, over a hidden counter (assigning the
// variable in the body does not change the iterations, as in Go).
func (c *cfunc) rangeStmt(s *ast.RangeStmt, label string) {
	if c.rangeSlice(s, label) {
		return
	}
	t := c.typeOf(s.X)
	c.line("{")
	c.depth++
	n, k := c.newTmp(), c.newTmp()
	c.line("%s %s = %s;", t.C(), n, c.expr(s.X))
	bt := c.push(s, label, false, false)
	cond := k + " < " + n
	if t.Signed() && t.Bits() == 64 {
		cond = cmp64(k, token.LSS, n)
	}
	c.line("for (%s %s = 0; %s; %s++) {", t.C(), k, cond, k)
	c.depth++
	c.flatLoopTop()
	if s.Key != nil {
		if s.Tok == token.DEFINE {
			c.declare(s.Key.(*ast.Ident), k)
		} else {
			c.store(s.Key, func() string { return k })
		}
	}
	c.rangeEnd(s, bt)
}

// rangeEnd writes the body of range loop s, whose branch target is bt,
// and closes the loop and the block around it.
func (c *cfunc) rangeEnd(s *ast.RangeStmt, bt *branchTarget) {
	body := c.sub(func() { c.stmts(s.Body.List) })
	c.b.WriteString(body)
	if bt.contUs {
		c.line("gompt_c%d:;", bt.id)
	}
	c.depth--
	c.line("}")
	c.pop()
	if bt.breakUsed {
		c.line("gompt_b%d:;", bt.id)
	}
	c.depth--
	c.line("}")
}

// switchStmt: an if chain over the tag, evaluated once, in Go's order,
// with the default case last.
func (c *cfunc) switchStmt(s *ast.SwitchStmt, label string) {
	c.line("{")
	c.depth++
	c.stmt(s.Init, "")
	tag := ""
	var tagType ir.Scalar
	if s.Tag != nil {
		tagType = c.typeOf(s.Tag)
		tag = c.newTmp()
		c.line("%s %s = %s;", tagType.C(), tag, c.expr(s.Tag))
	}
	bt := c.push(s, label, true, false)
	body := c.sub(func() {
		var def *ast.CaseClause
		first := true
		for _, cc := range s.Body.List {
			cl := cc.(*ast.CaseClause)
			if cl.List == nil {
				def = cl
				continue
			}
			var conds []string
			for _, e := range cl.List {
				if tag == "" {
					conds = append(conds, c.expr(e))
				} else {
					conds = append(conds, "("+tag+" == "+c.convertTo(e, tagType)+")")
				}
			}
			kw := "if"
			if !first {
				kw = "} else if"
			}
			first = false
			c.line("%s (%s) {", kw, bare(strings.Join(conds, " || ")))
			c.block(cl.Body)
		}
		switch {
		case def != nil && first:
			c.line("{")
			c.block(def.Body)
			c.line("}")
		case def != nil:
			c.line("} else {")
			c.block(def.Body)
			c.line("}")
		case !first:
			c.line("}")
		}
	})
	c.b.WriteString(body)
	c.pop()
	if bt.breakUsed {
		c.line("gompt_b%d:;", bt.id)
	}
	c.depth--
	c.line("}")
}

func (c *cfunc) branch(s *ast.BranchStmt) {
	var t *branchTarget
	for i := len(c.stack) - 1; i >= 0; i-- {
		x := c.stack[i]
		if s.Label != nil {
			if x.label == s.Label.Name {
				t = x
				break
			}
			continue
		}
		if s.Tok == token.CONTINUE && x.isSwitch {
			continue
		}
		t = x
		break
	}
	if t == nil {
		panic("gompt-kernels: branch without a target passed the check")
	}
	innermostLoop := func() bool {
		for i := len(c.stack) - 1; i >= 0; i-- {
			if !c.stack[i].isSwitch {
				return c.stack[i] == t
			}
		}
		return false
	}
	switch s.Tok {
	case token.BREAK:
		if !t.isSwitch && innermostLoop() {
			c.line("break;")
			return
		}
		t.breakUsed = true
		c.line("goto gompt_b%d;", t.id)
	case token.CONTINUE:
		if !t.hasPost && innermostLoop() {
			c.line("continue;")
			return
		}
		t.contUs = true
		c.line("goto gompt_c%d;", t.id)
	}
}
