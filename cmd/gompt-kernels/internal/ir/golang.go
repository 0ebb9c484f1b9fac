package ir

import (
	"go/types"
)

// The generated Go file imports these packages under names no user
// identifier takes, so that the generated functions may name their locals
// as the kernel's parameters.
const (
	DevicePkg = "github.com/gompt/gompt/device"
	RtPkg     = "github.com/gompt/gompt/kernelrt"
	TargetPkg = "github.com/gompt/gompt/target"
)

// GoType is p's Go type.
func GoType(p *Param) string {
	if p.Slice {
		return "[]" + p.T.GoName()
	}
	return p.T.GoName()
}

// SortedVars are m's keys in the order of their declarations.
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
