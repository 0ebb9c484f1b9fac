package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// Array reductions: //gompt:kernel dims=n reduce(h)=+ len(h)=256. The
// points add into h's elements (h[b] += v, h[b]++, nothing else); each team
// adds into a private copy of h (OpenCL __local memory with local atomics;
// a Go array in the Go image), and adds its copy into h once, with global
// atomics. The result is h's values plus the points' sums, exact for the
// integer types there are atomics for.

// maxReduceLen is the largest array reduction: 16384 elements (64 KiB of
// 32-bit elements, a GPU's local memory per work-group).
const maxReduceLen = 16384

// reduceArrayKernel checks a kernel's reduce(buf)= arrays: a 1-D map
// kernel, each a buffer of int32, uint32, int64 or uint64 with a constant
// len(buf)=.
func (g *gen) reduceArrayKernel(k *kernel, lenExprs map[*param]string) bool {
	if k.reduce != "" || k.team > 0 || len(k.dims) != 1 {
		g.errs.add(k.dirPos, "//gompt:kernel: reduce(BUF)= is for a map kernel with one dimension (dims=n), without reduce= or team=")
		return false
	}
	k.reduceLen = map[*param]int{}
	for p := range k.reduceArrays {
		switch p.t.kind() {
		case types.Int32, types.Uint32, types.Int64, types.Uint64:
		default:
			g.errs.add(k.dirPos, "//gompt:kernel: reduce(%s)=+: %s is a []%s; array reductions add int32, uint32, int64 or uint64 elements (the types with atomics)", p.name, p.name, p.t.goName())
			return false
		}
		n := 1
		expr, ok := lenExprs[p]
		if ok {
			for _, t := range strings.Split(expr, "*") {
				v, err := strconv.Atoi(t)
				if err != nil || v <= 0 || n*v > maxReduceLen {
					ok = false
					break
				}
				n *= v
			}
		}
		if !ok {
			g.errs.add(k.dirPos, "//gompt:kernel: reduce(%s)=+ needs len(%s)=N, a whole number from 1 to %d (a team's private copy is in local memory)", p.name, p.name, maxReduceLen)
			return false
		}
		k.reduceLen[p] = n
	}
	return true
}

// checkReduceArrays checks that a reduction array's only uses are
// h[e] += v, h[e]++ and len(h).
func (g *gen) checkReduceArrays() {
	info := g.p.info
	for _, k := range g.kernels {
		if len(k.reduceArrays) == 0 {
			continue
		}
		allowed := map[*ast.Ident]bool{}
		target := func(e ast.Expr) {
			if ix, ok := ast.Unparen(e).(*ast.IndexExpr); ok {
				if id, ok := ast.Unparen(ix.X).(*ast.Ident); ok {
					allowed[id] = true
				}
			}
		}
		ast.Inspect(k.decl.Body, func(n ast.Node) bool {
			switch s := n.(type) {
			case *ast.AssignStmt:
				if s.Tok == token.ADD_ASSIGN {
					target(s.Lhs[0])
				}
			case *ast.IncDecStmt:
				if s.Tok == token.INC {
					target(s.X)
				}
			case *ast.CallExpr:
				if id, ok := ast.Unparen(s.Fun).(*ast.Ident); ok && id.Name == "len" && info.Types[s.Fun].IsBuiltin() {
					if a, ok := ast.Unparen(s.Args[0]).(*ast.Ident); ok {
						allowed[a] = true
					}
				}
			}
			return true
		})
		ast.Inspect(k.decl.Body, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			v, _ := info.Uses[id].(*types.Var)
			if p := k.byObj[v]; p != nil && k.reduceArrays[p] != "" && !allowed[id] {
				g.errs.add(id.Pos(), "%s is reduce(%s)=+: the kernel may only add to its elements (%s[i] += v, %s[i]++) and take its len", id.Name, id.Name, id.Name, id.Name)
			}
			return true
		})
	}
}

func (c *cfunc) isReduceArray(p *param) bool {
	return c.f.kernel != nil && c.f.kernel.reduceArrays[p] != ""
}

// reduceArrayAdd is h[e] += v (or h[e]++) on a reduction array: an atomic
// add into the team's copy in local memory; an index outside its length
// fails the check (unless proven in range), and adds nothing.
func (c *cfunc) reduceArrayAdd(l ast.Expr, op token.Token, rhs func() string, r []ast.Expr) bool {
	ix, ok := ast.Unparen(l).(*ast.IndexExpr)
	if !ok || c.f.kernel == nil {
		return false
	}
	p := c.bufferOf(ix)
	if p == nil || !c.isReduceArray(p) {
		return false
	}
	t := p.t
	idx := c.newTmp()
	c.line("{")
	c.depth++
	c.line("long %s = %s;", idx, c.index(ix.Index))
	v := rhs()
	if len(r) > 0 {
		v = c.convertTo(r[0], t)
	}
	add := "atomic_add"
	if t.bits() == 64 {
		add = "gompt_atom_add64"
		c.pre.need("gompt_atom64", atom64)
	}
	fail := ""
	if !c.proven(ix) {
		fail = fmt.Sprintf(" else %s(%s, %s, %s);", c.pre.fail(c.file.k), c.site(siteIndex, ix.Index.Pos()), idx, c.lens[p])
	}
	// On a CPU device one work-item per team runs the team's points (see
	// reduceArrayEntry): a plain add.
	c.b.WriteString("#ifdef GOMPT_CPU_DEVICE\n")
	c.line("if ((ulong)%s < (ulong)%s) %s[%s] += (%s)(%s);%s", idx, c.lens[p], c.names[p.obj], idx, t.c(), v, fail)
	c.b.WriteString("#else\n")
	c.line("if ((ulong)%s < (ulong)%s) %s(&%s[%s], (%s)(%s));%s", idx, c.lens[p], add, c.names[p.obj], idx, t.c(), v, fail)
	c.b.WriteString("#endif\n")
	c.depth--
	c.line("}")
	return true
}

// reduceArrayEntry is the entry of a kernel with reduction arrays: each
// work-group zeroes its copies in local memory, runs its points
// grid-stride, and adds its copies into the buffers.
func (g *gen) reduceArrayEntry(k *kernel, pre *prelude) string {
	w := &entryWriter{}
	line := w.line
	names := w.begin(k, "")
	var arrays []*param
	for _, p := range k.args() {
		if k.reduceArrays[p] != "" {
			arrays = append(arrays, p)
			line("__local %s gompt_r_%s[%d];", p.t.c(), names[p], k.reduceLen[p])
		}
	}
	rest := lengths(k, pre, names, line)
	// The body gets the local copies in place of the buffers.
	for i, a := range rest {
		for _, p := range arrays {
			if a == names[p] {
				rest[i] = "gompt_r_" + names[p]
			}
		}
	}
	line("long gompt_lid = (long)get_local_id(0), gompt_lsz = (long)get_local_size(0);")
	n := "(long)" + names[k.dims[0]]
	merge := func(lid, lsz string) {
		for _, p := range arrays {
			add := "atomic_add"
			if p.t.bits() == 64 {
				add = "gompt_atom_add64"
				pre.need("gompt_atom64", atom64)
			}
			line("for (long gompt_l = %s; gompt_l < %d && gompt_l < gompt_len_%s; gompt_l += %s) {", lid, k.reduceLen[p], names[p], lsz)
			line("  %s gompt_v = gompt_r_%s[gompt_l];", p.t.c(), names[p])
			line("  if (gompt_v != 0) %s(&%s[gompt_l], gompt_v);", add, names[p])
			line("}")
		}
	}
	// On a CPU device (POCL), where a work-group's work-items run one
	// after another on one core, atomics into the team's copy cost more
	// than the work: there one work-item runs the team's contiguous share
	// of the points with plain adds, and merges the copy (a histogram of
	// 2^24 values on POCL: 55 ms with local atomics).
	line("#ifdef GOMPT_CPU_DEVICE")
	line("if (gompt_lid == 0) {")
	w.depth++
	for _, p := range arrays {
		line("for (long gompt_l = 0; gompt_l < %d; gompt_l++) gompt_r_%s[gompt_l] = 0;", k.reduceLen[p], names[p])
	}
	line("long gompt_chunk = (%s - 1) / (long)get_num_groups(0) + 1;", n)
	line("long gompt_lo = (long)get_group_id(0) * gompt_chunk;")
	line("long gompt_hi = gompt_lo + gompt_chunk < %s ? gompt_lo + gompt_chunk : %s;", n, n)
	line("for (long gompt_i0 = gompt_lo; gompt_i0 < gompt_hi; gompt_i0++) {")
	line("  %s(%s%s);", bodyName(k), strings.Join(append([]string{"gompt_i0"}, rest...), ", "), faultArgsNext)
	if len(k.sites) > 0 {
		line("  if (gompt_stopped) break;")
	}
	line("}")
	merge("0", "1")
	w.depth--
	line("}")
	line("#else")
	for _, p := range arrays {
		line("for (long gompt_l = gompt_lid; gompt_l < %d; gompt_l += gompt_lsz) gompt_r_%s[gompt_l] = 0;", k.reduceLen[p], names[p])
	}
	line("barrier(CLK_LOCAL_MEM_FENCE);")
	line("for (long gompt_i0 = (long)get_global_id(0); gompt_i0 < %s; gompt_i0 += (long)get_global_size(0)) {", n)
	line("  %s(%s%s);", bodyName(k), strings.Join(append([]string{"gompt_i0"}, rest...), ", "), faultArgsNext)
	if len(k.sites) > 0 {
		line("  if (gompt_stopped) break; // on to the barrier, which every work-item reaches")
	}
	line("}")
	line("barrier(CLK_LOCAL_MEM_FENCE);")
	merge("gompt_lid", "gompt_lsz")
	line("#endif")
	w.depth--
	line("}")
	return w.sb.String()
}

// reduceArraysHost makes the Go image's private copies of its reduction
// arrays: buffer h's name then holds a slice of an array of the team's, and
// the function returned writes the adds of the copies into the buffers
// (atomic: teams run concurrently).
func (g *gen) reduceArraysHost(w *goWriter, k *kernel) func() {
	if len(k.reduceArrays) == 0 {
		return func() {}
	}
	var arrays []*param
	for _, p := range k.args() {
		if k.reduceArrays[p] != "" {
			arrays = append(arrays, p)
			w.p("gomptRB%s := %s", upperFirst(p.name), p.name)
			w.p("var gomptRA%s [%d]%s", upperFirst(p.name), k.reduceLen[p], p.t.goName())
			w.p("%s = gomptRA%s[:len(%s)]", p.name, upperFirst(p.name), p.name)
		}
	}
	return func() {
		w.imports[atomicPkg] = "gomptatomic"
		for _, p := range arrays {
			name := upperFirst(p.name)
			w.p("for gomptI, gomptV := range gomptRA%s[:len(gomptRB%s)] {", name, name)
			w.p("if gomptV != 0 {")
			w.p("gomptatomic.Add%s(&gomptRB%s[gomptI], gomptV)", upperFirst(p.t.goName()), name)
			w.p("}")
			w.p("}")
		}
	}
}
