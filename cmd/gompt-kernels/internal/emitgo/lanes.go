package emitgo

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"regexp"
	"strconv"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// emit writes the lockstep loop over dimension 0 into w: one call per
// block of a function of its own (written into lanes), in which fewer
// values are live than in the Go image's loops (the register allocator
// kept the lane counter in memory there, matmul ran 2.5x slower).
func emit(ls *ir.Lockstep, g *ir.Program, w *goWriter, used map[*types.Var]bool, lanesFn *strings.Builder) {
	k := ls.K
	name := goIdent("gomptLanes", k.Fn.Name)
	var args, params []string
	for _, ix := range k.Index[1:] {
		args = append(args, ix.Name)
		params = append(params, ix.Name+" int")
	}
	for _, p := range k.Args() {
		args = append(args, p.Name)
		params = append(params, p.Name+" "+ir.GoType(p))
		used[p.Obj] = true
	}
	w.p("for gomptX0 := gomptLo0; gomptX0 < gomptHi0; gomptX0 += %d {", ir.Lanes)
	w.p("%s(gomptX0, min(%d, gomptHi0-gomptX0), %s)", name, ir.Lanes, strings.Join(args, ", "))
	w.p("}")

	fw := &goWriter{imports: w.imports}
	inUse := map[*types.Var]bool{}
	lane := &laneState{bases: map[*ir.Param]bool{}}
	b := &gobody{g: g, k: k, w: fw, used: inUse, ls: ls, lane: lane, depth: 1}
	b.ret = func() string { return "return" }
	x := k.Index[0].Name
	// The statements inside a loop: their leaves run once a turn.
	inLoop := map[ast.Stmt]bool{}
	ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.ForStmt:
			body = n.Body
		case *ast.RangeStmt:
			body = n.Body
		}
		if body != nil {
			ast.Inspect(body, func(m ast.Node) bool {
				if st, ok := m.(ast.Stmt); ok {
					inLoop[st] = true
				}
				return true
			})
		}
		return true
	})
	// leaf writes s at one lane (its text, at gomptJ) and queues the
	// uniform values it needs at the block level; subst writes a
	// variable as an expression of its own (a jammed turn's counter).
	leaf := func(s ast.Stmt, subst map[*types.Var]string) (text string, usesX bool) {
		inner := &gobody{g: g, k: k, w: fw, used: map[*types.Var]bool{}, ls: ls, lane: lane, leaf: true, depth: 1, hoist: b, top: s, subst: subst}
		switch s.(type) {
		case *ast.AssignStmt, *ast.IncDecStmt, *ast.DeclStmt, *ast.ExprStmt:
			inner.simpleLeaf = true
		}
		inner.ret = func() string { panic("gompt-kernels: a return in a leaf passed plan.Lanes") }
		inner.leafStmt(s)
		for v := range inner.used {
			inUse[v] = true
		}
		return inner.sb.String(), inner.used[k.Index[0].Obj]
	}
	// byFourLoop writes text, a leaf's (or a jammed turn's leaves'), for
	// the block's lanes four a turn, through slices of four taken once
	// (Go drops their bounds tests), each lane in its order, then the
	// rest; ok is false where text uses the lane other than as an
	// element at gomptJ.
	byFourLoop := func(text string, usesX bool) (ok bool) {
		groups, ok := byFour(text)
		if !ok {
			return false
		}
		b.plain("{")
		b.plain("gomptJ := 0")
		b.plain("for ; gomptJ+4 <= gomptW; gomptJ += 4 {")
		for _, n := range groups.names {
			b.plain("%s := %s[gomptJ : gomptJ+4 : gomptJ+4]", groups.four[n], n)
		}
		for u := range 4 {
			b.plain("{") // the lane's own locals
			if usesX {
				b.plain("\t%s := gomptX0 + gomptJ + %d", x, u)
			}
			b.sb.WriteString(indent(groups.lane(u), b.depth))
			b.plain("}")
		}
		b.plain("}")
		b.plain("for ; gomptJ < gomptW; gomptJ++ {")
		if usesX {
			b.plain("\t%s := gomptX0 + gomptJ", x)
		}
		b.sb.WriteString(indent(text, b.depth))
		b.plain("}")
		b.plain("}")
		return true
	}
	b.lanesOf = func(s ast.Stmt) {
		text, usesX := leaf(s, nil)
		b.flushHoisted()
		if inLoop[s] && byFourLoop(text, usesX) {
			return
		}
		b.plain("for gomptJ := 0; gomptJ < gomptW; gomptJ++ {")
		if usesX {
			b.plain("\t%s := gomptX0 + gomptJ", x)
		}
		b.sb.WriteString(indent(text, b.depth))
		b.plain("}")
	}
	b.jam = func(s *ast.ForStmt) bool {
		j := ls.Jams[s]
		if j == nil {
			return false
		}
		ctr := j.Ctr
		// Each turn's leaves at one lane, then the next turn's: the
		// lanes' values stay in registers between turns. What writing
		// them records is put back where the text does not go by four.
		temps, bases, used := lane.temps, maps.Clone(lane.bases), maps.Clone(inUse)
		var text strings.Builder
		usesX := false
		type hoists struct {
			pos   string
			lines []string
		}
		var uniform []hoists // each leaf's uniform values, marked with its line
		for t := range ir.Jam {
			var subst map[*types.Var]string
			if t > 0 {
				subst = map[*types.Var]string{ctr: fmt.Sprintf("(%s + %d)", ctr.Name(), t)}
			}
			for _, st := range s.Body.List {
				tx, ux := leaf(st, subst)
				text.WriteString(tx)
				usesX = usesX || ux
				uniform = append(uniform, hoists{srcPos(g, st), b.hoisted})
				b.hoisted = nil
			}
		}
		if _, ok := byFour(text.String()); !ok {
			lane.temps, lane.bases = temps, bases
			clear(inUse)
			maps.Copy(inUse, used)
			return false
		}
		b.line("{")
		b.depth++
		b.line("%s", b.simple(s.Init))
		bnd := b.expr(j.Bound)
		b.jamLoop(ctr.Name(), bnd)
		b.depth++
		saved := b.pos
		for _, h := range uniform {
			b.pos = h.pos
			for _, l := range h.lines {
				b.line("%s", l)
			}
		}
		b.pos = saved
		byFourLoop(text.String(), usesX)
		b.depth--
		b.line("}")
		b.turnsLeft(s)
		b.depth--
		b.plain("}")
		return true
	}
	b.stmts(k.Decl.Body.List)
	fw.p("// %s runs %s's body at the points [gomptX0, gomptX0+gomptW) of dimension 0 together, statement by statement.", name, k.Fn.Name)
	fw.p("func %s(gomptX0, gomptW int, %s) {", name, strings.Join(params, ", "))
	for _, p := range k.Args() {
		if lane.bases[p] {
			fw.imports["unsafe"] = "unsafe"
			fw.p("%s := unsafe.Pointer(unsafe.SliceData(%s))", base(p), p.Name)
		}
	}
	// Each varying local is an array of lanes, used through a slice of
	// the block's width, so that the compiler drops the bounds test of
	// the lane's element in the loops up to that width.
	for _, v := range ir.SortedVars(ls.Varying) {
		if arr, ok := ls.Arrays[v]; ok {
			t, _ := ir.ScalarOf(v.Type())
			fw.p("var %s [%d]%s", ls.Backing[v], ir.Lanes, t.GoName())
			fw.p("%s := %s[:gomptW:gomptW]", arr, ls.Backing[v])
		}
	}
	fw.sb.WriteString(b.sb.String())
	for _, v := range ir.SortedVars(ls.Varying) {
		if arr, ok := ls.Arrays[v]; ok {
			fw.p("_ = %s", arr)
		}
	}
	for _, ix := range k.Index[1:] {
		if !inUse[ix.Obj] {
			fw.p("_ = %s", ix.Name)
		}
	}
	for _, p := range k.Args() {
		if !inUse[p.Obj] && !lane.bases[p] {
			fw.p("_ = %s", p.Name)
		}
	}
	fw.p("}")
	fw.p("")
	lanesFn.WriteString(fw.sb.String())
}

// laneState is what writing a lockstep image's lanes function keeps: the
// temporaries hoisted out of its leaves so far, and the buffers its
// leaves reach through their base address (unsafe).
type laneState struct {
	temps int
	bases map[*ir.Param]bool
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
	b.pos = srcPos(b.g, s)
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
					t, _ := ir.ScalarOf(b.info().Defs[n].Type())
					val = t.GoName() + "(0)"
					if t.IsBool() {
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

// laneRef is a lane's element in a leaf's text: a lane array's or a
// block's slice's at gomptJ.
var laneRef = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\[gomptJ\]`)

// fours is a leaf's text rewritten for four lanes a turn: the slices it
// reaches at gomptJ (names, in order), the name of each one's slice of
// four, and the text with each element at gomptJ in its slice of four.
type fours struct {
	names []string
	four  map[string]string
	text  string // with "[gomptU]" for the lane's place in the four
}

// byFour rewrites a leaf's text for four lanes a turn, where every use of
// the lane is an element at gomptJ (a lane array, a block's slice: each
// gomptW long); ok is false otherwise (gomptJ used some other way).
//
// A loop of one lane a turn ran at the speed of where the linker put it:
// matmul's seven-instruction loop crossed a 64-byte line at one address
// in two, and matmul_512 on host:0 took from 1.1 to 1.8 times 069ff17's
// hand-written image there, about 1.0 elsewhere. Four lanes a turn
// through slices of four took 1.04-1.08 times it at both addresses (6
// rounds interleaved, low ends: 22.8 and 23.7 ms against 21.9 ms;
// medians 23.0 and 24.8 against 22.7; 2026-12-06), no run far off.
func byFour(text string) (fours, bool) {
	f := fours{four: map[string]string{}}
	rewritten := laneRef.ReplaceAllStringFunc(text, func(m string) string {
		n := laneRef.FindStringSubmatch(m)[1]
		if _, ok := f.four[n]; !ok {
			f.four[n] = "gompt4" + ir.UpperFirst(n)
			f.names = append(f.names, n)
		}
		return f.four[n] + "[gomptU]"
	})
	if strings.Contains(rewritten, "gomptJ") || len(f.names) == 0 {
		return fours{}, false
	}
	f.text = rewritten
	return f, true
}

// lane is the text for the lane at place u of the four.
func (f fours) lane(u int) string {
	return strings.ReplaceAll(f.text, "[gomptU]", "["+strconv.Itoa(u)+"]")
}

// turnsLeft writes the turns of jammed loop s that are left after its
// jammed turns, one at a time: the loop as written, without its init.
func (b *gobody) turnsLeft(s *ast.ForStmt) {
	b.line("for ; %s; %s {", b.expr(s.Cond), b.simple(s.Post))
	b.depth++
	b.stmts(s.Body.List)
	b.depth--
	b.closing(s.Body.Rbrace, "}")
}
