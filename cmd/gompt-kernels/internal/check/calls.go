package check

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"strings"
)

// Recursion reports every call that closes a cycle of calls.
func Recursion(g *ir.Program, all []*ir.Fn) {
	const (
		unseen = iota
		active
		done
	)
	state := map[*ir.Fn]int{}
	var path []*ir.Fn
	var visit func(f *ir.Fn)
	visit = func(f *ir.Fn) {
		state[f] = active
		path = append(path, f)
		for _, c := range f.Calls {
			switch state[c.Callee] {
			case active:
				var names []string
				start := 0
				for i, p := range path {
					if p == c.Callee {
						start = i
					}
				}
				for _, p := range path[start:] {
					names = append(names, p.Name)
				}
				names = append(names, c.Callee.Name)
				g.Errs.Unsupported(c.Pos, "a recursive call of "+c.Callee.Name+" ("+strings.Join(names, " -> ")+")", "device code has no call stack to recurse on; write a loop")
			case unseen:
				visit(c.Callee)
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

// Propagate carries what helpers do to their callers: the buffers they
// read and write, inexact math.
func Propagate(g *ir.Program, all []*ir.Fn) {
	for changed := true; changed; {
		changed = false
		for _, f := range all {
			for _, c := range f.Calls {
				if c.Callee.Approx && !f.Approx {
					f.Approx, changed = true, true
				}
				for i, a := range c.Args {
					cp := c.Callee.Params[i]
					if !cp.Slice {
						continue
					}
					q := g.SliceParamArg(f, a)
					if cp.Read && !q.Read {
						q.Read, changed = true, true
					}
					if cp.Written && !q.Written {
						q.Written, changed = true, true
					}
				}
			}
		}
	}
}

// CheckNames refuses generated names that clash with each other or with
// the package's own.
func CheckNames(g *ir.Program, o ir.Options) {
	names := map[string]*ir.Kernel{}
	entries := map[string]*ir.Kernel{}
	funcs := map[string]*ir.Kernel{} // the generated Go functions' names follow the function's
	for _, k := range g.Kernels {
		key := ir.UpperFirst(k.Fn.Name)
		if other := funcs[key]; other != nil {
			g.Errs.Add(k.DirPos, "kernels %s and %s get the same generated functions (gomptHost%s...): their names differ only in the first letter's case; rename one", other.Fn.Name, k.Fn.Name, key)
		}
		funcs[key] = k
	}
	scope := g.P.Types.Scope()
	for _, k := range g.Kernels {
		launchNames := []string{k.RunName, k.RunName + "Nowait"}
		if len(k.Variants()) > 0 {
			launchNames = append(launchNames, ir.VariantFunc(k))
		}
		for _, n := range append([]string{k.VarName}, launchNames...) {
			if other := names[n]; other != nil {
				g.Errs.Add(k.DirPos, "kernel %s: generated name %s is also kernel %s's; set var= on one of them", k.Fn.Name, n, other.Fn.Name)
			}
			names[n] = k
			if o.Launchers != "" && n != k.VarName {
				continue // declared in the launchers' package
			}
			if obj := scope.Lookup(n); obj != nil {
				g.Errs.Add(k.DirPos, "kernel %s: generated name %s is already declared at %s; set var= to another name", k.Fn.Name, n, g.Rel(obj.Pos()))
			}
		}
		if other := entries[strings.ToLower(k.Name)]; other != nil {
			g.Errs.Add(k.DirPos, "kernels %s and %s are both named %s (file names differ only in case at most); set name= on one of them", other.Fn.Name, k.Fn.Name, k.Name)
		}
		entries[strings.ToLower(k.Name)] = k
		if o.Launchers != "" && !ir.IsExported(k.VarName) {
			g.Errs.Add(k.DirPos, "kernel %s: -launchers puts the launchers in another package, which needs an exported kernel variable; set var= to an exported name", k.Fn.Name)
		}
	}
}
