package plan

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// SumJams finds the loops of k's point-at-a-time Go image whose turns can
// run ir.Jam at a time around one inner loop (ir.SumJam):
//
//	for j := lo; j < hi; j++ {
//		var c float64          // the head: locals of the turn, from pure values
//		for k := 0; k < n; k++ {   // the same loop in every turn
//			c += data[k*m+i] * data[k*m+j]   // updates of the turn's locals, pure
//		}
//		c /= fn - 1.0          // the tail: simple statements, in turn order
//		cov[i*m+j] = c
//	}
//
// Each turn's sum is a chain of dependent adds, each waiting for the one
// before: one turn at a time, the loop runs at the latency of an add. Four
// turns' chains interleave, and an element the turns share (data[k*m+i])
// is loaded once. Each local still goes through its updates in Go's
// order, so every result is the same bits; what moves is the tails of the
// first turns, after the later turns' heads and inner loops. That is the
// same program where those have no effect but on the turn's own locals
// and cannot fail (pure, elements proven in range), read no variable a
// tail assigns, and read no buffer a tail writes, except the turn's own
// element of it (ownElements): the image tests the buffers at run time
// (kernelrt.Apart) and runs the loop as written where they overlap. A tail may fail (Go's test of an element): the turns
// before it have run, and the later turns' heads and loops changed
// nothing.
//
// Measured, PolyBench covariance's loop (1200 x 1400, two goroutines):
// 1.0 s one turn at a time, 0.33 s four together.
func SumJams(g *ir.Program, k *ir.Kernel) map[*ast.ForStmt]*ir.SumJam {
	if k.Team > 0 || k.Lanes != nil || k.Split != nil || k.Reduce != "" || len(k.ReduceArrays) > 0 || k.Atomic {
		return nil
	}
	info := g.P.Info
	labelled := map[ast.Stmt]bool{}
	var out map[*ast.ForStmt]*ir.SumJam
	ast.Inspect(k.Decl.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.LabeledStmt:
			labelled[n.Stmt] = true
		case *ast.ForStmt:
			if labelled[n] || k.PointJams[n] != nil {
				return true
			}
			if sj := sumJam(info, k, n); sj != nil {
				if out == nil {
					out = map[*ast.ForStmt]*ir.SumJam{}
				}
				out[n] = sj
				return false
			}
		}
		return true
	})
	return out
}

func sumJam(info *types.Info, k *ir.Kernel, s *ast.ForStmt) *ir.SumJam {
	ctr, bound, ok := countedLoop(info, k, s)
	if !ok || !types.Identical(ctr.Type(), types.Typ[types.Int]) {
		return nil
	}
	same := sameEachTurn(info, k, s, ctr)
	if !same(bound) {
		return nil
	}
	sj := &ir.SumJam{Ctr: ctr, Bound: bound}
	// The body: the head, one inner loop, the tail.
	for i, st := range s.Body.List {
		if f, isFor := st.(*ast.ForStmt); isFor {
			if sj.Inner != nil {
				return nil
			}
			sj.Inner = f
			sj.Head, sj.Tail = s.Body.List[:i], s.Body.List[i+1:]
		}
	}
	if sj.Inner == nil || len(sj.Head) == 0 {
		return nil
	}
	local := map[*types.Var]bool{} // defined in the loop's body: the turn's own
	define := func(id *ast.Ident) {
		if v, ok := info.Defs[id].(*types.Var); ok {
			local[v] = true
			sj.Locals = append(sj.Locals, v)
		}
	}
	for _, st := range sj.Head {
		switch st := st.(type) {
		case *ast.DeclStmt:
			gd := st.Decl.(*ast.GenDecl)
			if gd.Tok != token.VAR {
				continue // a constant: written as its value
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for _, v := range vs.Values {
					if !pure(info, k, v) {
						return nil
					}
				}
				for _, n := range vs.Names {
					define(n)
				}
			}
		case *ast.AssignStmt:
			if st.Tok != token.DEFINE || !pureAll(info, k, st.Rhs) {
				return nil
			}
			for _, l := range st.Lhs {
				define(l.(*ast.Ident))
			}
		default:
			return nil
		}
	}
	// The inner loop: the same in every turn, updating the turn's locals.
	in := sj.Inner
	_, ibound, ok := countedLoop(info, k, in)
	if !ok || !same(in.Init.(*ast.AssignStmt).Rhs[0]) || !same(ibound) {
		return nil
	}
	for _, st := range in.Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if !pureAll(info, k, st.Rhs) {
				return nil
			}
			switch st.Tok {
			case token.DEFINE:
				for _, l := range st.Lhs {
					define(l.(*ast.Ident))
				}
				continue
			case token.QUO_ASSIGN, token.REM_ASSIGN, token.SHL_ASSIGN, token.SHR_ASSIGN:
				if t, isBasic := info.TypeOf(st.Lhs[0]).Underlying().(*types.Basic); !isBasic || t.Info()&types.IsInteger != 0 {
					return nil // an integer division or shift may fail
				}
			}
			for _, l := range st.Lhs {
				if !localVar(info, l, local) {
					return nil
				}
			}
		case *ast.IncDecStmt:
			if !localVar(info, st.X, local) {
				return nil
			}
		default:
			return nil
		}
	}
	// The tail: simple statements that call nothing that could write.
	outer := map[*types.Var]bool{} // variables declared outside the loop that a tail assigns
	for _, st := range sj.Tail {
		var lhs []ast.Expr
		switch st := st.(type) {
		case *ast.AssignStmt:
			lhs = st.Lhs
			if st.Tok == token.DEFINE {
				for _, l := range st.Lhs {
					define(l.(*ast.Ident))
				}
				lhs = nil
			}
		case *ast.IncDecStmt:
			lhs = []ast.Expr{st.X}
		default:
			return nil
		}
		if !callsOnlyPure(info, st) {
			return nil
		}
		if mayFail(info, k, st) {
			sj.Checked = true
		}
		for _, l := range lhs {
			switch l := ast.Unparen(l).(type) {
			case *ast.Ident:
				if v, ok := info.Uses[l].(*types.Var); ok && !local[v] {
					outer[v] = true
				}
			case *ast.IndexExpr:
				p, _ := k.Fn.SliceOf(info, l.X)
				if p == nil {
					return nil
				}
				if !slices.Contains(sj.Written, p) {
					sj.Written = append(sj.Written, p)
				}
			default:
				return nil
			}
		}
	}
	// What the heads and the inner loop read: no variable a tail
	// assigns, and the buffers, directly or through views.
	bad := false
	read := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			v, _ := info.Uses[id].(*types.Var)
			if v == nil {
				return true
			}
			if outer[v] {
				bad = true
			}
			if p, _ := k.Fn.SliceOf(info, id); p != nil && !slices.Contains(sj.Reads, p) {
				sj.Reads = append(sj.Reads, p)
			}
			return true
		})
	}
	for _, st := range sj.Head {
		read(st)
	}
	read(in)
	if bad {
		return nil
	}
	for _, w := range sj.Written {
		if !slices.Contains(sj.Reads, w) {
			continue
		}
		if !ownElements(info, k, sj, w, same) {
			return nil // never apart
		}
		sj.Own = append(sj.Own, w)
	}
	return sj
}

// ownElements reports whether each turn of sj's loop reaches only its own
// element of buffer w in its head and tail, w[x+ctr] with x the same in
// every turn (2mm's d := D[i*nl+j]*beta ... D[i*nl+j] = d), and its
// inner loop none: a later turn's head then reads no element an earlier
// turn's tail writes. (A tail may read any: the tails run in order.)
func ownElements(info *types.Info, k *ir.Kernel, sj *ir.SumJam, w *ir.Param, same func(ast.Expr) bool) bool {
	key := ""
	ok := true
	own := func(ix *ast.IndexExpr) {
		be, isBin := ast.Unparen(ix.Index).(*ast.BinaryExpr)
		var x ast.Expr
		switch {
		case !isBin || be.Op != token.ADD:
		case isVar(info, be.Y, sj.Ctr):
			x = be.X
		case isVar(info, be.X, sj.Ctr):
			x = be.Y
		}
		if x == nil || !same(x) {
			ok = false
			return
		}
		kx := types.ExprString(ix.X) + " " + types.ExprString(x)
		if key == "" {
			key = kx
		}
		ok = ok && kx == key
	}
	uses := func(n ast.Node, each func(*ast.IndexExpr)) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.IndexExpr:
				if p, _ := k.Fn.SliceOf(info, n.X); p == w {
					each(n)
					return false
				}
			case *ast.Ident:
				if p, _ := k.Fn.SliceOf(info, n); p == w {
					ok = false // w other than indexed: len(w), a view of it
				}
			}
			return ok
		})
	}
	for _, st := range sj.Head {
		uses(st, own)
	}
	uses(sj.Inner, func(*ast.IndexExpr) { ok = false })
	for _, st := range sj.Tail {
		var lhs []ast.Expr
		switch st := st.(type) {
		case *ast.AssignStmt:
			lhs = st.Lhs
		case *ast.IncDecStmt:
			lhs = []ast.Expr{st.X}
		}
		for _, l := range lhs {
			if ix, isIx := ast.Unparen(l).(*ast.IndexExpr); isIx {
				if p, _ := k.Fn.SliceOf(info, ix.X); p == w {
					own(ix)
				}
			}
		}
	}
	return ok && key != ""
}

func pureAll(info *types.Info, k *ir.Kernel, list []ast.Expr) bool {
	for _, e := range list {
		if !pure(info, k, e) {
			return false
		}
	}
	return true
}

// localVar reports whether e names one of local.
func localVar(info *types.Info, e ast.Expr, local map[*types.Var]bool) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return false
	}
	v, _ := info.Uses[id].(*types.Var)
	return v != nil && local[v]
}

// callsOnlyPure reports whether n calls nothing but conversions, len and
// math's functions (a helper or an atomic may write memory).
func callsOnlyPure(info *types.Info, n ast.Node) bool {
	ok := true
	ast.Inspect(n, func(n ast.Node) bool {
		c, isCall := n.(*ast.CallExpr)
		if !isCall {
			return ok
		}
		fun := ast.Unparen(c.Fun)
		switch {
		case info.Types[fun].IsType():
		case info.Types[fun].IsBuiltin():
			ok = fun.(*ast.Ident).Name == "len"
		default:
			_, isSel := fun.(*ast.SelectorExpr)
			_, atomic := ir.AtomicCallee(info, c)
			ok = isSel && !atomic
		}
		return ok
	})
	return ok
}

// mayFail reports whether simple statement st may fail: an element not
// proven in range, or an integer division or shift (as an operator or an
// assignment's).
func mayFail(info *types.Info, k *ir.Kernel, st ast.Stmt) bool {
	fail := false
	ast.Inspect(st, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IndexExpr:
			fail = fail || !k.Proven[n]
		case *ast.BinaryExpr:
			fail = fail || canFault(info, n)
		case *ast.AssignStmt:
			switch n.Tok {
			case token.QUO_ASSIGN, token.REM_ASSIGN, token.SHL_ASSIGN, token.SHR_ASSIGN:
				if t, ok := info.TypeOf(n.Lhs[0]).Underlying().(*types.Basic); ok && t.Info()&types.IsInteger != 0 {
					fail = true
				}
			}
		}
		return !fail
	})
	return fail
}
