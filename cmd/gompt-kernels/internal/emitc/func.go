package emitc

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"strconv"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// cfunc emits one Go function (a kernel's body or a helper) as an OpenCL C
// function with Go's semantics.
type cfunc struct {
	g     *ir.Program
	f     *ir.Fn
	pre   *prelude
	b     strings.Builder
	depth int
	names map[*types.Var]string
	used  map[string]bool
	lens  map[*ir.Param]string // a buffer's length variable
	views map[*types.Var]*cview
	tmp   int
	stack []*branchTarget
	file  *cfile // the kernel file f is emitted into: its checks
	marks int    // the checks and calls of checking helpers emitted so far

	// callsFirst is set while an assignment's, a declaration's or an
	// expression statement's values are written, where each is
	// evaluated once, unconditionally: a call of a helper that writes a
	// slice is then made into a temporary on a line of its own, before
	// the statement reads any element, as gc orders it (C leaves the
	// operands of an expression unsequenced: clang read h[i] before
	// h[i] += take(h, i) changed it).
	callsFirst bool
}

// cfile is what the functions of one kernel's OpenCL C file share: the
// kernel, its run-time checks (device.Kernel.Faults) and which of its
// helpers make checks. Every function of a file whose kernel checks takes
// the fault record and the work-item's stop flag as its last parameters;
// a failed check records itself (the first in the kernel) and sets the
// flag, and each function returns once the statement that failed is done.
type cfile struct {
	k      *ir.Kernel
	faulty map[*ir.Fn]bool
	used   map[int]bool // the plan's sites the C checks
}

// Placeholders in a function's C text, replaced once the file's checks
// are known (see finishFile and cfunc.emit).
const (
	faultParams     = "/*GOMPT_FAULT_PARAMS*/"
	faultParamsNext = ", /*GOMPT_FAULT_PARAMS*/"
	faultArgs       = "/*GOMPT_FAULT_ARGS*/"
	faultArgsNext   = ", /*GOMPT_FAULT_ARGS*/"
	stopMark        = "/*GOMPT_STOP*/"
)

// checking reports whether the file's kernel checks its indices and
// divisors (not check=off).
func (c *cfunc) checking() bool { return !c.file.k.Nocheck }

// site returns the C arguments that pass the check of kind at node to a
// checking helper: the fault record, the stop flag and the check's number
// in the kernel's plan (plan.Sites). A check the plan lacks is the
// generator's own error.
func (c *cfunc) site(kind string, node ast.Node) string {
	n, ok := c.file.k.SiteOf[ir.SiteKey{Kind: kind, Node: node}]
	if !ok {
		panic(fmt.Sprintf("gompt-kernels: the C of %s checks %s at %s, which its plan has no site for", c.file.k.Name, kind, c.g.Rel(node.Pos())))
	}
	c.file.used[n] = true
	c.marks++
	return "gompt_fault, gompt_stop, " + ir.Itoa(n) + "L"
}

// branchTarget is a loop or switch that break or continue may leave.
type branchTarget struct {
	node              ast.Stmt
	label             string
	isSwitch          bool
	hasPost           bool
	id                int
	breakUsed, contUs bool
}

func (c *cfunc) info() *types.Info { return c.g.P.Info }

func (c *cfunc) line(format string, args ...any) {
	c.b.WriteString(strings.Repeat("  ", c.depth))
	fmt.Fprintf(&c.b, format, args...)
	c.b.WriteByte('\n')
}

func (c *cfunc) newTmp() string {
	c.tmp++
	return "gompt_t" + ir.Itoa(c.tmp)
}

func (c *cfunc) typeOf(e ast.Expr) ir.Scalar {
	s, _ := ir.ScalarOf(c.info().TypeOf(e))
	return s
}

// helperName is the C name of a //gompt:func helper, and bodyName that of
// a kernel's body function.
func helperName(f *ir.Fn) string { return "gompt_f_" + f.Name }

func bodyName(k *ir.Kernel) string { return "gompt_body_" + k.Name }

// emit writes f as a C function. The parameters of a kernel body are the
// Go function's, each slice followed by its length.
func (c *cfunc) emit() string {
	c.names = map[*types.Var]string{}
	c.used = map[string]bool{}
	c.lens = map[*ir.Param]string{}
	var params []string
	for _, p := range c.f.Params {
		name := ir.CName(p.Name, c.used)
		c.names[p.Obj] = name
		if p.Slice {
			cst := ""
			if !p.Written {
				cst = "const "
			}
			space := "__global"
			if c.isReduceArray(p) {
				space = "__local" // the team's private copy (reducearray.go)
			}
			params = append(params, fmt.Sprintf("%s %s%s *%s", space, cst, p.T.CMem(), name))
			ln := ir.CName("gompt_len_"+p.Name, c.used)
			c.lens[p] = ln
			params = append(params, "long "+ln)
		} else {
			params = append(params, p.T.C()+" "+name)
		}
	}
	params = append(params, c.teamParams()...)
	ret := "void"
	if c.f.Result != nil {
		ret = c.f.Result.C()
	}
	name := helperName(c.f)
	attrs := "static"
	if c.f.Kernel != nil {
		name = bodyName(c.f.Kernel)
		attrs = inl
	}
	if len(params) == 0 {
		params = append(params, faultParams)
	} else {
		params[len(params)-1] += faultParamsNext
	}
	c.line("%s %s %s(%s) {", attrs, ret, name, strings.Join(params, ", "))
	c.depth++
	c.stmts(c.f.Decl.Body.List)
	c.depth--
	c.line("}")
	text := c.b.String()
	// A function that makes checks, or calls a helper that does, returns
	// once its work-item's stop flag is set: after each statement that
	// checks, and at the top of each loop (whose condition may check).
	// Not in a team kernel, whose threads must all reach its barriers:
	// there a failed check records itself and the thread goes on, its
	// failed loads reading 0 and its failed stores dropped.
	stop := ""
	if c.marks > 0 {
		c.file.faulty[c.f] = true
		switch {
		case c.file.k.Team > 0:
		case c.f.Result != nil:
			stop = "if (*gompt_stop) return " + c.zero(*c.f.Result) + ";"
		default:
			stop = "if (*gompt_stop) return;"
		}
	}
	var out strings.Builder
	for _, ln := range strings.SplitAfter(text, "\n") {
		if t := strings.TrimSpace(ln); t == stopMark {
			if stop != "" {
				out.WriteString(strings.Replace(ln, stopMark, stop, 1))
			}
			continue
		}
		out.WriteString(ln)
	}
	return out.String()
}

// finishFile replaces the fault placeholders of a kernel file's functions
// and calls: the fault record and the stop flag where the kernel checks,
// nothing where it does not.
func finishFile(code string, checks bool) string {
	params, paramsNext, args, argsNext := "", "", "", ""
	if checks {
		params = "__global long *gompt_fault, int *gompt_stop"
		paramsNext, args = ", "+params, "gompt_fault, gompt_stop"
		argsNext = ", " + args
	}
	return strings.NewReplacer(faultParamsNext, paramsNext, faultParams, params, faultArgsNext, argsNext, faultArgs, args).Replace(code)
}

func (c *cfunc) stmts(list []ast.Stmt) {
	for _, s := range list {
		marks := c.marks
		c.stmt(s, "")
		if c.marks != marks {
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

// declare declares local id with initial value val (its zero value when
// empty), or assigns it when id names an existing variable (a := that
// redeclares).
func (c *cfunc) declare(id *ast.Ident, val string) {
	if id.Name == "_" {
		if val != "" {
			c.line("(void)(%s);", val)
		}
		return
	}
	v, _ := c.info().Defs[id].(*types.Var)
	if ir.TeamArrayOf(c.info(), c.f, id) != nil {
		return // an argument of the body: the entry's __local array
	}
	if v == nil {
		c.line("%s = %s;", c.names[c.info().Uses[id].(*types.Var)], val)
		return
	}
	t, _ := ir.ScalarOf(v.Type())
	if val == "" {
		val = c.zero(t)
	}
	name := ir.CName(id.Name, c.used)
	c.names[v] = name
	c.line("%s %s = %s;", t.C(), name, val)
}

func (c *cfunc) zero(t ir.Scalar) string {
	switch {
	case t.IsBool():
		return "false"
	case t.IsFloat():
		return c.constant(constant.MakeInt64(0), t)
	}
	return "(" + t.C() + ")0"
}

func (c *cfunc) assign(s *ast.AssignStmt) {
	switch s.Tok {
	case token.DEFINE:
		if len(s.Lhs) == 1 {
			c.declare(s.Lhs[0].(*ast.Ident), c.convertTo(s.Rhs[0], c.typeOf(s.Lhs[0])))
			return
		}
		vals := make([]string, len(s.Rhs))
		for i, r := range s.Rhs {
			t := c.typeOf(s.Lhs[i])
			if s.Lhs[i].(*ast.Ident).Name == "_" {
				t = c.typeOf(r)
			}
			tmp := c.newTmp()
			c.line("%s %s = %s;", t.C(), tmp, c.convertTo(r, t))
			vals[i] = tmp
		}
		for i, l := range s.Lhs {
			c.declare(l.(*ast.Ident), vals[i])
		}
	case token.ASSIGN:
		if len(s.Lhs) == 1 {
			if c.reduceArrayMinMax(s) {
				return
			}
			c.store(s.Lhs[0], func() string { return c.convertTo(s.Rhs[0], c.typeOf(s.Lhs[0])) })
			return
		}
		// Go evaluates the index operands on the left and the values on
		// the right first, then assigns from left to right.
		type target struct {
			e   ast.Expr
			idx string
		}
		var targets []target
		for _, l := range s.Lhs {
			t := target{e: l}
			if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
				t.idx = c.newTmp()
				c.line("long %s = %s;", t.idx, c.index(ix.Index))
			}
			targets = append(targets, t)
		}
		vals := make([]string, len(s.Rhs))
		for i, r := range s.Rhs {
			t := c.typeOf(s.Lhs[i])
			if id, ok := s.Lhs[i].(*ast.Ident); ok && id.Name == "_" {
				t = c.typeOf(r)
			}
			tmp := c.newTmp()
			c.line("%s %s = %s;", t.C(), tmp, c.convertTo(r, t))
			vals[i] = tmp
		}
		for i, t := range targets {
			val := vals[i]
			if t.idx != "" {
				ix := ast.Unparen(t.e).(*ast.IndexExpr)
				c.storeAt(ix, t.idx, val)
			} else {
				c.store(t.e, func() string { return val })
			}
		}
	default:
		op := map[token.Token]token.Token{
			token.ADD_ASSIGN: token.ADD, token.SUB_ASSIGN: token.SUB, token.MUL_ASSIGN: token.MUL,
			token.QUO_ASSIGN: token.QUO, token.REM_ASSIGN: token.REM, token.AND_ASSIGN: token.AND,
			token.OR_ASSIGN: token.OR, token.XOR_ASSIGN: token.XOR, token.SHL_ASSIGN: token.SHL,
			token.SHR_ASSIGN: token.SHR, token.AND_NOT_ASSIGN: token.AND_NOT,
		}[s.Tok]
		c.opAssign(s.Lhs[0], op, func() string { return "" }, s.Rhs[0])
	}
}

// store assigns val() to l: a local, a parameter, _ or a buffer element.
func (c *cfunc) store(l ast.Expr, val func() string) {
	switch l := ast.Unparen(l).(type) {
	case *ast.Ident:
		if l.Name == "_" {
			c.line("(void)(%s);", val())
			return
		}
		c.line("%s = %s;", c.names[c.info().Uses[l].(*types.Var)], val())
	case *ast.IndexExpr:
		if c.teamStore(l, val) {
			return
		}
		idx := c.index(l.Index)
		v := val()
		c.storeAt(l, idx, v)
	}
}

// storeAt stores v into element ix, of a buffer or a team array, at the
// C index idx (already evaluated: a tuple assignment evaluates its
// targets' indexes before its values, as Go does).
func (c *cfunc) storeAt(ix *ast.IndexExpr, idx, v string) {
	if c.teamStoreAt(ix, idx, v) || c.viewStoreAt(ix, idx, v) {
		return
	}
	p := c.bufferOf(ix)
	name := c.names[p.Obj]
	if c.proven(ix) {
		c.line("%s[%s] = %s;", name, idx, v)
		return
	}
	c.line("%s(%s, %s, %s, %s, %s);", c.pre.storeChecked(c.file.k, p.T), name, c.lens[p], idx, v, c.site(ir.SiteIndex, ix))
}

// proven reports whether the index of ix needs no check: the prover
// proved it in range, or the kernel has check=off.
func (c *cfunc) proven(ix *ast.IndexExpr) bool {
	return !c.checking() || c.f.Kernel != nil && c.f.Kernel.Proven[ix]
}

// opAssign is l op= r (rhs() when r is nil: ++ and --).
func (c *cfunc) opAssign(l ast.Expr, op token.Token, rhs func() string, r ...ast.Expr) {
	if c.reduceArrayOpAssign(l, op, rhs, r) {
		return
	}
	t := c.typeOf(l)
	operand := func() (string, ast.Expr) {
		if len(r) == 0 {
			return rhs(), nil
		}
		if op == token.SHL || op == token.SHR {
			return c.expr(r[0]), r[0]
		}
		return c.convertTo(r[0], t), r[0]
	}
	switch l := ast.Unparen(l).(type) {
	case *ast.Ident:
		name := c.names[c.info().Uses[l].(*types.Var)]
		v, re := operand()
		c.line("%s = %s;", name, c.binop(op, t, name, v, re))
	case *ast.IndexExpr:
		// A buffer's element, or a team array's (tested even where
		// proven, as teamStore says).
		var name, n string
		team := ir.TeamArrayOf(c.info(), c.f, l.X)
		if team != nil {
			name, n = c.names[team], fmt.Sprintf("%dL", c.f.Kernel.TeamArrays[team])
		} else {
			_, name, n = c.elemBuffer(l) // a buffer's, or a view's
		}
		c.checkedAt(l, n, team != nil, func(idx string) {
			v, re := operand()
			elem := name + "[" + idx + "]"
			if team != nil || !c.proven(l) {
				vt := t // a shift's count keeps its own type
				if op == token.SHL || op == token.SHR {
					vt = c.typeOf(re)
				}
				val := c.newTmp()
				c.line("%s %s = %s;", vt.C(), val, v)
				v = val
			}
			c.line("%s = %s;", elem, c.binop(op, t, elem, v, re))
		})
	}
}

// checkedAt writes a block that evaluates ix's index once, into the
// temporary it passes to body, and runs body where the index is below
// length n; an index outside fails ix's check. A proven index is not
// tested, unless always (team arrays and the private copies of array
// reductions are tested even where proven: see teamStore).
func (c *cfunc) checkedAt(ix *ast.IndexExpr, n string, always bool, body func(idx string)) {
	idx := c.newTmp()
	c.line("{")
	c.depth++
	c.line("long %s = %s;", idx, c.index(ix.Index))
	c.checkedIdx(ix, idx, n, always, body)
	c.depth--
	c.line("}")
}

// checkedIdx is checkedAt for an index already evaluated into idx.
func (c *cfunc) checkedIdx(ix *ast.IndexExpr, idx, n string, always bool, body func(idx string)) {
	if c.proven(ix) && !always {
		body(idx)
	} else {
		c.line("if ((ulong)%s < (ulong)%s) {", idx, n)
		c.depth++
		body(idx)
		c.depth--
		if c.proven(ix) {
			c.line("}")
		} else {
			c.line("} else {")
			c.line("  %s(%s, %s, %s);", c.pre.fail(c.file.k), c.site(ir.SiteIndex, ix), idx, n)
			c.line("}")
		}
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
	c.line("{")
	c.depth++
	c.stmt(s.Init, "")
	t := c.push(s, label, false, s.Post != nil)
	c.line("for (;;) {")
	c.depth++
	if s.Cond != nil {
		c.line("if (!%s) break;", c.expr(s.Cond))
	}
	c.line("%s", stopMark)
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
	c.depth--
	c.line("}")
}

// sub returns what emit writes, without writing it.
func (c *cfunc) sub(emit func()) string {
	save := c.b
	c.b = strings.Builder{}
	emit()
	out := c.b.String()
	c.b = save
	return out
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

// bufferOf is the slice parameter ix indexes.
func (c *cfunc) bufferOf(ix *ast.IndexExpr) *ir.Param {
	id := ast.Unparen(ix.X).(*ast.Ident)
	return c.f.ByObj[c.info().Uses[id].(*types.Var)]
}

// index is an index expression as a C long.
func (c *cfunc) index(e ast.Expr) string {
	t := c.typeOf(e)
	s := c.expr(e)
	if t.Kind() == types.Int || t.Kind() == types.Int64 {
		return s
	}
	return "(long)(" + s + ")"
}

// convertTo is e converted to t, where Go converts it implicitly (an
// untyped constant takes its type from where it is used).
func (c *cfunc) convertTo(e ast.Expr, t ir.Scalar) string {
	tv := c.info().Types[e]
	if tv.Value != nil {
		return c.constant(tv.Value, t)
	}
	return c.expr(e)
}

// expr is e as a C expression of the C type of e's Go type.
func (c *cfunc) expr(e ast.Expr) string {
	tv := c.info().Types[e]
	if tv.Value != nil {
		t, _ := ir.ScalarOf(tv.Type)
		return c.constant(tv.Value, t)
	}
	if ix, ok := e.(*ast.IndexExpr); ok {
		if s, ok := c.teamLoad(ix); ok {
			return s
		}
		if s, ok := c.viewLoad(ix); ok {
			return s
		}
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.expr(e.X)
	case *ast.Ident:
		if v, ok := c.info().Uses[e].(*types.Var); ok {
			return c.names[v]
		}
		panic("gompt-kernels: identifier " + e.Name + " passed the check")
	case *ast.BinaryExpr:
		t := c.typeOf(e.X)
		if tv := c.info().Types[e.X]; tv.Value != nil && e.Op != token.SHL && e.Op != token.SHR {
			t = c.typeOf(e.Y)
		}
		switch e.Op {
		case token.LAND, token.LOR:
			x := c.expr(e.X)
			saved := c.callsFirst
			c.callsFirst = false // the right operand runs only where the left says
			y := c.expr(e.Y)
			c.callsFirst = saved
			return "(" + x + " " + e.Op.String() + " " + y + ")"
		case token.SHL, token.SHR:
			t = c.typeOf(e)
			return c.binop(e.Op, t, c.convertTo(e.X, t), c.expr(e.Y), e.Y)
		}
		return c.binop(e.Op, t, c.convertTo(e.X, t), c.convertTo(e.Y, t), e.Y)
	case *ast.UnaryExpr:
		t := c.typeOf(e)
		x := c.expr(e.X)
		switch e.Op {
		case token.ADD:
			return x
		case token.NOT:
			return "(!" + x + ")"
		case token.XOR:
			return "((" + t.C() + ")(~" + x + "))"
		case token.SUB:
			if t.IsFloat() {
				return "(-" + x + ")"
			}
			return "((" + t.C() + ")((" + t.CUnsigned() + ")0 - (" + t.CUnsigned() + ")" + x + "))"
		}
	case *ast.IndexExpr:
		p := c.bufferOf(e)
		idx := c.index(e.Index)
		if c.proven(e) {
			return c.names[p.Obj] + "[" + idx + "]"
		}
		return c.pre.loadChecked(c.file.k, p.T) + "(" + c.names[p.Obj] + ", " + c.lens[p] + ", " + idx + ", " + c.site(ir.SiteIndex, e) + ")"
	case *ast.CallExpr:
		return c.call(e)
	}
	panic(fmt.Sprintf("gompt-kernels: expression %T passed the check", e))
}

// Signed 64-bit orderings. Mesa's OpenCL compiler (22.3; seen with
// rusticl on llvmpipe) gets a signed 64-bit <, <=, > or >= between a
// value sign-extended from 32 bits and a constant wrong, (long)x < 5
// false and (long)x > 5 true for every int x, whatever the int's source
// (see device/opencl's SextCompareDefine). The constant need not be the
// source's: it folds a helper's argument in, and a loop counter once it
// unrolls the loop, so that a loop for (k = 0; k < (long)x; k++) that
// breaks after 20 turns ran 20 for x = -5. So the generator writes every
// signed 64-bit ordering as cmp64: GOMPT_CMP64(x, op, y) (cmp64Macro),
// the plain comparison but where the OpenCL plugin defines
// GOMPT_SEXT_COMPARE, on such a driver: there an unsigned comparison of
// the operands with their sign bits flipped, which orders them as the
// signed one does and which the driver gets right. The code other
// drivers build, and the PTX, are what they were.

// cmp64 is x op y, signed 64-bit operands, op <, <=, > or >=.
func cmp64(x string, op token.Token, y string) string {
	return cmp64Name + "(" + x + ", " + op.String() + ", " + y + ")"
}

// binop is x op y for operands of type t (for shifts, the left operand's
// type; y is then any integer type), with Go's integer rules: +, - and *
// wrap (computed in the unsigned type, since signed overflow is undefined
// in C), / and % go through helpers unless the divisor is a constant that
// cannot trap, shifts by the width or more give 0 (or -1).
func (c *cfunc) binop(op token.Token, t ir.Scalar, x, y string, ye ast.Expr) string {
	var yc constant.Value
	if ye != nil {
		yc = c.info().Types[ye].Value
	}
	switch op {
	case token.LSS, token.LEQ, token.GTR, token.GEQ:
		if t.IsInt() && t.Signed() && t.Bits() == 64 {
			return cmp64(x, op, y)
		}
		return "(" + x + " " + op.String() + " " + y + ")"
	case token.EQL, token.NEQ:
		return "(" + x + " " + op.String() + " " + y + ")"
	case token.LAND, token.LOR:
		return "(" + x + " " + op.String() + " " + y + ")"
	}
	if t.IsFloat() {
		return "(" + x + " " + op.String() + " " + y + ")"
	}
	if t.IsBool() {
		return "(" + x + " " + op.String() + " " + y + ")"
	}
	cast := func(s string) string { return "((" + t.C() + ")(" + s + "))" }
	u := t.CUnsigned()
	switch op {
	case token.ADD, token.SUB, token.MUL:
		if !t.Signed() && t.Bits() >= 32 {
			return "(" + x + " " + op.String() + " " + y + ")"
		}
		return cast("(" + u + ")" + x + " " + op.String() + " (" + u + ")" + y)
	case token.QUO, token.REM:
		if yc != nil {
			if v, ok := constant.Int64Val(constant.ToInt(yc)); ok && v != 0 && v != -1 {
				return cast(x + " " + op.String() + " " + y)
			}
		}
		if ye != nil && c.checking() {
			return c.pre.divChecked(c.file.k, t, op == token.REM) + "(" + x + ", " + y + ", " + c.site(ir.SiteDivide, ye) + ")"
		}
		return c.pre.div(t, op == token.REM) + "(" + x + ", " + y + ")"
	case token.AND, token.OR, token.XOR:
		return cast(x + " " + op.String() + " " + y)
	case token.AND_NOT:
		return cast(x + " & ~" + y)
	case token.SHL, token.SHR:
		if yc != nil {
			v, exact := constant.Uint64Val(constant.ToInt(yc))
			if exact && v < uint64(t.Bits()) {
				if op == token.SHL {
					return cast("(" + u + ")" + x + " << " + strconv.FormatUint(v, 10))
				}
				return cast(x + " >> " + strconv.FormatUint(v, 10))
			}
			if op == token.SHL || !t.Signed() {
				return "((" + t.C() + ")0)"
			}
			return cast(x + " >> " + ir.Itoa(t.Bits()-1))
		}
		return c.pre.shift(t, op == token.SHL) + "(" + x + ", (ulong)(" + y + "))"
	}
	panic("gompt-kernels: operator " + op.String())
}

func (c *cfunc) call(e *ast.CallExpr) string {
	fun := ast.Unparen(e.Fun)
	tv := c.info().Types[fun]
	switch {
	case tv.IsType():
		to, _ := ir.ScalarOf(tv.Type)
		return c.conversion(e.Args[0], to)
	case tv.IsBuiltin():
		switch fun.(*ast.Ident).Name {
		case "len":
			_, n, _, _ := c.cslice(e.Args[0]) // a buffer's, or a view's
			return n
		case "min", "max":
			t := c.typeOf(e)
			isMin := fun.(*ast.Ident).Name == "min"
			h := c.pre.minmax(t, isMin)
			acc := c.convertTo(e.Args[0], t)
			for _, a := range e.Args[1:] {
				acc = h + "(" + acc + ", " + c.convertTo(a, t) + ")"
			}
			return acc
		}
	}
	if name, ok := ir.AtomicCallee(c.info(), e); ok {
		return c.atomicCall(e, name)
	}
	if ir.IsBarrier(c.info(), e) {
		return "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"
	}
	if sel, ok := fun.(*ast.SelectorExpr); ok {
		mf := ir.MathFuncs[sel.Sel.Name]
		var args []any
		for i, a := range e.Args {
			var t ir.Scalar
			switch mf.Args[min(i, len(mf.Args)-1):][0] {
			case 'f':
				t = ir.Scalar(types.Float64)
				if mf.Args == "f32" {
					t = ir.Scalar(types.Float32)
				}
			case 'i':
				t = ir.Scalar(types.Int)
			case 'u':
				t = ir.Scalar(types.Uint32)
				if mf.Args == "u64" {
					t = ir.Scalar(types.Uint64)
				}
			}
			args = append(args, c.convertTo(a, t))
		}
		if strings.HasPrefix(mf.C, "gompt_") {
			c.pre.mathHelper(mf.C[:strings.Index(mf.C, "(")])
		}
		return "(" + fmt.Sprintf(mf.C, args...) + ")"
	}
	callee := c.g.Funcs[c.info().Uses[fun.(*ast.Ident)].(*types.Func)]
	var args []string
	for i, a := range e.Args {
		p := callee.Params[i]
		if p.Slice {
			ptr, n, _, _ := c.cslice(a) // a buffer, or a view
			args = append(args, ptr, n)
			continue
		}
		args = append(args, c.convertTo(a, p.T))
	}
	if c.file.faulty[callee] {
		c.marks++
	}
	call := helperName(callee) + "(" + faultArgs + ")"
	if len(args) > 0 {
		call = helperName(callee) + "(" + strings.Join(args, ", ") + faultArgsNext + ")"
	}
	if c.callsFirst && callee.Result != nil && writesSlice(callee) {
		tmp := c.newTmp()
		c.line("%s %s = %s;", callee.Result.C(), tmp, call)
		return tmp
	}
	return call
}

// writesSlice reports whether f writes an element of a slice it is given.
func writesSlice(f *ir.Fn) bool {
	for _, p := range f.Params {
		if p.Slice && p.Written {
			return true
		}
	}
	return false
}

// conversion is T(e) with Go's conversion rules.
func (c *cfunc) conversion(e ast.Expr, to ir.Scalar) string {
	tv := c.info().Types[e]
	if tv.Value != nil {
		return c.constant(tv.Value, to)
	}
	from := c.typeOf(e)
	x := c.expr(e)
	switch {
	case from == to:
		return x
	case from.IsFloat() && to.IsInt():
		return c.pre.cvt(to, from) + "(" + x + ")"
	}
	return "((" + to.C() + ")" + x + ")"
}

// constant is v as a C literal of type t.
func (c *cfunc) constant(v constant.Value, t ir.Scalar) string {
	switch {
	case t.IsBool():
		if constant.BoolVal(v) {
			return "true"
		}
		return "false"
	case t.IsFloat():
		f, _ := constant.Float64Val(constant.ToFloat(v))
		if t.Bits() == 32 {
			f32, _ := constant.Float32Val(constant.ToFloat(v))
			return floatLit(float64(f32), true)
		}
		return floatLit(f, false)
	}
	iv := constant.ToInt(v)
	if t.Signed() {
		n, _ := constant.Int64Val(iv)
		switch {
		case t.Bits() == 64 && n == math.MinInt64:
			return "((long)0x8000000000000000UL)"
		case t.Bits() == 64:
			return "(" + strconv.FormatInt(n, 10) + "L)"
		case t.Bits() == 32 && n == math.MinInt32:
			return "((int)0x80000000U)"
		case t.Bits() == 32:
			return "(" + strconv.FormatInt(n, 10) + ")"
		}
		return "((" + t.C() + ")" + strconv.FormatInt(n, 10) + ")"
	}
	n, _ := constant.Uint64Val(iv)
	switch t.Bits() {
	case 64:
		return strconv.FormatUint(n, 10) + "UL"
	case 32:
		return strconv.FormatUint(n, 10) + "U"
	}
	return "((" + t.C() + ")" + strconv.FormatUint(n, 10) + "U)"
}

// floatLit is f exactly, as a C hexadecimal floating literal (f32: with
// the f suffix).
func floatLit(f float64, f32 bool) string {
	s := strconv.FormatFloat(f, 'x', -1, 64)
	if f32 {
		s = strconv.FormatFloat(f, 'x', -1, 32)
		return "(" + s + "f)"
	}
	return "(" + s + ")"
}

// bare is s without the parentheses around it, if it has them: C warns
// of "if ((a == b))".
func bare(s string) string {
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return s
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i != len(s)-1 {
				return s
			}
		}
	}
	return s[1 : len(s)-1]
}
