package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
)

// gen generates one package's kernels.
type gen struct {
	p       *pkg
	errs    *errList
	kernels []*kernel
	funcs   map[*types.Func]*fn
	cwd     string

	// refused are the functions marked //gompt:func or //gompt:kernel
	// that collect refused (reported at their declaration), by their
	// directive: a call of one says nothing more, or that it calls a
	// kernel.
	refused map[*types.Func]string

	launchDir  string // where the launchers go; "" for the package itself
	launchPath string // that package's import path
	launchName string // and its name
}

// options are gompt-kernels' flags.
type options struct {
	dir       string // the package's folder
	out       string // where to write ("" for dir)
	launchers string // -launchers
	clang     string
	libclc    string
	warn      func(string)
}

// output is what the generator writes: file name (relative to the output
// folder) to contents.
type output map[string][]byte

// generate translates the package in o.dir and returns its files. A
// panic of the generator (a construct the checks let through that the
// translation does not know) is returned as an error asking for a report,
// never a crash.
func generate(o options) (out output, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("gompt-kernels: internal error (please report it, with the kernel): %v\n%s", r, debug.Stack())
		}
	}()
	return generatePkg(o)
}

func generatePkg(o options) (output, error) {
	p, typeErrs, err := load(o.dir)
	if err != nil {
		return nil, err
	}
	g := &gen{p: p, errs: &errList{fset: p.fset}, funcs: map[*types.Func]*fn{}, refused: map[*types.Func]string{}}
	g.cwd, _ = os.Getwd()
	g.errs.cwd = g.cwd
	if o.launchers != "" {
		if err := g.launchPackage(o.launchers); err != nil {
			return nil, err
		}
	}
	g.collect()
	if len(g.kernels) == 0 && len(g.funcs) == 0 && len(g.errs.errs) == 0 {
		return nil, fmt.Errorf("%s: no //gompt:kernel function in package %s", g.relDir(p.dir), p.name)
	}
	// Type errors inside the functions to translate stop the generator
	// (their types are unknown); others are the compiler's to report.
	all := append([]*fn{}, g.sortedFuncs()...)
	for _, k := range g.kernels {
		all = append(all, k.fn)
	}
	for _, e := range typeErrs {
		var te types.Error
		if !errors.As(e, &te) {
			continue
		}
		for _, f := range all {
			if te.Pos >= f.decl.Pos() && te.Pos < f.decl.End() {
				g.errs.add(te.Pos, "%s", te.Msg)
				break
			}
		}
	}
	for _, f := range all {
		g.check(f)
	}
	g.recursion(all)
	g.checkTeams()
	g.checkReduceArrays()
	g.checkLaunchers(o)
	if len(g.errs.errs) > 0 {
		return nil, g.errs
	}
	g.propagate(all)
	g.checkNames(o)
	if len(g.errs.errs) > 0 {
		return nil, g.errs
	}
	sort.Slice(g.kernels, func(i, j int) bool { return g.kernels[i].name < g.kernels[j].name })
	for _, k := range g.kernels {
		g.newProver(k).prove()
		g.planNeeds(k)
	}
	out := output{}
	ptxOK := true
	for _, k := range g.kernels {
		cl := g.openCL(k)
		out[k.entry+".cl"] = []byte(cl)
		if !ptxOK {
			continue
		}
		ptx, err := buildPTX(o.clang, o.libclc, k.entry+".cl", cl)
		if errors.Is(err, errNoToolchain) {
			ptxOK = false
			if o.warn != nil {
				o.warn(fmt.Sprintf("gompt-kernels: %v: the kernels get no PTX image, so a CUDA device cannot run them; install the Debian packages clang-19 and libclc-19 and run go generate again", err))
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("kernel %s (%s): %v", k.name, g.rel(k.decl.Pos()), err)
		}
		out[k.entry+".ptx"] = []byte(ptx)
	}
	src, err := g.goFile(out)
	if err != nil {
		return nil, err
	}
	out[goFileName] = src
	if o.launchers != "" {
		src, err := g.launcherFile()
		if err != nil {
			return nil, err
		}
		out[filepath.Join(filepath.FromSlash(o.launchers), launcherFileName)] = src
	}
	return out, nil
}

const (
	goFileName       = "gompt_kernels.go"
	launcherFileName = "gompt_launchers.go"
)

func (g *gen) sortedFuncs() []*fn {
	var fs []*fn
	for _, f := range g.funcs {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].decl.Pos() < fs[j].decl.Pos() })
	return fs
}

// recursion reports every call that closes a cycle of calls.
func (g *gen) recursion(all []*fn) {
	const (
		unseen = iota
		active
		done
	)
	state := map[*fn]int{}
	var path []*fn
	var visit func(f *fn)
	visit = func(f *fn) {
		state[f] = active
		path = append(path, f)
		for _, c := range f.calls {
			switch state[c.callee] {
			case active:
				var names []string
				start := 0
				for i, p := range path {
					if p == c.callee {
						start = i
					}
				}
				for _, p := range path[start:] {
					names = append(names, p.name)
				}
				names = append(names, c.callee.name)
				g.errs.unsupported(c.pos, "a recursive call of "+c.callee.name+" ("+strings.Join(names, " -> ")+")", "device code has no call stack to recurse on; write a loop")
			case unseen:
				visit(c.callee)
			}
		}
		path = path[:len(path)-1]
		state[f] = done
	}
	for _, f := range all {
		if state[f] == unseen {
			visit(f)
		}
	}
}

// propagate carries what helpers do to their callers: the buffers they
// read and write, inexact math.
func (g *gen) propagate(all []*fn) {
	for changed := true; changed; {
		changed = false
		for _, f := range all {
			for _, c := range f.calls {
				if c.callee.approx && !f.approx {
					f.approx, changed = true, true
				}
				for i, a := range c.args {
					cp := c.callee.params[i]
					if !cp.slice {
						continue
					}
					q := g.sliceParamArg(f, a)
					if cp.read && !q.read {
						q.read, changed = true, true
					}
					if cp.written && !q.written {
						q.written, changed = true, true
					}
				}
			}
		}
	}
}

// checkNames refuses generated names that clash with each other or with
// the package's own.
func (g *gen) checkNames(o options) {
	names := map[string]*kernel{}
	entries := map[string]*kernel{}
	scope := g.p.types.Scope()
	for _, k := range g.kernels {
		launchNames := []string{k.runName, k.runName + "Nowait"}
		if len(k.variants()) > 0 {
			launchNames = append(launchNames, variantFunc(k))
		}
		for _, n := range append([]string{k.varName}, launchNames...) {
			if other := names[n]; other != nil {
				g.errs.add(k.dirPos, "kernel %s: generated name %s is also kernel %s's; set var= on one of them", k.fn.name, n, other.fn.name)
			}
			names[n] = k
			if o.launchers != "" && n != k.varName {
				continue // declared in the launchers' package
			}
			if obj := scope.Lookup(n); obj != nil {
				g.errs.add(k.dirPos, "kernel %s: generated name %s is already declared at %s; set var= to another name", k.fn.name, n, g.rel(obj.Pos()))
			}
		}
		if other := entries[strings.ToLower(k.name)]; other != nil {
			g.errs.add(k.dirPos, "kernels %s and %s are both named %s (file names differ only in case at most); set name= on one of them", other.fn.name, k.fn.name, k.name)
		}
		entries[strings.ToLower(k.name)] = k
		if o.launchers != "" && !isExported(k.varName) {
			g.errs.add(k.dirPos, "kernel %s: -launchers puts the launchers in another package, which needs an exported kernel variable; set var= to an exported name", k.fn.name)
		}
	}
}

// rel is pos as file:line:col in the generated files, the file named
// relative to the package's folder (so that the output does not depend on
// where the generator runs).
func (g *gen) rel(pos token.Pos) string {
	p := g.p.fset.Position(pos)
	p.Filename = filepath.Base(p.Filename)
	return p.String()
}

func (g *gen) relDir(dir string) string { return relPath(g.cwd, dir) }

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

// write writes out into dir and removes generated kernel files of dir
// that out no longer has (a kernel renamed or deleted).
func write(dir string, out output) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, "gompt_") || !(strings.HasSuffix(n, ".cl") || strings.HasSuffix(n, ".ptx")) {
			continue
		}
		if _, ok := out[n]; ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err == nil && bytes.HasPrefix(b, []byte("// Code generated by gompt-kernels")) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	var names []string
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, out[n]) {
			continue
		}
		if err := os.WriteFile(path, out[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// launchPackage finds the package of -launchers dir (relative to the
// kernels' package): its import path, and its name (that of its Go files,
// or the folder's).
func (g *gen) launchPackage(dir string) error {
	if filepath.IsAbs(dir) {
		return fmt.Errorf("-launchers %s: want a folder relative to the package's", dir)
	}
	g.launchDir = filepath.Join(g.p.dir, dir)
	g.launchPath = path.Join(g.p.path, filepath.ToSlash(dir))
	if g.launchPath == g.p.path {
		return fmt.Errorf("-launchers %s is the package itself", dir)
	}
	g.launchName = path.Base(g.launchPath)
	entries, _ := os.ReadDir(g.launchDir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(g.launchDir, e.Name()), nil, parser.PackageClauseOnly)
		if err == nil {
			g.launchName = f.Name.Name
			break
		}
	}
	if !token.IsIdentifier(g.launchName) {
		return fmt.Errorf("-launchers %s: %q is not a package name; add a Go file declaring the package there", dir, g.launchName)
	}
	return nil
}

// typeString is t as the package's own code writes it.
func (g *gen) typeString(t types.Type) string {
	return types.TypeString(t, types.RelativeTo(g.p.types))
}
