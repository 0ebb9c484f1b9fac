package printer_test

import (
	"github.com/gompt/gompt/examples/tools/internal/exampletest"
	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// examples and the arguments that keep them small.
var examples = map[string][]string{
	"veccopy": nil,
	"saxpy":   {"-n", "10000"},
	"matmul":  {"-n", "16"},
	"jacobi":  {"-nx", "32", "-ny", "24", "-iters", "4", "-k", "2"},
}

var (
	hexRe  = regexp.MustCompile(`0x[0-9a-f]+`)
	codeRe = regexp.MustCompile(`\bcode=0x[0-9a-f]+`)
)

// events returns the tool's event lines, without the lines only one face
// prints (initialize, finalize, errors of the C tool's own checks).
func events(t *testing.T, out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "ompt ") || strings.HasPrefix(l, "ompt initialize") || l == "ompt finalize" {
			continue
		}
		if !assert.False(t, strings.HasPrefix(l, "ompt error"), "the C tool reported: %s", l) {
			continue
		}
		ls = append(ls, l)
	}
	return ls
}

// TestEveryExampleBothFaces runs every example under the C example tool
// (ctool.c, attached with OMP_TOOL_LIBRARIES) and under the Go printer
// (linked with -tags ompt_printer), and checks that both faces of the tools
// interface report the same events with the same ids, in the same order,
// and that each data op and kernel of the C tool has its trace record.
func TestEveryExampleBothFaces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every example twice")
	}
	if !ctoolbuild.Loadable {
		require.Empty(t, os.Getenv("CI"), "CI is set but C tools need cgo")
		t.Skip("C tools need cgo")
	}
	dir := t.TempDir()
	lib, err := ctoolbuild.BuildExampleTool(dir)
	if err != nil {
		require.Empty(t, os.Getenv("CI"), "CI is set and the example tool does not build: %v", err)
		t.Skip(err)
	}
	for name, args := range examples {
		t.Run(name, func(t *testing.T) {
			plain, printer := exampletest.Build(t, name), exampletest.Build(t, name, "ompt_printer")
			env := append(os.Environ(), "GOMPT_PLUGINS=host", "OMP_TOOL=enabled")
			// The Go printer.
			cmd := exec.Command(printer, append([]string{"-device", "0"}, args...)...)
			cmd.Env = env
			gout, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s under the Go printer: %v\n%s", name, err, gout)
			// The C tool, in a program built without any Go tool.
			outFile := filepath.Join(dir, name+".ctool")
			cmd = exec.Command(plain, append([]string{"-device", "0"}, args...)...)
			cmd.Env = append(env, "OMP_TOOL_LIBRARIES="+lib, "CTOOL_OUTPUT="+outFile, "CTOOL_TRACE=1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s under the C tool: %v\n%s", name, err, out)
			cb, err := os.ReadFile(outFile)
			require.NoError(t, err)
			var cEvents, records []string
			for _, l := range events(t, string(cb)) {
				if strings.HasPrefix(l, "ompt record ") {
					records = append(records, l)
				} else {
					cEvents = append(cEvents, l)
				}
			}
			goEvents := events(t, string(gout))
			require.GreaterOrEqual(t, len(goEvents), 8, "the Go printer printed only %d events:\n%s", len(goEvents), gout)
			// Host addresses differ between two processes; ids, kinds,
			// devices, sizes and order must not.
			norm := func(ls []string) string {
				out := make([]string, len(ls))
				for i, l := range ls {
					l = codeRe.ReplaceAllString(l, "code=C")
					out[i] = hexRe.ReplaceAllString(l, "A")
				}
				return strings.Join(out, "\n")
			}
			g, c := norm(goEvents), norm(cEvents)
			assert.Equal(t, c, g, "the faces differ (expected: the C tool, actual: the Go printer)")
			// Every data op and kernel of the C tool's callbacks has its
			// trace record with the same ids.
			ids := map[string]bool{}
			for _, l := range records {
				if m := regexp.MustCompile(`target_id=\d+ host_op_id=\d+`).FindString(l); m != "" {
					ids[m] = true
				}
				assert.Contains(t, l, "time_ok=1", "record with bad times")
			}
			for _, l := range cEvents {
				if strings.HasPrefix(l, "ompt target_data_op ") || strings.HasPrefix(l, "ompt target_submit ") {
					m := regexp.MustCompile(`target_id=\d+ host_op_id=\d+`).FindString(l)
					if strings.HasPrefix(m, "target_id=0 ") {
						continue // device memory routines: recorded on the device, checked in target/internal/cabi
					}
					assert.True(t, ids[m], "no trace record for %s", l)
				}
			}
		})
	}
}
