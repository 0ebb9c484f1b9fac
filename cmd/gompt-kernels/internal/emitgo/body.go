package emitgo

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// gobody writes a kernel's Go function body into its Go image, as Go: the
// image runs it at each point of its range without a call, and reads and
// writes the elements whose index the prover proved in range through
// their address, with no bounds test (an index it could not prove keeps
// Go's test, and its panic).
type gobody struct {
	g     *ir.Program
	k     *ir.Kernel
	w     *goWriter
	sb    strings.Builder
	depth int

	ret    func() string // what a return statement becomes
	retVal string        // a reduction's value variable
	used   map[*types.Var]bool

	// A lockstep image's block-level writer has ls and lanesOf, which
	// writes a leaf; a leaf's writer has ls, leaf and hoist (the block
	// level, where it computes the leaf's uniform subexpressions once).
	ls         *ir.Lockstep
	lane       *laneState
	lanesOf    func(s ast.Stmt)
	jam        func(s *ast.ForStmt) bool // writes a uniform loop's turns together where it can (jammable)
	subst      map[*types.Var]string     // variables written as expressions (a jammed turn's counter)
	noJam      bool                      // writing a planned PointJam's or SumJam's loop as written
	leaf       bool
	hoist      *gobody
	hoisted    []string
	leafLocal  map[*types.Var]bool
	leafWrites map[*ir.Param]bool // the buffers the leaf stores into (writesOf)
	top        ast.Stmt           // the leaf's own statement
	simpleLeaf bool               // the leaf is a simple statement: every lane runs all of it
	cond       int                // inside the right operand of && or ||: run at some lanes only
	pos        string             // the source position of the statement being written ("heat.go:14")
	resliced   map[*ir.Param]bool // buffers resliced to gomptHi0, read and written as slices (plan.Resliced)
	rows       *ir.Rows           // the rows of the loop's buffers (rowsLoop)
	loopRows   []*ir.Rows         // the rows of the counted loops being written (loopRows), innermost last
}

// defName is the name a declaration gives the variable n defines: its
// own, or a jammed turn's (subst).
func (b *gobody) defName(n *ast.Ident) string {
	if v, ok := b.info().Defs[n].(*types.Var); ok {
		if t, ok := b.subst[v]; ok {
			return t
		}
	}
	return n.Name
}

// line writes a line of the image, marked with the position of the
// statement it comes from (see posMark), so that a panic there (Go's
// bounds and division checks) names the kernel's source line.
func (b *gobody) line(format string, args ...any) {
	b.sb.WriteString(strings.Repeat("\t", b.depth))
	fmt.Fprintf(&b.sb, format, args...)
	if b.pos != "" {
		b.sb.WriteString(" " + posMark + b.pos)
	}
	b.sb.WriteByte('\n')
}

func (b *gobody) info() *types.Info { return b.g.P.Info }

// base is the name of buffer p's base address variable.
func base(p *ir.Param) string { return "gomptP" + ir.UpperFirst(p.Name) }

func (b *gobody) stmts(list []ast.Stmt) {
	for _, s := range list {
		b.stmt(s)
	}
}

// srcPos is the position of n as an image's lines are marked with it
// ("heat.go:14").
func srcPos(g *ir.Program, n ast.Node) string { return srcAt(g, n.Pos()) }

func srcAt(g *ir.Program, pos token.Pos) string {
	p := g.P.Fset.Position(pos)
	return filepath.Base(p.Filename) + ":" + strconv.Itoa(p.Line)
}

// closing writes a closing line (a brace) at the source position pos (the
// user's brace), so that the image's lines follow the source's, without a
// //line directive between them.
func (b *gobody) closing(pos token.Pos, text string) {
	saved := b.pos
	if b.pos != "" && pos.IsValid() {
		b.pos = srcAt(b.g, pos)
	}
	b.line("%s", text)
	b.pos = saved
}

// plain writes a line that holds none of the kernel's code (a loop over
// lanes or threads): it has no position of its own, and goes on from the
// line before it.
func (b *gobody) plain(format string, args ...any) {
	saved := b.pos
	b.pos = ""
	b.line(format, args...)
	b.pos = saved
}

func (b *gobody) stmt(s ast.Stmt) {
	if s != nil {
		saved := b.pos
		b.pos = srcPos(b.g, s)
		defer func() { b.pos = saved }()
	}
	if b.ls != nil && !b.leaf && b.lanesOf != nil && b.isLeaf(s) {
		b.lanesOf(s)
		return
	}
	if f, ok := s.(*ast.ForStmt); ok && b.jam != nil && b.jam(f) {
		return
	}
	if b.leaf {
		b.declares(s)
	}
	switch s := s.(type) {
	case nil, *ast.EmptyStmt:
	case *ast.BlockStmt:
		b.line("{")
		b.depth++
		b.stmts(s.List)
		b.depth--
		b.closing(s.Rbrace, "}")
	case *ast.LabeledStmt:
		b.line("%s:", s.Label.Name)
		b.stmt(s.Stmt)
	case *ast.DeclStmt:
		gd := s.Decl.(*ast.GenDecl)
		if gd.Tok != token.VAR {
			return // constants are written as their values
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			var names []string
			for _, n := range vs.Names {
				names = append(names, b.defName(n))
			}
			decl := "var " + strings.Join(names, ", ")
			if vs.Type != nil {
				decl += " " + b.g.TypeString(b.info().TypeOf(vs.Type))
			}
			if len(vs.Values) > 0 {
				decl += " = " + b.exprList(vs.Values)
			}
			b.line("%s", decl)
		}
	case *ast.IfStmt:
		b.ifStmt(s, "")
	case *ast.ForStmt:
		if pj := b.k.PointJams[s]; pj != nil && b.ls == nil && !b.leaf && !b.noJam {
			b.pointJam(s, pj)
			return
		}
		if sj := b.k.SumJams[s]; sj != nil && b.ls == nil && !b.leaf && !b.noJam {
			b.sumJam(s, sj)
			return
		}
		if rs := b.k.LoopRows[s]; rs != nil && b.ls == nil && !b.leaf {
			b.loopRowsFor(s, rs)
			return
		}
		head := "for "
		if s.Init != nil || s.Post != nil {
			head += b.simple(s.Init) + "; "
			if s.Cond != nil {
				head += b.expr(s.Cond)
			}
			head += "; " + b.simple(s.Post)
		} else if s.Cond != nil {
			head += b.expr(s.Cond)
		}
		b.line("%s {", strings.TrimRight(head, " "))
		b.depth++
		b.stmts(s.Body.List)
		b.depth--
		b.closing(s.Body.Rbrace, "}")
	case *ast.RangeStmt:
		head := "for " + b.rangeVars(s)
		b.line("%srange %s {", head, b.expr(s.X))
		b.depth++
		b.stmts(s.Body.List)
		b.depth--
		b.closing(s.Body.Rbrace, "}")
	case *ast.SwitchStmt:
		head := "switch "
		if s.Init != nil {
			head += b.simple(s.Init) + "; "
		}
		if s.Tag != nil {
			head += b.expr(s.Tag)
		}
		b.line("%s {", strings.TrimRight(head, " "))
		for _, cc := range s.Body.List {
			cl := cc.(*ast.CaseClause)
			if cl.List == nil {
				b.closing(cl.Pos(), "default:")
			} else {
				saved := b.pos
				b.pos = srcPos(b.g, cl)
				b.line("case %s:", b.exprList(cl.List))
				b.pos = saved
			}
			b.depth++
			b.stmts(cl.Body)
			b.depth--
		}
		b.closing(s.Body.Rbrace, "}")
	case *ast.BranchStmt:
		if s.Label != nil {
			b.line("%s %s", s.Tok, s.Label.Name)
		} else {
			b.line("%s", s.Tok)
		}
	case *ast.ReturnStmt:
		if len(s.Results) > 0 {
			b.line("%s = %s", b.retVal, b.expr(s.Results[0]))
		}
		b.line("%s", b.ret())
	default:
		b.line("%s", b.simple(s))
	}
}

func (b *gobody) ifStmt(s *ast.IfStmt, prefix string) {
	head := prefix + "if "
	if s.Init != nil {
		head += b.simple(s.Init) + "; "
	}
	b.line("%s%s {", head, b.expr(s.Cond))
	b.depth++
	b.stmts(s.Body.List)
	b.depth--
	switch e := s.Else.(type) {
	case nil:
		b.closing(s.Body.Rbrace, "}")
	case *ast.IfStmt:
		b.sb.WriteString(strings.Repeat("\t", b.depth))
		b.sb.WriteString("} else ")
		save, savedPos := b.depth, b.pos
		b.depth = 0
		if b.pos != "" {
			b.pos = srcPos(b.g, e)
		}
		b.ifStmt(e, "")
		b.depth, b.pos = save, savedPos
	case *ast.BlockStmt:
		b.closing(s.Body.Rbrace, "} else {")
		b.depth++
		b.stmts(e.List)
		b.depth--
		b.closing(e.Rbrace, "}")
	}
}

// simple is a simple statement (an assignment, ++ or --, a call) on one
// line.
func (b *gobody) simple(s ast.Stmt) string {
	switch s := s.(type) {
	case nil:
		return ""
	case *ast.ExprStmt:
		return b.expr(s.X)
	case *ast.IncDecStmt:
		return b.expr(s.X) + s.Tok.String()
	case *ast.AssignStmt:
		lhs := b.exprList(s.Lhs)
		rhs := b.exprList(s.Rhs)
		if s.Tok == token.DEFINE {
			// A variable defined and not used is an error in Go,
			// which the user's function may get away with
			// (it was used in a part of the function not pasted).
			return lhs + " := " + rhs
		}
		return lhs + " " + s.Tok.String() + " " + rhs
	}
	panic(fmt.Sprintf("gompt-kernels: simple statement %T", s))
}

func (b *gobody) exprList(list []ast.Expr) string {
	var out []string
	for _, e := range list {
		out = append(out, b.expr(e))
	}
	return strings.Join(out, ", ")
}

// expr is e in Go: constants as their values, proven element accesses
// through their addresses.
func (b *gobody) expr(e ast.Expr) string {
	tv := b.info().Types[e]
	if tv.Value != nil {
		return goConstant(tv)
	}
	if b.leaf && b.hoist != nil && b.hoistable(e) {
		saved := b.hoist
		b.hoist = nil // the subexpression itself, written as it is
		text := b.expr(e)
		b.hoist = saved
		return saved.hoistExpr(text)
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return b.expr(e.X)
	case *ast.Ident:
		if v, ok := b.info().Uses[e].(*types.Var); ok {
			b.used[v] = true
			if t, ok := b.subst[v]; ok {
				return t
			}
			if arr, ok := array(b.ls, v); ok && b.leaf && !b.leafLocal[v] {
				return arr + laneIndex
			}
		} else if v, ok := b.info().Defs[e].(*types.Var); ok {
			if t, ok := b.subst[v]; ok {
				return t // a jammed turn's own local
			}
			if arr, ok := array(b.ls, v); ok && b.leaf && !b.leafLocal[v] {
				return arr + laneIndex
			}
		}
		return e.Name
	case *ast.BinaryExpr:
		x := b.expr(e.X)
		if e.Op == token.LAND || e.Op == token.LOR {
			b.cond++
			defer func() { b.cond-- }()
		}
		return "(" + x + " " + e.Op.String() + " " + b.expr(e.Y) + ")"
	case *ast.UnaryExpr:
		return "(" + e.Op.String() + b.expr(e.X) + ")"
	case *ast.IndexExpr:
		id := ast.Unparen(e.X).(*ast.Ident)
		p := b.k.ByObj[b.info().Uses[id].(*types.Var)]
		if r := b.rows.Row(e); r != nil {
			return r.Name + laneIndex
		}
		for _, rs := range b.loopRows {
			if r := rs.Row(e); r != nil {
				return r.Name + "[" + rs.Turn + "]"
			}
		}
		if p != nil && b.resliced[p] {
			b.used[p.Obj] = true
			return id.Name + "[" + b.expr(e.Index) + "]"
		}
		// An element proven in range that no row or reslicing reaches
		// (a reduction's, a team's, one at an index read from memory) is
		// read through the buffer's base address, without Go's bounds
		// test: with the test, the library's images took longer on one
		// core (kernels' benchmarks, 6 runs of each interleaved, low
		// ends, 2026-12-06): dot 6.02 ms against 5.59 (+7.7%),
		// histogram 1.72 ms against 1.60 (+7.4%), matmul_tiled 7.80 ms
		// against 7.60 (+2.6%), matmul's A[i*k+p] 190.7 us against 187.3
		// (+1.8%).
		if p != nil && b.k.Proven[e] {
			b.w.imports["unsafe"] = "unsafe"
			size := p.T.Bits() / 8
			if other, ok := b.laneOffset(e.Index); ok {
				// other + x at the block's lanes: one address per block
				// (other + the block's first point), and the lane's
				// element from it.
				// The block's elements as a slice of its width, as the
				// lanes' arrays are: Go drops the bounds test of
				// [gomptJ] in the loop up to that width.
				off := "gomptX0"
				if other != nil {
					off = b.expr(other) + " + gomptX0"
				}
				b.used[p.Obj] = true
				q := b.hoist.hoistExpr(fmt.Sprintf("%s[%s:][:gomptW]", id.Name, off))
				return q + laneIndex
			}
			if b.lane != nil {
				b.lane.bases[p] = true
			}
			idx := b.expr(e.Index)
			if t, ok := b.info().TypeOf(e.Index).(*types.Basic); ok && t.Info()&types.IsUntyped == 0 && t.Kind() != types.Int {
				idx = "int(" + idx + ")" // a uint8's b*4 would wrap
			}
			return fmt.Sprintf("*(*%s)(unsafe.Add(%s, %s*%d))", p.T.GoName(), base(p), idx, size)
		}
		v := b.info().Uses[id].(*types.Var)
		b.used[v] = true
		name := id.Name
		if t, ok := b.subst[v]; ok {
			name = t // a jammed turn's view
		}
		return name + "[" + b.expr(e.Index) + "]"
	case *ast.SliceExpr:
		return b.sliceExpr(e)
	case *ast.CallExpr:
		fun := ast.Unparen(e.Fun)
		ftv := b.info().Types[fun]
		switch {
		case ftv.IsType():
			return b.g.TypeString(ftv.Type) + "(" + b.expr(e.Args[0]) + ")"
		case ftv.IsBuiltin():
			if fun.(*ast.Ident).Name == "len" {
				id := ast.Unparen(e.Args[0]).(*ast.Ident)
				b.used[b.info().Uses[id].(*types.Var)] = true
				return "len(" + id.Name + ")"
			}
			return fun.(*ast.Ident).Name + "(" + b.exprList(e.Args) + ")"
		}
		if name, ok := ir.AtomicCallee(b.info(), e); ok {
			return b.atomicCall(e, name)
		}
		if sel, ok := fun.(*ast.SelectorExpr); ok {
			b.w.imports["math"] = "gomptmath"
			return "gomptmath." + sel.Sel.Name + "(" + b.exprList(e.Args) + ")"
		}
		for _, a := range e.Args {
			if id, ok := ast.Unparen(a).(*ast.Ident); ok {
				if v, ok := b.info().Uses[id].(*types.Var); ok {
					b.used[v] = true
				}
			}
		}
		return fun.(*ast.Ident).Name + "(" + b.exprList(e.Args) + ")"
	}
	panic(fmt.Sprintf("gompt-kernels: expression %T passed the check", e))
}

// goConstant is a constant as a Go expression of its type.
func goConstant(tv types.TypeAndValue) string {
	v := tv.Value
	var lit string
	switch v.Kind() {
	case constant.Bool:
		return strconv.FormatBool(constant.BoolVal(v))
	case constant.Int:
		if i, ok := constant.Int64Val(v); ok {
			lit = strconv.FormatInt(i, 10)
		} else {
			u, _ := constant.Uint64Val(v)
			lit = strconv.FormatUint(u, 10)
		}
	default:
		f, _ := constant.Float64Val(v)
		lit = strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(lit, ".eEn") {
			lit += ".0"
		}
	}
	b, ok := tv.Type.(*types.Basic)
	if !ok || b.Info()&types.IsUntyped != 0 {
		return lit
	}
	return b.Name() + "(" + lit + ")"
}

// array is the array holding varying local v in a lockstep image.
func array(ls *ir.Lockstep, v *types.Var) (string, bool) {
	if ls == nil {
		return "", false
	}
	a, ok := ls.Arrays[v]
	return a, ok
}

// isLeaf reports whether s, at a lockstep image's block level, runs at
// each point (a leaf) rather than once per block (ir.Lockstep.Leaf).
func (b *gobody) isLeaf(s ast.Stmt) bool { return b.ls.Leaf(b.g.P.Info, s) }

// declares records the locals s declares in a leaf: they are the point's
// own, not arrays.
func (b *gobody) declares(s ast.Stmt) {
	if b.leafLocal == nil {
		b.leafLocal = map[*types.Var]bool{}
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE && !b.topLeaf(s) {
			for _, l := range s.Lhs {
				if v, ok := b.info().Defs[l.(*ast.Ident)].(*types.Var); ok {
					b.leafLocal[v] = true
				}
			}
		}
	case *ast.DeclStmt:
		if !b.topLeaf(s) {
			for _, spec := range s.Decl.(*ast.GenDecl).Specs {
				if vs, ok := spec.(*ast.ValueSpec); ok {
					for _, n := range vs.Names {
						if v, ok := b.info().Defs[n].(*types.Var); ok {
							b.leafLocal[v] = true
						}
					}
				}
			}
		}
	case *ast.ForStmt:
		if s.Init != nil {
			b.declares(s.Init)
		}
	case *ast.RangeStmt:
		if id, ok := s.Key.(*ast.Ident); ok && s.Tok == token.DEFINE {
			if v, ok := b.info().Defs[id].(*types.Var); ok {
				b.leafLocal[v] = true
			}
		}
	case *ast.IfStmt:
		if s.Init != nil {
			b.declares(s.Init)
		}
	case *ast.SwitchStmt:
		if s.Init != nil {
			b.declares(s.Init)
		}
	}
}

// topLeaf reports whether s is a declaration at the block level (the leaf
// itself), whose variables are arrays.
func (b *gobody) topLeaf(s ast.Stmt) bool { return b.depth == 1 && b.top == s }

// hoistable reports whether e, in a leaf, is worth computing once per
// block: it depends on no point, reads nothing the leaf declares, is not a
// variable or constant, and cannot panic or act (no call but a
// conversion, no division, no element whose index is not proven), and
// reads no element of a buffer the leaf stores into: the leaf's stores
// (their targets too, which are elements and not values) change it.
func (b *gobody) hoistable(e ast.Expr) bool {
	switch ast.Unparen(e).(type) {
	case *ast.Ident, *ast.BasicLit:
		return false
	}
	if b.ls.DependsOn(b.g.P.Info, e) {
		return false
	}
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if v, isVar := b.info().Uses[n].(*types.Var); isVar && b.leafLocal[v] {
				ok = false
			}
		case *ast.CallExpr:
			if !b.info().Types[n.Fun].IsType() {
				ok = false
			}
		case *ast.BinaryExpr:
			if n.Op == token.QUO || n.Op == token.REM {
				ok = false
			}
		case *ast.IndexExpr:
			if !b.k.Proven[n] || b.writesInLeaf(n) {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// writesInLeaf reports whether ix is an element of a buffer that the leaf
// (b.top) stores into.
func (b *gobody) writesInLeaf(ix *ast.IndexExpr) bool {
	if b.leafWrites == nil {
		b.leafWrites = writesOf(b.info(), b.k.Fn, b.top)
	}
	id, ok := ast.Unparen(ix.X).(*ast.Ident)
	if !ok {
		return false
	}
	v, _ := b.info().Uses[id].(*types.Var)
	return b.leafWrites[b.k.ByObj[v]]
}

// writesOf is the set of f's buffers that s stores into: an element on the
// left of an assignment, or incremented or decremented.
func writesOf(info *types.Info, f *ir.Fn, s ast.Node) map[*ir.Param]bool {
	w := map[*ir.Param]bool{}
	store := func(e ast.Expr) {
		ix, ok := ast.Unparen(e).(*ast.IndexExpr)
		if !ok {
			return
		}
		if id, ok := ast.Unparen(ix.X).(*ast.Ident); ok {
			if v, _ := info.Uses[id].(*types.Var); v != nil && f.ByObj[v] != nil {
				w[f.ByObj[v]] = true
			}
		}
	}
	ast.Inspect(s, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				store(l)
			}
		case *ast.IncDecStmt:
			store(n.X)
		}
		return true
	})
	return w
}

// hoistExpr declares a temporary at the block level holding text, and
// returns its name.
func (b *gobody) hoistExpr(text string) string {
	for _, h := range b.hoisted {
		if name, expr, _ := strings.Cut(h, " := "); expr == text {
			return name
		}
	}
	b.lane.temps++
	name := fmt.Sprintf("gomptU%d", b.lane.temps)
	b.hoisted = append(b.hoisted, name+" := "+text)
	return name
}

// flushHoisted writes the temporaries the leaf about to be written needs.
func (b *gobody) flushHoisted() {
	for _, h := range b.hoisted {
		b.line("%s", h)
	}
	b.hoisted = nil
}

// laneIndex indexes a lockstep array at the point's lane.
const laneIndex = "[gomptJ]"

// laneOffset reports whether index, in a leaf, is the point's dimension-0
// index plus (other, nil for none) a value the same at every lane that can
// be computed once per block.
//
// Only in a simple statement, outside the right operand of && and ||:
// every lane then reaches the element, so each lane's index, the block's
// first too, is in range, and so is the address computed once.
func (b *gobody) laneOffset(index ast.Expr) (other ast.Expr, ok bool) {
	if !b.leaf || b.hoist == nil || !b.simpleLeaf || b.cond > 0 {
		return nil, false
	}
	x := b.k.Index[0].Obj
	isX := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && b.info().Uses[id] == x && !b.leafLocal[x]
	}
	if isX(index) {
		return nil, true
	}
	be, isBin := ast.Unparen(index).(*ast.BinaryExpr)
	if !isBin || be.Op != token.ADD {
		return nil, false
	}
	switch {
	case isX(be.Y):
		other = be.X
	case isX(be.X):
		other = be.Y
	default:
		return nil, false
	}
	if b.ls.DependsOn(b.g.P.Info, other) {
		return nil, false
	}
	pure := true
	ast.Inspect(other, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if v, isVar := b.info().Uses[n].(*types.Var); isVar && b.leafLocal[v] {
				pure = false
			}
		case *ast.CallExpr:
			if !b.info().Types[n.Fun].IsType() {
				pure = false
			}
		case *ast.BinaryExpr:
			if n.Op == token.QUO || n.Op == token.REM {
				pure = false
			}
		case *ast.IndexExpr:
			if !b.k.Proven[n] {
				pure = false
			}
		}
		return pure
	})
	return other, pure
}
