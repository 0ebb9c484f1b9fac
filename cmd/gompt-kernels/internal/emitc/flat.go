package emitc

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// A function's checked statements are each followed by "if (*gompt_stop)
// return;" (func.go). Mesa's rusticl lowers each return by nesting the
// rest of the function one if deeper, and llvmpipe ignores the conditions
// of ifs nested more than 80 deep (gallivm's LP_MAX_TGSI_NESTING): both
// branches run, so the failure branches of the checks past that depth
// ran, and a helper of a few hundred checked statements reported a fault
// at an index in range. A function that makes checks and would test its
// stop flag in more than flatAbove places (after checked statements, and
// at the top of its loops) is written flat instead: once a statement in a list has made checks,
// each statement after it in the list runs under "if (!*gompt_stop)",
// its new locals declared before the test (with their zero values), and
// a loop leaves at its top with a break. The nesting is then that of the
// Go source. Below the bound the returns stay: no generated file of the
// library, the corpus or PolyBench has more than 12 in a function.
const flatAbove = 16

// flatLoopTop, in a flat function, leaves the loop whose body begins
// here once a check has failed.
func (c *cfunc) flatLoopTop() {
	if c.flat {
		c.line("if (*gompt_stop) break;")
	}
}

// isViewDecl reports whether s declares views (view.go): their bounds
// are checked as they are made, which records nothing once a check has
// failed (the first failure is kept), so they are not guarded, and their
// names stay in scope.
func (c *cfunc) isViewDecl(s ast.Stmt) bool {
	for _, id := range definedBy(s) {
		if v, _ := c.info().Defs[id].(*types.Var); v != nil && c.f.Views[v] != nil {
			return true
		}
	}
	return false
}

// guarded writes s to run only where no check has failed, its new locals
// declared before the test.
func (c *cfunc) guarded(s ast.Stmt) {
	for _, id := range definedBy(s) {
		v, _ := c.info().Defs[id].(*types.Var)
		if v == nil || id.Name == "_" || ir.TeamArrayOf(c.info(), c.f, id) != nil {
			continue
		}
		t, ok := ir.ScalarOf(v.Type())
		if !ok {
			continue
		}
		name := ir.CName(id.Name, c.used)
		c.names[v] = name
		c.line("%s %s = %s;", t.C(), name, c.zero(t))
		if c.predeclared == nil {
			c.predeclared = map[*types.Var]bool{}
		}
		c.predeclared[v] = true
	}
	c.line("if (!*gompt_stop) {")
	c.depth++
	c.stmt(s, "")
	c.depth--
	c.line("}")
}

// definedBy lists the identifiers s declares in its own scope: those of
// a := and of a var declaration.
func definedBy(s ast.Stmt) []*ast.Ident {
	var ids []*ast.Ident
	switch s := s.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			for _, l := range s.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					ids = append(ids, id)
				}
			}
		}
	case *ast.DeclStmt:
		if gd, ok := s.Decl.(*ast.GenDecl); ok {
			for _, spec := range gd.Specs {
				if vs, ok := spec.(*ast.ValueSpec); ok {
					ids = append(ids, vs.Names...)
				}
			}
		}
	}
	return ids
}
