package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// lanes is how many points of dimension 0 a lockstep Go image runs
// together: a whole row of most problems, so that the uniform loop walks
// each row of memory it reads once, in order (with 64, matmul 512x512 ran
// 2x slower than with 1024, its B read in column blocks).
const lanes = 1024

// lockstep is the plan of a Go image that runs the points of dimension 0
// in blocks of lanes, statement by statement (as POCL runs a work-group's
// items, and KernelAbstractions' CPU backend): the statements that do not
// depend on the point run once per block, the others (leaves) in a loop
// over the block's points, with each local that depends on the point an
// array of lanes. It pays where a loop that does not depend on the point
// holds work that does (matmul's inner product): the loop then runs once
// per block, around a loop over the points that walks memory in order.
type lockstep struct {
	k       *kernel
	varying map[*types.Var]bool // the locals (and index) that depend on the point
	arrays  map[*types.Var]string
	decls   []string        // the arrays' declarations
	temps   int             // hoisted temporaries so far
	bases   map[*param]bool // the buffers the lanes reach through their base address (unsafe)
}

// planLockstep returns the plan for k, or nil where it does not apply: a
// reduction; a body with no loop independent of the point around work
// that depends on it; a return, break or continue that depends on the
// point; a call of a helper; an atomic (a statement that does not depend
// on the point would run once per block); a view or a range over a slice
// (its varying locals would be arrays of slices).
func (g *gen) planLockstep(k *kernel) *lockstep {
	if k.reduce != "" || len(k.fn.calls) > 0 || k.atomic || len(k.reduceArrays) > 0 || usesSlices(g.p.info, k.fn) {
		return nil
	}
	ls := &lockstep{k: k, varying: map[*types.Var]bool{k.index[0].obj: true}, arrays: map[*types.Var]string{}}
	for changed := true; changed; {
		changed = ls.taint(g, k.decl.Body.List, false)
	}
	for _, p := range k.params {
		if k.assigned[p.obj] {
			return nil
		}
	}
	ok, pays := ls.check(g, k.decl.Body.List, false)
	if !ok || !pays {
		return nil
	}
	n := 0
	for _, name := range ls.sortedVarying(g) {
		v := name
		if v == k.index[0].obj {
			continue
		}
		n++
		arr := fmt.Sprintf("gomptL%d%s", n, upperFirst(v.Name()))
		ls.arrays[v] = ownName(g, k, v, arr)
		t, _ := scalarOf(v.Type())
		// An array of lanes, used through a slice of the block's width,
		// so that the compiler drops the bounds test of the lane's
		// element in the loops up to that width.
		ls.decls = append(ls.decls, fmt.Sprintf("var %sA [%d]%s", arr, lanes, t.goName()), fmt.Sprintf("%s := %sA[:gomptW:gomptW]", ls.arrays[v], arr))
	}
	return ls
}

func (ls *lockstep) sortedVarying(g *gen) []*types.Var { return sortedVars(ls.varying) }

// ownName is the name of the array (of lanes, or of a team's threads)
// that holds local v at each point: v's own, so that a debugger shows the
// user's name, unless another variable of k's function (a parameter, a
// local of another scope) has that name too; then other, a generated one.
func ownName(g *gen, k *kernel, v *types.Var, other string) string {
	for id, obj := range g.p.info.Defs {
		if obj != nil && obj != v && id.Name == v.Name() && id.Pos() >= k.decl.Pos() && id.Pos() < k.decl.End() {
			return other
		}
	}
	return v.Name()
}

// dependsOn reports whether e reads a varying variable or an element at a
// varying index.
func (ls *lockstep) dependsOn(g *gen, e ast.Node) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v, ok := g.p.info.Uses[id].(*types.Var); ok && ls.varying[v] {
				found = true
			}
		}
		return !found
	})
	return found
}

// taint marks the locals assigned from a varying value, or under a
// condition that is; it reports whether it marked any.
func (ls *lockstep) taint(g *gen, list []ast.Stmt, under bool) (changed bool) {
	mark := func(e ast.Expr) {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return
		}
		v, _ := g.p.info.Defs[id].(*types.Var)
		if v == nil {
			v, _ = g.p.info.Uses[id].(*types.Var)
		}
		if v != nil && !ls.varying[v] && ls.k.byObj[v] == nil {
			ls.varying[v] = true
			changed = true
		}
	}
	for _, s := range list {
		switch s := s.(type) {
		case *ast.AssignStmt:
			dep := under
			for _, r := range s.Rhs {
				dep = dep || ls.dependsOn(g, r)
			}
			for _, l := range s.Lhs {
				if dep || s.Tok != token.ASSIGN && s.Tok != token.DEFINE && ls.dependsOn(g, l) {
					mark(l)
				}
			}
		case *ast.IncDecStmt:
			if under {
				mark(s.X)
			}
		case *ast.DeclStmt:
			gd := s.Decl.(*ast.GenDecl)
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				dep := under
				for _, v := range vs.Values {
					dep = dep || ls.dependsOn(g, v)
				}
				if dep {
					for _, n := range vs.Names {
						mark(n)
					}
				}
			}
		case *ast.BlockStmt:
			changed = ls.taint(g, s.List, under) || changed
		case *ast.IfStmt:
			c := under || ls.dependsOn(g, s.Cond) || s.Init != nil && ls.dependsOn(g, s.Init)
			if s.Init != nil {
				changed = ls.taint(g, []ast.Stmt{s.Init}, under) || changed
			}
			changed = ls.taint(g, s.Body.List, c) || changed
			if s.Else != nil {
				changed = ls.taint(g, []ast.Stmt{s.Else}, c) || changed
			}
		case *ast.ForStmt:
			c := under || s.Cond != nil && ls.dependsOn(g, s.Cond) || s.Init != nil && ls.dependsOn(g, s.Init) || s.Post != nil && ls.dependsOn(g, s.Post)
			for _, x := range []ast.Stmt{s.Init, s.Post} {
				if x != nil {
					changed = ls.taint(g, []ast.Stmt{x}, c) || changed
				}
			}
			changed = ls.taint(g, s.Body.List, c) || changed
		case *ast.RangeStmt:
			c := under || ls.dependsOn(g, s.X)
			if c && s.Key != nil {
				mark(s.Key)
			}
			changed = ls.taint(g, s.Body.List, c) || changed
		case *ast.SwitchStmt:
			c := under || s.Tag != nil && ls.dependsOn(g, s.Tag) || s.Init != nil && ls.dependsOn(g, s.Init)
			for _, cc := range s.Body.List {
				cl := cc.(*ast.CaseClause)
				cc := c
				for _, e := range cl.List {
					cc = cc || ls.dependsOn(g, e)
				}
				changed = ls.taint(g, cl.Body, cc) || changed
			}
		case *ast.LabeledStmt:
			changed = ls.taint(g, []ast.Stmt{s.Stmt}, under) || changed
		}
	}
	return changed
}

// uniform reports whether s runs once per block: it reads nothing
// varying, assigns no varying local and writes no memory.
func (ls *lockstep) uniform(g *gen, s ast.Node) bool {
	if s == nil {
		return true
	}
	if ls.dependsOn(g, s) {
		return false
	}
	ok := true
	ast.Inspect(s, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if _, isIndex := ast.Unparen(l).(*ast.IndexExpr); isIndex {
					ok = false
				}
			}
		case *ast.IncDecStmt:
			if _, isIndex := ast.Unparen(n.X).(*ast.IndexExpr); isIndex {
				ok = false
			}
		case *ast.DeclStmt, *ast.Ident:
		}
		return ok
	})
	if !ok {
		return false
	}
	// Declarations of varying locals are not uniform.
	ast.Inspect(s, func(n ast.Node) bool {
		if id, isID := n.(*ast.Ident); isID {
			if v, isVar := g.p.info.Defs[id].(*types.Var); isVar && ls.varying[v] {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// check walks list at the block level (inLoop: inside a uniform loop) and
// reports whether the plan applies, and whether it pays (a leaf inside a
// uniform loop).
func (ls *lockstep) check(g *gen, list []ast.Stmt, inLoop bool) (ok, pays bool) {
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ForStmt:
			if ls.uniform(g, s.Init) && (s.Cond == nil || !ls.dependsOn(g, s.Cond)) && ls.uniform(g, s.Post) {
				o, p := ls.check(g, s.Body.List, true)
				if !o {
					return false, false
				}
				pays = pays || p
				continue
			}
		case *ast.RangeStmt:
			if !ls.dependsOn(g, s.X) && (s.Key == nil || !ls.dependsOn(g, s.Key)) {
				o, p := ls.check(g, s.Body.List, true)
				if !o {
					return false, false
				}
				pays = pays || p
				continue
			}
		case *ast.IfStmt:
			if s.Init == nil && !ls.dependsOn(g, s.Cond) {
				o, p := ls.check(g, s.Body.List, inLoop)
				if !o {
					return false, false
				}
				pays = pays || p
				if s.Else != nil {
					o, p := ls.check(g, []ast.Stmt{s.Else}, inLoop)
					if !o {
						return false, false
					}
					pays = pays || p
				}
				continue
			}
		case *ast.BlockStmt:
			o, p := ls.check(g, s.List, inLoop)
			if !o {
				return false, false
			}
			pays = pays || p
			continue
		case *ast.ReturnStmt, *ast.BranchStmt:
			continue // uniform: every point of the block takes it
		case *ast.LabeledStmt:
			if _, isSwitch := s.Stmt.(*ast.SwitchStmt); !isSwitch {
				return false, false
			}
		}
		if ls.uniform(g, s) {
			continue
		}
		// A leaf: it must not leave the statements around it.
		if leaves(s) {
			return false, false
		}
		pays = pays || inLoop
	}
	return true, pays
}

// leaves reports whether s holds a return, or a break or continue that
// leaves s.
func leaves(s ast.Stmt) bool {
	found := false
	var walk func(n ast.Node, loops int)
	walk = func(n ast.Node, loops int) {
		ast.Inspect(n, func(m ast.Node) bool {
			if found || m == nil {
				return false
			}
			switch m := m.(type) {
			case *ast.ReturnStmt:
				found = true
			case *ast.BranchStmt:
				if m.Label != nil || loops == 0 {
					found = true
				}
			case *ast.ForStmt:
				if m != n {
					walk(m.Body, loops+1)
					return false
				}
			case *ast.RangeStmt:
				if m != n {
					walk(m.Body, loops+1)
					return false
				}
			case *ast.SwitchStmt:
				if m != n {
					for _, cc := range m.Body.List {
						for _, b := range cc.(*ast.CaseClause).Body {
							ast.Inspect(b, func(x ast.Node) bool {
								if br, ok := x.(*ast.BranchStmt); ok && (br.Tok == token.CONTINUE && loops == 0 || br.Label != nil) {
									found = true
								}
								if _, ok := x.(*ast.ReturnStmt); ok {
									found = true
								}
								_, isLoop := x.(*ast.ForStmt)
								_, isRange := x.(*ast.RangeStmt)
								return !isLoop && !isRange
							})
						}
					}
					return false
				}
			}
			return true
		})
	}
	walk(s, 0)
	return found
}

// emit writes the lockstep loop over dimension 0 into w: one call per
// block of a function of its own (written into lanes), in which fewer
// values are live than in the Go image's loops (the register allocator
// kept the lane counter in memory there, matmul ran 2.5x slower).
func (ls *lockstep) emit(g *gen, w *goWriter, used map[*types.Var]bool, lanesFn *strings.Builder) {
	k := ls.k
	name := goIdent("gomptLanes", k.fn.name)
	var args, params []string
	for _, ix := range k.index[1:] {
		args = append(args, ix.name)
		params = append(params, ix.name+" int")
	}
	for _, p := range k.args() {
		args = append(args, p.name)
		params = append(params, p.name+" "+goType(p))
		used[p.obj] = true
	}
	w.p("for gomptX0 := gomptLo0; gomptX0 < gomptHi0; gomptX0 += %d {", lanes)
	w.p("%s(gomptX0, min(%d, gomptHi0-gomptX0), %s)", name, lanes, strings.Join(args, ", "))
	w.p("}")

	fw := &goWriter{imports: w.imports}
	inUse := map[*types.Var]bool{}
	ls.bases = map[*param]bool{}
	b := &gobody{g: g, k: k, w: fw, used: inUse, ls: ls, depth: 1}
	b.ret = func() string { return "return" }
	x := k.index[0].name
	b.lanesOf = func(s ast.Stmt) {
		// A leaf: the statement at each point of the block.
		inner := &gobody{g: g, k: k, w: fw, used: map[*types.Var]bool{}, ls: ls, leaf: true, depth: 1, hoist: b, top: s}
		switch s.(type) {
		case *ast.AssignStmt, *ast.IncDecStmt, *ast.DeclStmt, *ast.ExprStmt:
			inner.simpleLeaf = true
		}
		inner.ret = func() string { panic("gompt-kernels: a return in a leaf passed planLockstep") }
		inner.leafStmt(s)
		for v := range inner.used {
			inUse[v] = true
		}
		b.flushHoisted()
		b.plain("for gomptJ := 0; gomptJ < gomptW; gomptJ++ {")
		if inner.used[k.index[0].obj] {
			b.plain("\t%s := gomptX0 + gomptJ", x)
		}
		b.sb.WriteString(indent(inner.sb.String(), b.depth))
		b.plain("}")
	}
	b.stmts(k.decl.Body.List)
	fw.p("// %s runs %s's body at the points [gomptX0, gomptX0+gomptW) of dimension 0 together, statement by statement.", name, k.fn.name)
	fw.p("func %s(gomptX0, gomptW int, %s) {", name, strings.Join(params, ", "))
	for _, p := range k.args() {
		if ls.bases[p] {
			fw.imports["unsafe"] = "unsafe"
			fw.p("%s := unsafe.Pointer(unsafe.SliceData(%s))", base(p), p.name)
		}
	}
	for _, d := range ls.decls {
		fw.p("%s", d)
	}
	fw.sb.WriteString(b.sb.String())
	for _, v := range ls.sortedVarying(g) {
		if arr, ok := ls.arrays[v]; ok {
			fw.p("_ = %s", arr)
		}
	}
	for _, ix := range k.index[1:] {
		if !inUse[ix.obj] {
			fw.p("_ = %s", ix.name)
		}
	}
	for _, p := range k.args() {
		if !inUse[p.obj] && !ls.bases[p] {
			fw.p("_ = %s", p.name)
		}
	}
	fw.p("}")
	fw.p("")
	lanesFn.WriteString(fw.sb.String())
}

func indent(s string, depth int) string {
	if depth == 0 {
		return s
	}
	pre := strings.Repeat("\t", depth)
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pre + l
		}
	}
	return strings.Join(lines, "")
}

// leafStmt writes s at one point: a declaration of varying locals at the
// block level sets their arrays' elements (to their values, or zero). Its
// lines are marked with s's position, so that a fault there names the
// kernel's line.
func (b *gobody) leafStmt(s ast.Stmt) {
	saved := b.pos
	b.pos = b.g.srcPos(s)
	defer func() { b.pos = saved }()
	switch d := s.(type) {
	case *ast.AssignStmt:
		if d.Tok == token.DEFINE {
			b.line("%s = %s", b.exprList(d.Lhs), b.exprList(d.Rhs))
			return
		}
	case *ast.DeclStmt:
		gd := d.Decl.(*ast.GenDecl)
		if gd.Tok != token.VAR {
			return
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name == "_" {
					continue
				}
				val := ""
				if i < len(vs.Values) {
					val = b.expr(vs.Values[i])
				} else {
					t, _ := scalarOf(b.info().Defs[n].Type())
					val = t.goName() + "(0)"
					if t.isBool() {
						val = "false"
					}
				}
				b.line("%s = %s", b.expr(n), val)
			}
		}
		return
	}
	b.stmt(s)
}
