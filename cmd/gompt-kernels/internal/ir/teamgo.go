package ir

import (
	"go/types"
)

func SortedVars[T any](m map[*types.Var]T) []*types.Var {
	var vs []*types.Var
	for v := range m {
		vs = append(vs, v)
	}
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			if vs[j].Pos() < vs[i].Pos() {
				vs[i], vs[j] = vs[j], vs[i]
			}
		}
	}
	return vs
}
