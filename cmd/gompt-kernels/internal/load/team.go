package load

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"go/ast"
	"go/token"
	"go/types"
)

// teamKernel checks a team kernel's directive and signature and finds its
// team arrays; it reports whether k is good.
func teamKernel(g *ir.Program, k *ir.Kernel) bool {
	f := k.Fn
	switch {
	case len(k.Dims) != 1:
		g.Errs.Add(k.DirPos, "//gompt:kernel: team= takes dims=TEAMS, one int parameter: the number of teams")
		return false
	case k.Reduce != "":
		g.Errs.Add(k.DirPos, "//gompt:kernel: reduce= with team= is not supported; reduce into a team array and write one result per team")
		return false
	case len(f.Params) < 2 || f.Params[1].Slice || f.Params[1].T.Kind() != types.Int:
		g.Errs.Add(f.Decl.Type.Params.Pos(), "team kernel %s: its first two parameters must be the team's index and the thread's index in its team (int), then the number of teams and the other parameters", f.Name)
		return false
	case k.Dims[0] == f.Params[1]:
		g.Errs.Add(k.DirPos, "//gompt:kernel: dims=: %s is the thread's index, not the number of teams", k.Dims[0].Name)
		return false
	}
	k.Thread = f.Params[1]
	k.TeamArrays = map[*types.Var]int{}
	for _, s := range f.Decl.Body.List {
		ds, ok := s.(*ast.DeclStmt)
		if !ok {
			continue
		}
		gd := ds.Decl.(*ast.GenDecl)
		if gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if vs.Type == nil || len(vs.Values) > 0 {
				continue
			}
			arr, ok := g.P.Info.TypeOf(vs.Type).(*types.Array)
			if !ok {
				continue
			}
			if sc, ok := ir.ScalarOf(arr.Elem()); !ok || sc.IsBool() {
				continue
			}
			for _, n := range vs.Names {
				if v, ok := g.P.Info.Defs[n].(*types.Var); ok {
					k.TeamArrays[v] = int(arr.Len())
				}
			}
		}
	}
	return true
}
