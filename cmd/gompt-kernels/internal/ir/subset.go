package ir

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"
)

func StmtName(s ast.Stmt) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", s), "*ast."), "Stmt")) + " statement"
}

func ExprString(e ast.Expr) string { return types.ExprString(e) }
