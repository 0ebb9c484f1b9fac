package ir

import (
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
	Varying map[*types.Var]bool // the locals (and index) that depend on the point
	Arrays  map[*types.Var]string
	Decls   []string        // the arrays' declarations
	Temps   int             // hoisted temporaries so far
	Bases   map[*Param]bool // the buffers the lanes reach through their base address (unsafe)
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
