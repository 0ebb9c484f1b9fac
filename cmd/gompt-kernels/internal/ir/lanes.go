package ir

import (
	"go/ast"
	"go/types"
)

// Lanes is how many points of dimension 0 a lockstep Go image runs
// together: a whole row of most problems, so that the uniform loop walks
// each row of memory it reads once, in order (with 64, matmul 512x512 ran
// 2x slower than with 1024, its B read in column blocks).
const Lanes = 1024

// Lockstep is the plan of a Go image that runs the points of dimension 0
// in blocks of lanes, statement by statement (as POCL runs a work-group's
// items, and KernelAbstractions' CPU backend): the statements that do not
// depend on the point run once per block, the others (leaves) in a loop
// over the block's points, with each local that depends on the point an
// array of lanes. It pays where a loop that does not depend on the point
// holds work that does (matmul's inner product): the loop then runs once
// per block, around a loop over the points that walks memory in order.
type Lockstep struct {
	K       *Kernel
	Varying map[*types.Var]bool      // the locals (and index) that depend on the point
	Arrays  map[*types.Var]string    // the array of lanes that holds a varying local, by the name the image uses
	Backing map[*types.Var]string    // and the name of the fixed-size array behind it
	Jams    map[*ast.ForStmt]*Jammed // the uniform loops whose turns run Jam at a time
}

// Jammed is a uniform loop of a lockstep image whose turns run Jam at a
// time, each lane through the Jam turns in order: for Ctr := ...; Ctr <
// Bound; Ctr++ (plan.Lanes decides which).
type Jammed struct {
	Ctr   *types.Var
	Bound ast.Expr
}

// OwnName is the name of the array (of lanes, or of a team's threads)
// that holds local v at each point: v's own, so that a debugger shows the
// user's name, unless another variable of k's function (a parameter, a
// local of another scope) has that name too; then other, a generated one.
func OwnName(g *Program, k *Kernel, v *types.Var, other string) string {
	for id, obj := range g.P.Info.Defs {
		if obj != nil && obj != v && id.Name == v.Name() && id.Pos() >= k.Decl.Pos() && id.Pos() < k.Decl.End() {
			return other
		}
	}
	return v.Name()
}

// DependsOn reports whether e reads a varying variable or an element at a
// varying index.
func (ls *Lockstep) DependsOn(info *types.Info, e ast.Node) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v, ok := info.Uses[id].(*types.Var); ok && ls.Varying[v] {
				found = true
			}
		}
		return !found
	})
	return found
}

// Uniform reports whether s runs once per block: it reads nothing
// varying, assigns no varying local and writes no memory.
func (ls *Lockstep) Uniform(info *types.Info, s ast.Node) bool {
	if s == nil {
		return true
	}
	if ls.DependsOn(info, s) {
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
			if v, isVar := info.Defs[id].(*types.Var); isVar && ls.Varying[v] {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// Leaf reports whether s, at a lockstep body's block level, runs at each
// point (a leaf) rather than once for the points together: a statement
// that is not Uniform, unless it is a block, a return or a branch (every
// point takes those), or a loop or an if whose control is uniform (its
// body holds the leaves). A declaration of a varying local is a leaf.
func (ls *Lockstep) Leaf(info *types.Info, s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ForStmt:
		return !(ls.Uniform(info, s.Init) && (s.Cond == nil || !ls.DependsOn(info, s.Cond)) && ls.Uniform(info, s.Post))
	case *ast.RangeStmt:
		return ls.DependsOn(info, s.X) || s.Key != nil && ls.DependsOn(info, s.Key)
	case *ast.IfStmt:
		return s.Init != nil || ls.DependsOn(info, s.Cond)
	case *ast.BlockStmt, *ast.ReturnStmt, *ast.BranchStmt:
		return false
	}
	return !ls.Uniform(info, s)
}

// Jam is how many turns of a uniform loop a lockstep image runs together
// (Lockstep.Jams): each lane runs its leaves for the four turns in order, its
// locals kept in registers from one turn to the next, where a turn at a
// time loads and stores each lane's locals once per turn, and a store a
// cycle bounds the loop. matmul_512 on host:0 (ompt-bench, 6 rounds
// interleaved, low ends, 2026-12-07): 14.5 ms jammed by four, 22.2 ms a
// turn at a time, 21.1 ms for 069ff17's hand-written image; a jam of two
// took 0.81 times a turn at a time in a standalone loop, four 0.74.
const Jam = 4
