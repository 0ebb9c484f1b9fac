package ir

import (
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
)

// gen generates one package's kernels.
type Program struct {
	P       *Pkg
	Errs    *ErrList
	Kernels []*Kernel
	Funcs   map[*types.Func]*Fn
	Cwd     string

	// Refused are the functions marked //gompt:func or //gompt:kernel
	// that collect refused (reported at their declaration), by their
	// directive: a call of one says nothing more, or that it calls a
	// kernel.
	Refused map[*types.Func]string

	LaunchDir  string // where the launchers go; "" for the package itself
	LaunchPath string // that package's import path
	LaunchName string // and its name
}

// Options are gompt-kernels' flags.
type Options struct {
	Dir       string // the package's folder
	Out       string // where to write ("" for dir)
	Launchers string // -launchers
	Clang     string
	Libclc    string
	Warn      func(string)
}

// Output is what the generator writes: file name (relative to the output
// folder) to contents.
type Output map[string][]byte

const (
	GoFileName       = "gompt_kernels.go"
	LauncherFileName = "gompt_launchers.go"
)

func (g *Program) SortedFuncs() []*Fn {
	var fs []*Fn
	for _, f := range g.Funcs {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Decl.Pos() < fs[j].Decl.Pos() })
	return fs
}

// Rel is pos as file:line:col in the generated files, the file named
// relative to the package's folder (so that the output does not depend on
// where the generator runs).
func (g *Program) Rel(pos token.Pos) string {
	p := g.P.Fset.Position(pos)
	p.Filename = filepath.Base(p.Filename)
	return p.String()
}

func (g *Program) RelDir(dir string) string { return relPath(g.Cwd, dir) }

func relPath(cwd, path string) string {
	if cwd == "" {
		return path
	}
	if r, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(r, "..") {
		if !strings.HasPrefix(r, ".") {
			r = "." + string(filepath.Separator) + r
		}
		return r
	}
	return path
}

// TypeString is t as the package's own code writes it.
func (g *Program) TypeString(t types.Type) string {
	return types.TypeString(t, types.RelativeTo(g.P.Types))
}
