package ir

import (
	"go/ast"
)

// The generated Go file imports these packages under names no user
// identifier takes, so that the generated functions may name their locals
// as the kernel's parameters.
const (
	DevicePkg = "github.com/gompt/gompt/device"
	RtPkg     = "github.com/gompt/gompt/kernelrt"
	TargetPkg = "github.com/gompt/gompt/target"
)

// goType is p's Go type.
func GoType(p *Param) string {
	if p.Slice {
		return "[]" + p.T.GoName()
	}
	return p.T.GoName()
}

func identOf(e ast.Expr) *ast.Ident { return ast.Unparen(e).(*ast.Ident) }
