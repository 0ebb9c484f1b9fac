package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// reportDir is where tests write the figures ci/reliability.sh puts in
// docs/reliability.md; empty: no figures are written.
var reportDir = os.Getenv("GOMPT_RELIABILITY_OUT")

func addrOf[T any](s []T) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(s))) }

// writeReport writes one fragment of the report.
func writeReport(t *testing.T, name, text string) {
	t.Helper()
	if reportDir == "" {
		return
	}
	assert.NoError(t, os.WriteFile(filepath.Join(reportDir, name), []byte(text), 0o644), "report")
}

func writeFaultReport(t *testing.T, rows []faultRow) {
	var b strings.Builder
	fmt.Fprintf(&b, "| construct | failing call | outcome |\n| --- | --- | --- |\n")
	bad := 0
	for _, r := range rows {
		out := "error returned; table and device memory as before; next construct correct"
		if strings.HasPrefix(r.err, "none:") {
			out = "absorbed: the free was retried and the construct worked; next construct correct"
		}
		if r.problem != "" {
			out = "**" + r.problem + "**"
			bad++
		}
		fmt.Fprintf(&b, "| %s | %v #%d | %s |\n", r.construct, r.op, r.n, strings.ReplaceAll(out, "|", "\\|"))
	}
	fmt.Fprintf(&b, "\n%d faults injected, %d left the runtime in a state other than before the construct.\n", len(rows), bad)
	writeReport(t, "faults.md", b.String())
	t.Logf("%d faults injected, %d with problems", len(rows), bad)
}

// classRow is one line of a classes file: how many checks of one class of
// construct or input ran on one device, and how many failed.
type classRow struct {
	class, device string
	runs, failed  int64
}

// writeClasses writes name.classes for ci/reliability.sh, which gathers
// every such file into the report's table of checks by class. The format,
// for any test that wants a row there: one line per class and device,
// four tab-separated fields: class, device, checks run, checks failed.
func writeClasses(t *testing.T, name string, rows []classRow) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%s\t%d\t%d\n", r.class, r.device, r.runs, r.failed)
	}
	writeReport(t, name+".classes", b.String())
}
