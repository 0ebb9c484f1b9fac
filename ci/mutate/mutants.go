package main

// The mutation operators: mutants parses one file and makes every mutant
// of it, each a change of a few bytes at one place.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// A mutant is one change to one file: the bytes [start, end) replaced by
// repl.
type mutant struct {
	file       string // absolute path
	rel        string // relative to the module root
	line, col  int    // where the change starts
	fnLine0    int    // the enclosing function's first and last lines
	fnLine1    int
	start, end int
	repl       string
	desc       string // e.g. "< -> <="
	fn         string // enclosing function
	text       string // the source line, trimmed

	// Where a schema can hold the mutant (schema.go): the node its
	// switch replaces, [ustart, uend), an expression or a statement.
	ukind        unitKind
	ustart, uend int
	fnStart      int // the enclosing top-level function's offsets
	fnEnd        int
	id           int // its number in the schema (GOMPT_MUTANT); 0: tested alone

	outcome string
	detail  string
}

func (m *mutant) key() string {
	return m.rel + "\t" + m.fn + "\t" + m.desc + "\t" + m.text
}

// mutants parses one file and returns every mutant of it, in source order.
func mutants(root, path string) ([]*mutant, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	lineText := func(p token.Pos) string {
		o := off(p)
		s := bytes.LastIndexByte(src[:o], '\n') + 1
		e := bytes.IndexByte(src[o:], '\n')
		if e < 0 {
			e = len(src) - o
		}
		return strings.TrimSpace(strings.ReplaceAll(string(src[s:o+e]), "\t", " "))
	}
	// blank keeps the newlines of a removed range, so that line numbers
	// after it stay as they were.
	blank := func(a, b token.Pos) string {
		return strings.Repeat("\n", bytes.Count(src[off(a):off(b)], []byte("\n")))
	}
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }

	var out []*mutant
	var fn string
	var fnLine0, fnLine1, fnStart, fnEnd int
	var stack []ast.Node
	// The unit of the mutants being added: set before each add.
	var (
		ukind unitKind
		unit  ast.Node
	)
	// stmtUnit makes statement n the unit if a switch may stand in its
	// place: a statement of a block or a case's body (not a for loop's
	// post statement, an if's init, a select case's communication or a
	// labelled statement).
	stmtUnit := func(n ast.Stmt) {
		ukind, unit = noUnit, nil
		if len(stack) < 2 {
			return
		}
		switch p := stack[len(stack)-2].(type) {
		case *ast.BlockStmt, *ast.CaseClause:
			ukind, unit = stmtKind, n
		case *ast.CommClause:
			if p.Comm != n {
				ukind, unit = stmtKind, n
			}
		}
	}
	add := func(at token.Pos, a, b token.Pos, repl, desc string) {
		for _, m := range out {
			if m.start == off(a) && m.end == off(b) && m.repl == repl {
				return
			}
		}
		out = append(out, &mutant{
			file: path, rel: rel, line: fset.Position(at).Line, col: fset.Position(a).Column,
			fnLine0: fnLine0, fnLine1: fnLine1,
			start: off(a), end: off(b), repl: repl, desc: desc,
			fn: fn, text: lineText(at),
			ukind: ukind, fnStart: fnStart, fnEnd: fnEnd,
		})
		if unit != nil {
			out[len(out)-1].ustart, out[len(out)-1].uend = off(unit.Pos()), off(unit.End())
		}
	}
	op := func(at token.Pos, from token.Token, to ...token.Token) {
		for _, t := range to {
			add(at, at, at+token.Pos(len(from.String())), t.String(), from.String()+" -> "+t.String())
		}
	}
	// resultsError reports whether the innermost function on the stack
	// has error as its last result, and how many results it has.
	resultsError := func() (bool, int) {
		for i := len(stack) - 1; i >= 0; i-- {
			var ft *ast.FuncType
			switch n := stack[i].(type) {
			case *ast.FuncDecl:
				ft = n.Type
			case *ast.FuncLit:
				ft = n.Type
			default:
				continue
			}
			if ft.Results == nil || len(ft.Results.List) == 0 {
				return false, 0
			}
			id, ok := ft.Results.List[len(ft.Results.List)-1].Type.(*ast.Ident)
			return ok && id.Name == "error", ft.Results.NumFields()
		}
		return false, 0
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue // constants and variables: their mutants are mostly equivalent or do not compile
		}
		fn = funcName(fd)
		fnLine0, fnLine1 = fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		fnStart, fnEnd = off(fd.Pos()), off(fd.End())
		ast.Inspect(fd, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			switch n := n.(type) {
			case *ast.BinaryExpr:
				ukind, unit = exprKind, n
				switch n.Op {
				case token.LSS:
					op(n.OpPos, n.Op, token.GEQ, token.LEQ)
				case token.LEQ:
					op(n.OpPos, n.Op, token.GTR, token.LSS)
				case token.GTR:
					op(n.OpPos, n.Op, token.LEQ, token.GEQ)
				case token.GEQ:
					op(n.OpPos, n.Op, token.LSS, token.GTR)
				case token.EQL:
					op(n.OpPos, n.Op, token.NEQ)
				case token.NEQ:
					op(n.OpPos, n.Op, token.EQL)
				case token.LAND:
					op(n.OpPos, n.Op, token.LOR)
				case token.LOR:
					op(n.OpPos, n.Op, token.LAND)
				case token.ADD:
					if !isString(n.X) && !isString(n.Y) {
						op(n.OpPos, n.Op, token.SUB)
					}
				case token.SUB:
					op(n.OpPos, n.Op, token.ADD)
				}
			case *ast.UnaryExpr:
				ukind, unit = exprKind, n
				if n.Op == token.NOT {
					add(n.OpPos, n.OpPos, n.OpPos+1, "", "remove !")
				}
			case *ast.BasicLit:
				ukind, unit = exprKind, n
				if n.Kind == token.INT {
					switch n.Value {
					case "0":
						add(n.Pos(), n.Pos(), n.End(), "1", "0 -> 1")
					case "1":
						add(n.Pos(), n.Pos(), n.End(), "0", "1 -> 0")
					}
				}
			case *ast.Ident:
				ukind, unit = exprKind, n
				switch n.Name {
				case "true":
					add(n.Pos(), n.Pos(), n.End(), "false", "true -> false")
				case "false":
					add(n.Pos(), n.Pos(), n.End(), "true", "false -> true")
				}
			case *ast.AssignStmt:
				stmtUnit(n)
				switch n.Tok {
				case token.ADD_ASSIGN:
					op(n.TokPos, n.Tok, token.SUB_ASSIGN)
				case token.SUB_ASSIGN:
					op(n.TokPos, n.Tok, token.ADD_ASSIGN)
				}
				if n.Tok == token.DEFINE || allBlank(n.Lhs) {
					break
				}
				// Remove the store, keep the right-hand side's effects.
				lhs := len(n.Lhs)
				if n.Tok != token.ASSIGN {
					lhs = 1
				}
				var rhs []string
				for _, e := range n.Rhs {
					rhs = append(rhs, text(e))
				}
				repl := strings.TrimSuffix(strings.Repeat("_, ", lhs), ", ") + " = " + strings.Join(rhs, ", ")
				add(n.Pos(), n.Pos(), n.End(), repl, "remove assignment")
			case *ast.IncDecStmt:
				stmtUnit(n)
				if n.Tok == token.INC {
					op(n.TokPos, n.Tok, token.DEC)
				} else {
					op(n.TokPos, n.Tok, token.INC)
				}
				add(n.Pos(), n.Pos(), n.End(), blank(n.Pos(), n.End()), "remove "+n.Tok.String())
			case *ast.ExprStmt:
				stmtUnit(n)
				if _, ok := n.X.(*ast.CallExpr); ok {
					add(n.Pos(), n.Pos(), n.End(), blank(n.Pos(), n.End()), "remove call")
				}
			case *ast.DeferStmt:
				stmtUnit(n)
				add(n.Pos(), n.Pos(), n.End(), blank(n.Pos(), n.End()), "remove defer")
			case *ast.ReturnStmt:
				stmtUnit(n)
				isErr, nres := resultsError()
				if !isErr || len(n.Results) != nres {
					break // a bare return, or return f() of a multi-value f
				}
				last := n.Results[len(n.Results)-1]
				if id, ok := last.(*ast.Ident); !ok || id.Name != "nil" {
					add(last.Pos(), last.Pos(), last.End(), "nil"+blank(last.Pos(), last.End()), "return nil error")
				}
			}
			return true
		})
	}
	// Mutants alike in key (the same change to lines of the same text in
	// one function) are told apart by their order in the file: "(#2 alike)".
	nth := map[string]int{}
	for _, m := range out {
		k := m.key()
		nth[k]++
		if nth[k] > 1 {
			m.desc += fmt.Sprintf(" (#%d alike)", nth[k])
		}
	}
	return out, nil
}

func allBlank(l []ast.Expr) bool {
	for _, e := range l {
		if id, ok := e.(*ast.Ident); !ok || id.Name != "_" {
			return false
		}
	}
	return true
}

func isString(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING || e.Kind == token.CHAR
	case *ast.BinaryExpr:
		return isString(e.X) || isString(e.Y)
	case *ast.ParenExpr:
		return isString(e.X)
	}
	return false
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	if star != "" {
		return "(*" + name + ")." + fd.Name.Name
	}
	return name + "." + fd.Name.Name
}
