package main

import (
	"fmt"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/check"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// usageRefusals maps each construct the checker refuses (the construct
// argument of an unsupported call in the generator's source, its string
// constants with … for the rest; or FUNC:EXPR where it is not led by a
// constant) to what -h says of it. An empty list is a refusal of
// something go/types does not let through (a BadStmt) or a wrapper.
var usageRefusals = map[string][]string{
	// The signature (load/directive.go).
	"a method (…)":                           {"methods"},
	"a generic function (…)":                 {"generic functions"},
	"a function without a body (…)":          {"functions without a body"},
	"a variadic parameter":                   {"variadic parameters"},
	"parameter … of type …":                  {"parameters and results of other types"},
	"parameter … of type []bool":             {"[]bool"},
	"a result of type …":                     {"parameters and results of other types"},
	"a named result":                         {"named results"},
	"more than one result (…)":               {"more than one result"},
	"a recursive call of … (…)":              {"recursion"},
	"atomic.…":                               {"other sync/atomic functions"},
	"atomic.… of …":                          {"&buf[i]"},
	"kernelrt.Barrier outside a team kernel": {"kernelrt.Barrier outside a team kernel"},
	"kernelrt.Barrier with arguments":        {"kernelrt.Barrier outside a team kernel's body or with arguments"},
	// Statements (check/stmt.go).
	"an expression statement":    {"an expression statement that is not a call"},
	"a call of … as a statement": {"a call whose value is unused"},
	"a … declaration":            {"type declarations"},
	"stmt:what":                  {"range over anything but an int, a slice or a team array"},
	"goto":                       {"goto"},
	"fallthrough":                {"fallthrough"},
	"a label on a …":             {"labels on anything but loops and switches"},
	"a go statement (goroutine)": {"goroutines"},
	"defer":                      {"defer"},
	"select":                     {"select"},
	"a channel send":             {"channels (send, receive, select)"},
	"a type switch":              {"type switches"},
	"stmt:ir.StmtName(s)":        nil, // a BadStmt
	"local:what":                 {"local slice variables but views", "locals of other types"},
	"an assignment of several values from one expression": {"an assignment of several values from one call"},
	"assigning to slice parameter …":                      {"assigning to a slice parameter"},
	"assigning to view …":                                 {"assigning to a slice parameter or a view"},
	"package-level variable …":                            {"package-level variables"},
	"assigning to …":                                      {"assigning to anything but locals and elements"},
	// Expressions.
	"a map":                        {"maps (map literals, indexing)"},
	"a generic function":           {"generic functions"},
	"a string":                     {"strings"},
	"indexing …":                   {"indexing anything but a slice parameter, a view or a team array"},
	"a complex number":             {"complex numbers"},
	"a constant of type …":         {"constants of other types"},
	"a value of type … (…)":        {"values of other types"},
	"slice … used as a value":      {"using one as a value"},
	"view … used as a value":       {"using one as a value"},
	"nil":                          {"nil"},
	"function … used as a value":   {"function values"},
	"taking an address (&)":        {"& only in an atomic's &buf[i]"},
	"a channel receive":            {"channels (send, receive, select)"},
	"a method value (…)":           {"method values"},
	"a field selector (…)":         {"field selectors"},
	"a pointer dereference":        {"dereference"},
	"a closure (function literal)": {"closures"},
	"a slice expression (…) outside a view's declaration or a range": {"a slice expression outside a view's declaration or a range"},
	"sliceExpr:what": {"or of anything but a slice parameter or a view"},
	"a range over team array … with a value while the loop writes …": {"a range over a team array with a value while the loop writes it"},
	"a type assertion":       {"type assertions"},
	"a key-value expression": {"composite literals"},
	`node:fmt.Sprintf("expression %s", ir.ExprString(e))`: nil, // a BadExpr
	"a map literal (…)":                  {"map literals"},
	"a slice literal (…, an allocation)": {"composite literals"},
	"an array literal (…)":               {"composite literals"},
	"a struct literal (…)":               {"composite literals"},
	"a composite literal (…)":            {"composite literals"},
	// Calls.
	"a conversion to …":          {"conversions to other types"},
	"len of …":                   {"len of anything but a slice parameter or a view"},
	"call:name":                  {"the other built-ins"}, // and each of builtinHints, below
	"a call of ….…":              {"functions of other packages"},
	"math.…":                     {"the other math functions"},
	"a method call (…)":          {"method calls"},
	"a call of …":                {"calls of function values"},
	"a call of function value …": {"calls of function values"},
	"a call of kernel …":         {"of kernels"},
	"a call of …, which is not marked //gompt:func": {"functions that are not //gompt:func"},
	"passing … as a slice":                          {"a helper's slice argument that is not a slice parameter or a view"},
	// The wrapper.
	"unsupported:construct": nil,
}

// refusals finds the construct argument of every unsupported call in the
// generator's source.
func refusals(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("internal", "*", "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	found := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || strings.Contains(name, "corpus") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 3 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "unsupported" && sel.Sel.Name != "Unsupported" {
					return true
				}
				found[constructKey(fd.Name.Name, call.Args[1])] = fset.Position(call.Pos()).String()
				return true
			})
		}
	}
	return found
}

// constructKey is a construct argument's string constants, … for the
// rest; FUNC:EXPR when it does not start with a constant.
func constructKey(fn string, e ast.Expr) string {
	var parts []ast.Expr
	var flatten func(e ast.Expr)
	flatten = func(e ast.Expr) {
		if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		parts = append(parts, e)
	}
	flatten(e)
	if lit, ok := parts[0].(*ast.BasicLit); !ok || lit.Kind != token.STRING {
		return fn + ":" + ir.ExprString(e)
	}
	var sb strings.Builder
	for _, p := range parts {
		if lit, ok := p.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			sb.WriteString(s)
		} else if !strings.HasSuffix(sb.String(), "…") {
			sb.WriteString("…")
		}
	}
	return sb.String()
}

// -h lists everything the checker refuses: every construct an
// unsupported call in the generator's source names has an entry in
// usageRefusals, whose words -h says; every built-in the checker refuses
// is named. A new refusal fails this test until -h and the table list it.
func TestUsageListsEveryRefusal(t *testing.T) {
	exact, approx := ir.MathNames()
	text := strings.Join(strings.Fields(fmt.Sprintf(usage, join(exact), join(approx))), " ")
	found := refusals(t)
	require.NotEmpty(t, found)
	for key, pos := range found {
		words, ok := usageRefusals[key]
		if !assert.True(t, ok, "%s refuses %q, which usageRefusals does not map to what -h says of it", pos, key) {
			continue
		}
		for _, w := range words {
			assert.Contains(t, text, w, "-h does not say %q, for %q (%s)", w, key, pos)
		}
	}
	for key := range usageRefusals {
		_, ok := found[key]
		assert.True(t, ok, "usageRefusals has %q, which the checker no longer refuses", key)
	}
	for name := range check.BuiltinHints {
		assert.Contains(t, text, name, "-h does not name built-in %s among those refused", name)
	}
}
