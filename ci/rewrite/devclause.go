//go:build ignore

// devclause rewrites Region{Device: X} into Region{Device: target.Dev(X)} (Dev(X)
// inside package target) in the files named on the command line, for the
// change of Region.Device from int to DeviceClause:
//
//	go run ci/rewrite/devclause.go $(git ls-files "*.go") && gofmt -l .
package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
)

func main() {
	for _, path := range os.Args[1:] {
		src, err := os.ReadFile(path)
		if err != nil {
			panic(err)
		}
		fs := token.NewFileSet()
		f, err := parser.ParseFile(fs, path, src, parser.ParseComments)
		if err != nil {
			panic(err)
		}
		fn := "target.Dev("
		if f.Name.Name == "target" {
			fn = "Dev("
		}
		type ins struct {
			off int
			s   string
		}
		var edits []ins
		regionType := func(e ast.Expr) bool {
			switch t := e.(type) {
			case *ast.Ident:
				return t.Name == "Region" && f.Name.Name == "target"
			case *ast.SelectorExpr:
				x, ok := t.X.(*ast.Ident)
				return ok && x.Name == "target" && t.Sel.Name == "Region"
			}
			return false
		}
		elided := map[*ast.CompositeLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if at, ok := cl.Type.(*ast.ArrayType); ok && regionType(at.Elt) {
				for _, e := range cl.Elts {
					if c, ok := e.(*ast.CompositeLit); ok && c.Type == nil {
						elided[c] = true
					}
				}
			}
			if !regionType(cl.Type) && !elided[cl] {
				return true
			}
			for _, e := range cl.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, ok := kv.Key.(*ast.Ident); !ok || k.Name != "Device" {
					continue
				}
				if c, ok := kv.Value.(*ast.CallExpr); ok {
					if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Dev" {
						continue
					}
					if i, ok := c.Fun.(*ast.Ident); ok && i.Name == "Dev" {
						continue
					}
				}
				edits = append(edits, ins{fs.Position(kv.Value.Pos()).Offset, fn}, ins{fs.Position(kv.Value.End()).Offset, ")"})
			}
			return true
		})
		if len(edits) == 0 {
			continue
		}
		sort.SliceStable(edits, func(i, j int) bool { return edits[i].off > edits[j].off })
		out := append([]byte(nil), src...)
		for _, e := range edits {
			out = append(out[:e.off], append([]byte(e.s), out[e.off:]...)...)
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			panic(err)
		}
		println(path, len(edits)/2)
	}
}
