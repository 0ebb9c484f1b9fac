package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
)

// Needs: what a kernel's device code needs of a device beyond what every
// device gives it (device.Caps), each with the source position where it
// is first needed, as the generated device.Kernel's Needs records it. A
// device that lacks one refuses the kernel at load (device.CheckNeeds)
// with a message naming the kernel, this position and what the device
// lacks, before anything is copied; without the record the driver would
// fail the build, or the launch, in its own words.
//
// planNeeds computes them from the checked kernel, in Go's terms (types,
// the directive, the team arrays), after the checks and before the
// emitters, which only read k.needs:
//
//   - NeedFP64: the device code computes with float64 (OpenCL C double):
//     a float64 parameter, slice, result, local, conversion, operation or
//     math call, in the kernel or in a //gompt:func helper it calls.
//   - NeedInt64Atomics: it uses 64-bit atomics (atomics.go's atom64,
//     cl_khr_int64_base_atomics): sync/atomic's Add and CompareAndSwap of
//     Int64 and Uint64 (a Load is a plain read), and an array reduction
//     of 64-bit elements (int64, uint64, int, uint, float64), whose team
//     copies are combined into the buffer with 64-bit atomics or
//     compare-and-swap loops on every device (reducearray.go).
//   - NeedLocalMem: the bytes of __local memory its entry declares: team
//     arrays, the array reductions' team copies, a reduction's scratch.
//   - NeedTeamSize: a team kernel's team=N (reqd_work_group_size).
//
// The generator's tests check each record against the OpenCL C of every
// kernel it makes.

// need is one device.Need of a kernel.
type need struct {
	kind   string // the device.NeedKind constant: "NeedFP64", "NeedInt64Atomics", "NeedLocalMem", "NeedTeamSize"
	amount int64  // bytes (NeedLocalMem), threads (NeedTeamSize)
	use    string // what needs it, in Go's terms: "float64", "atomic.AddUint64", "teams of 64 threads (team=64)"
	pos    string // where it is first needed: "file.go:line"
}

const (
	needFP64         = "NeedFP64"
	needInt64Atomics = "NeedInt64Atomics"
	needLocalMem     = "NeedLocalMem"
	needTeamSize     = "NeedTeamSize"
)

// needList is a kernel's needs (kernel.needs).
type needList []need

// has reports whether the list holds a need of kind.
func (l needList) has(kind string) bool {
	for _, n := range l {
		if n.kind == kind {
			return true
		}
	}
	return false
}

// planNeeds records k's needs in k.needs, in the order fp64, int64
// atomics, local memory, team size; only those it has.
func (g *gen) planNeeds(k *kernel) {
	k.needs = nil
	if pos := g.firstFloat64(k); pos.IsValid() {
		k.needs = append(k.needs, need{kind: needFP64, use: "float64", pos: g.line(pos)})
	}
	if use, pos := g.firstAtomic64(k); pos.IsValid() {
		k.needs = append(k.needs, need{kind: needInt64Atomics, use: use, pos: g.line(pos)})
	}
	if n, use, pos := g.localMem(k); n > 0 {
		k.needs = append(k.needs, need{kind: needLocalMem, amount: n, use: use, pos: g.line(pos)})
	}
	if k.team > 0 {
		k.needs = append(k.needs, need{kind: needTeamSize, amount: int64(k.team), use: fmt.Sprintf("teams of %d threads (team=%d)", k.team, k.team), pos: g.line(k.dirPos)})
	}
}

// line is pos as the generated code's positions are: "file.go:line", the
// file's base name.
func (g *gen) line(pos token.Pos) string {
	p := g.p.fset.Position(pos)
	return filepath.Base(p.Filename) + ":" + itoa(p.Line)
}

// deviceWalk visits a kernel's device code in source order: each
// function's parameters and result, then its body, and at a call of a
// helper, after the call's arguments, the helper (once: a second call of
// it finds nothing new). visit returns whether it found what the walk
// looks for (found, which ends the walk) and whether to look inside n.
type deviceWalk struct {
	g     *gen
	visit func(f *fn, n ast.Node) (found, descend bool)
	seen  map[*fn]bool
}

func (w *deviceWalk) fn(f *fn) bool {
	if w.seen[f] {
		return false
	}
	w.seen[f] = true
	return w.node(f, f.decl.Type) || w.node(f, f.decl.Body)
}

func (w *deviceWalk) node(f *fn, root ast.Node) bool {
	found := false
	ast.Inspect(root, func(n ast.Node) bool {
		if found || n == nil {
			return false
		}
		hit, descend := w.visit(f, n)
		if hit {
			found = true
			return false
		}
		if call, ok := n.(*ast.CallExpr); ok && descend {
			if callee := w.g.helperCalled(call); callee != nil {
				for _, a := range call.Args {
					if w.node(f, a) {
						found = true
						return false
					}
				}
				found = w.fn(callee)
				return false
			}
		}
		return descend
	})
	return found
}

// helperCalled is the //gompt:func helper call calls, if it calls one.
func (g *gen) helperCalled(call *ast.CallExpr) *fn {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok {
		return nil
	}
	obj, _ := g.p.info.Uses[id].(*types.Func)
	if obj == nil {
		return nil
	}
	return g.funcs[obj]
}

// isFloat64 reports whether t is float64, or a slice or array of it.
func isFloat64(t types.Type) bool {
	switch u := t.(type) {
	case *types.Slice:
		t = u.Elem()
	case *types.Array:
		t = u.Elem()
	}
	b, ok := t.(*types.Basic)
	return ok && b.Kind() == types.Float64
}

// firstFloat64 is the position of the first use of float64 in k's device
// code (token.NoPos for none): a parameter or result of float64 (or a
// slice of it), a local declared float64 (a team array of them), an
// expression of type float64 that is not a constant (a constant is
// folded into the expression it is part of, which has its own type), a
// math function taking or returning float64 (math.Float64bits(1.5)
// computes with a double too).
func (g *gen) firstFloat64(k *kernel) token.Pos {
	info := g.p.info
	var at token.Pos
	w := &deviceWalk{g: g, seen: map[*fn]bool{}}
	w.visit = func(f *fn, n ast.Node) (bool, bool) {
		switch n := n.(type) {
		case *ast.FuncType:
			for _, fl := range []*ast.FieldList{n.Params, n.Results} {
				if fl == nil {
					continue
				}
				for _, field := range fl.List {
					if isFloat64(info.TypeOf(field.Type)) {
						at = field.Pos()
						return true, false
					}
				}
			}
			return false, false
		case *ast.Ident:
			if v, ok := info.Defs[n].(*types.Var); ok && isFloat64(v.Type()) {
				at = n.Pos()
				return true, false
			}
		case *ast.CallExpr:
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					if pn, ok := info.Uses[id].(*types.PkgName); ok && pn.Imported().Path() == "math" {
						mf := mathFuncs[sel.Sel.Name]
						if strings.Contains(mf.args, "f") && mf.args != "f32" || mf.result == "f" {
							at = n.Pos()
							return true, false
						}
					}
				}
			}
		}
		if e, ok := n.(ast.Expr); ok {
			if tv, ok := info.Types[e]; ok && !tv.IsType() && tv.Value == nil && tv.Type != nil && isFloat64(tv.Type) {
				at = e.Pos()
				return true, false
			}
		}
		return false, true
	}
	w.fn(k.fn)
	return at
}

// firstAtomic64 is the first use of 64-bit atomics in k's device code
// (its words for the Need's Use, and its position; token.NoPos for none):
// a call of sync/atomic's Add or CompareAndSwap of Int64 or Uint64, an
// update of an array reduction of 64-bit elements. An array reduction of
// them whose body never updates it still merges its team copies with
// 64-bit atomics: its directive is then the position.
func (g *gen) firstAtomic64(k *kernel) (string, token.Pos) {
	info := g.p.info
	var use string
	var at token.Pos
	w := &deviceWalk{g: g, seen: map[*fn]bool{}}
	reduction := func(f *fn, e ast.Expr) bool {
		if f != k.fn {
			return false // a helper cannot take a reduction array (checkReduceArrays)
		}
		_, _, p := k.reduceArrayAt(info, e)
		if p == nil || p.t.bits() != 64 {
			return false
		}
		use, at = reduceArrayUse(k, p), e.Pos()
		return true
	}
	w.visit = func(f *fn, n ast.Node) (bool, bool) {
		switch n := n.(type) {
		case *ast.CallExpr:
			if name, ok := atomicCallee(info, n); ok {
				if op, ok := atomicOps[name]; ok && op.t.bits() == 64 && op.kind != "load" {
					use, at = "atomic."+name, n.Pos()
					return true, false
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == 1 && reduction(f, n.Lhs[0]) {
				return true, false
			}
		case *ast.IncDecStmt:
			if reduction(f, n.X) {
				return true, false
			}
		}
		return false, true
	}
	if w.fn(k.fn) {
		return use, at
	}
	for _, p := range k.args() {
		if k.reduceArrays[p] != "" && p.t.bits() == 64 {
			return reduceArrayUse(k, p), k.dirPos
		}
	}
	return "", token.NoPos
}

// reduceArrayUse names array reduction p: "an array reduction of int64
// (reduce(s)=+)".
func reduceArrayUse(k *kernel, p *param) string {
	return fmt.Sprintf("an array reduction of %s (reduce(%s)=%s)", p.t.goName(), p.name, k.reduceArrays[p])
}

// localMem is the bytes of __local memory k's entry declares, what they
// hold, and where the source asks for them: its team arrays (at least one
// element each; the first one's declaration), its array reductions' team
// copies and a reduction's scratch of one value per thread (the
// directive).
func (g *gen) localMem(k *kernel) (int64, string, token.Pos) {
	var n int64
	var what []string
	at := token.NoPos
	if arrays := sortedTeamArrays(k); len(arrays) > 0 {
		var names []string
		for _, v := range arrays {
			n += int64(max(k.teamArrays[v], 1)) * int64(teamElem(v).bits()/8)
			names = append(names, v.Name())
		}
		what = append(what, plural(len(names), "team array ", "team arrays ")+strings.Join(names, ", "))
		at = arrays[0].Pos()
	}
	var copies []string
	for _, p := range k.args() {
		if op := k.reduceArrays[p]; op != "" {
			n += int64(k.reduceLen[p]) * int64(p.t.bits()/8)
			copies = append(copies, fmt.Sprintf("reduce(%s)=%s", p.name, op))
		}
	}
	if len(copies) > 0 {
		what = append(what, "the team's "+plural(len(copies), "copy", "copies")+" of "+strings.Join(copies, ", "))
		if !at.IsValid() {
			at = k.dirPos
		}
	}
	if k.reduce != "" {
		n += maxThreads * int64(k.result.bits()/8)
		what = append(what, fmt.Sprintf("reduce=%s's scratch: %d %s, one per thread", k.reduce, maxThreads, k.result.goName()))
		if !at.IsValid() {
			at = k.dirPos
		}
	}
	if n == 0 {
		return 0, "", token.NoPos
	}
	return n, fmt.Sprintf("%d bytes of team-local memory (%s)", n, strings.Join(what, "; ")), at
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
