package load

import (
	"fmt"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// LaunchPackage finds the package of -launchers dir (relative to the
// kernels' package): its import path, and its name (that of its Go files,
// or the folder's).
func LaunchPackage(g *ir.Program, dir string) error {
	if filepath.IsAbs(dir) {
		return fmt.Errorf("-launchers %s: want a folder relative to the package's", dir)
	}
	g.LaunchDir = filepath.Join(g.P.Dir, dir)
	g.LaunchPath = path.Join(g.P.Path, filepath.ToSlash(dir))
	if g.LaunchPath == g.P.Path {
		return fmt.Errorf("-launchers %s is the package itself", dir)
	}
	g.LaunchName = path.Base(g.LaunchPath)
	entries, _ := os.ReadDir(g.LaunchDir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(g.LaunchDir, e.Name()), nil, parser.PackageClauseOnly)
		if err == nil {
			g.LaunchName = f.Name.Name
			break
		}
	}
	if !token.IsIdentifier(g.LaunchName) {
		return fmt.Errorf("-launchers %s: %q is not a package name; add a Go file declaring the package there", dir, g.LaunchName)
	}
	return nil
}
