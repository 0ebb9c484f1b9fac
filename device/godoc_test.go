package device

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoDocListsKinds checks that `go doc` on ParamKind and ImageKind shows
// every constant of the type, not "const ParamBuffer ParamKind = iota + 1
// ...", which is what it shows for a grouped declaration.
func TestGoDocListsKinds(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	for typ, names := range map[string][]string{
		"ParamKind": {"ParamBuffer", "ParamInt32", "ParamUint32", "ParamInt64", "ParamFloat32", "ParamFloat64"},
		"ImageKind": {"ImageHost"},
	} {
		out, err := exec.Command(goCmd, "doc", ".", typ).CombinedOutput()
		require.NoError(t, err, "go doc . %s: %v\n%s", typ, err, out)
		for _, n := range names {
			assert.Contains(t, string(out), "const "+n+" "+typ+" = ", "go doc . %s does not show constant %s:\n%s", typ, n, out)
		}
		assert.False(t, strings.Contains(string(out), "..."), "go doc . %s elides a constant group:\n%s", typ, out)
	}
}
