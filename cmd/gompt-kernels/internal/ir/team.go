package ir

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
)

// Team kernels: //gompt:kernel team=N dims=teams. The function's first two
// parameters are the team's index, in [0, teams), and the thread's index
// in its team, in [0, N); the N threads of a team run together. Arrays
// declared at the top of the body (var tile [256]float32) are the team's:
// one per team, shared by its threads (__local in OpenCL C, .shared in
// PTX). kernelrt.Barrier() waits until every thread of the team has
// reached it, and makes the team's writes before it visible after it. Every
// thread must reach the same barriers: a barrier inside an if or loop whose
// condition depends on the thread is an error, as is a return.
//
// On an OpenCL or CUDA device a team is a work-group of N work-items; the
// Go image runs a team's threads as loops between barriers (emitgo/team.go).

// MaxTeamThreads is the largest team=.
const MaxTeamThreads = 1024

// TeamArrayOf is the team array e names, or nil.
func TeamArrayOf(info *types.Info, f *Fn, e ast.Expr) *types.Var {
	if f.Kernel == nil || f.Kernel.TeamArrays == nil {
		return nil
	}
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := info.Uses[id].(*types.Var)
	if v == nil {
		v, _ = info.Defs[id].(*types.Var)
	}
	if _, ok := f.Kernel.TeamArrays[v]; ok {
		return v
	}
	return nil
}

// TeamElem is the element type of team array v.
func TeamElem(v *types.Var) Scalar {
	s, _ := ScalarOf(v.Type().(*types.Array).Elem())
	return s
}

// IsBarrier reports whether e calls kernelrt.Barrier.
func IsBarrier(info *types.Info, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	pn, ok := info.Uses[id].(*types.PkgName)
	return ok && pn.Imported().Path() == RtPkg && sel.Sel.Name == "Barrier"
}

func IsBarrierStmt(info *types.Info, s ast.Stmt) bool {
	es, ok := s.(*ast.ExprStmt)
	return ok && IsBarrier(info, es.X)
}

// HasBarrier reports whether s has a barrier.
func HasBarrier(info *types.Info, s ast.Node) bool {
	found := false
	ast.Inspect(s, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && IsBarrier(info, e) {
			found = true
		}
		return !found
	})
	return found
}

// TeamPlan is how a team kernel's body runs in its Go image: the
// statements at the team level (barriers, and the loops and ifs that hold
// them, and declarations of values the same in every thread), and between
// them, leaves run by each thread in turn.
type TeamPlan struct {
	K        *Kernel
	Varying  *Lockstep             // the locals that depend on the thread
	TeamDecl map[ast.Stmt]bool     // declarations run once per team
	PerThr   map[*types.Var]bool   // locals declared by a leaf: one per thread
	Counters map[*types.Var]bool   // the loop counters at the team level
	Arrays   map[*types.Var]string // perThr's arrays
}

// LabelIn reports whether label is defined inside s.
func LabelIn(s ast.Node, label string) bool {
	found := false
	ast.Inspect(s, func(n ast.Node) bool {
		if l, ok := n.(*ast.LabeledStmt); ok && l.Label.Name == label {
			found = true
		}
		return !found
	})
	return found
}

// AssignedIn reports whether n assigns v.
func AssignedIn(info *types.Info, n ast.Node, v *types.Var) bool {
	found := false
	is := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && info.Uses[id] == v
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for _, l := range s.Lhs {
				found = found || is(l)
			}
		case *ast.IncDecStmt:
			found = found || is(s.X)
		case *ast.RangeStmt: // for v = range x, for _, v = range x
			found = found || s.Tok == token.ASSIGN && (s.Key != nil && is(s.Key) || s.Value != nil && is(s.Value))
		case *ast.UnaryExpr: // &v: written through the pointer
			found = found || s.Op == token.AND && is(s.X)
		}
		return !found
	})
	return found
}

func SortedTeamArrays(k *Kernel) []*types.Var {
	var vs []*types.Var
	for v := range k.TeamArrays {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Pos() < vs[j].Pos() })
	return vs
}
