// Package load is the compiler's first phase: it loads a package with its
// types and turns its //gompt:kernel, //gompt:func and //gompt:variant
// functions into the model (ir.Kernel, ir.Fn), checking the directives.
package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Load parses and type-checks the package in dir. Dependencies come from
// their export data, which `go list -export` builds (so cgo packages such
// as package target load as any other). Type errors outside the functions
// the generator translates are left to the compiler: a file that calls a
// launcher not generated yet is normal.
func Load(dir string) (*ir.Pkg, []error, error) {
	cmd := exec.Command("go", "list", "-e", "-deps", "-export", "-json=ImportPath,Name,Dir,Export,GoFiles,Error", ".")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("go list in %s: %v\n%s", dir, err, strings.TrimSpace(stderr.String()))
	}
	exports := map[string]string{}
	var self *ir.Listed
	dec := json.NewDecoder(&stdout)
	for {
		var l ir.Listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("go list in %s: %v", dir, err)
		}
		exports[l.ImportPath] = l.Export
		self = &l // -deps lists the package itself last
	}
	if self == nil {
		return nil, nil, fmt.Errorf("go list in %s: no package", dir)
	}
	if len(self.GoFiles) == 0 && self.Error != nil {
		return nil, nil, fmt.Errorf("%s: %s", dir, self.Error.Err)
	}
	p := &ir.Pkg{Fset: token.NewFileSet(), Path: self.ImportPath, Name: self.Name, Dir: self.Dir}
	for _, name := range self.GoFiles {
		path := filepath.Join(self.Dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		if bytes.HasPrefix(src, []byte(ir.GeneratedHeader)) {
			continue
		}
		f, err := parser.ParseFile(p.Fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		p.Files = append(p.Files, f)
	}
	var typeErrs []error
	conf := types.Config{
		Importer: importer.ForCompiler(p.Fset, "gc", func(path string) (io.ReadCloser, error) {
			file := exports[path]
			if file == "" {
				return nil, fmt.Errorf("no export data for %q (does it build?)", path)
			}
			return os.Open(file)
		}),
		Error: func(err error) { typeErrs = append(typeErrs, err) },
	}
	p.Info = &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Implicits:  map[ast.Node]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Scopes:     map[ast.Node]*types.Scope{},
	}
	p.Types, _ = conf.Check(p.Path, p.Fset, p.Files, p.Info)
	return p, typeErrs, nil
}
