package ir

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"
)

// StmtName names a statement's kind for a message ("for statement").
func StmtName(s ast.Stmt) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", s), "*ast."), "Stmt")) + " statement"
}

// ExprString is e as Go source.
func ExprString(e ast.Expr) string { return types.ExprString(e) }
