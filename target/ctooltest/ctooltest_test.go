// Package ctooltest runs Go programs under a C OMPT tool of its own
// (testdata/emicheck.c, compiled by the test against omp-tools.h), the
// way tools written for LLVM's runtime attach: an EMI tool that
// dereferences every slot, writes its own ids and joins every trace
// record to its callbacks by them. The programs are veccopy and jacobi
// from examples/ and testdata/nowait (nowait constructs from several
// goroutines, associate, disassociate and overlapping copies), on the
// host device and on the first OpenCL device.
package ctooltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
	"github.com/gompt/gompt/target"
	"github.com/gompt/gompt/target/internal/cabi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// programs: the package to build and its arguments (small problems), and
// the least the tool must count on one device for each.
var programs = []struct {
	name, pkg string
	args      []string
	least     map[string]int
}{
	{"veccopy", "../../examples/veccopy", nil,
		map[string]int{"constructs": 6, "ops": 18, "submits": 1, "routine_ops": 3}},
	{"jacobi", "../../examples/jacobi", []string{"-nx", "32", "-ny", "24", "-iters", "4", "-k", "2"},
		map[string]int{"constructs": 6, "ops": 4, "submits": 4}},
	{"nowait", "./testdata/nowait", nil,
		map[string]int{"constructs": 16, "ops": 34, "submits": 4, "routine_ops": 6}},
}

// versions are the OpenMP versions of the tools interface the tool
// runs under: the default (5.2), GOMPT_OMPT_VERSION=6.0 and
// GOMPT_TOOL_PROFILE=llvm.
var versions = []struct{ name, version, profile string }{
	{"5.2", "", ""}, {"6.0", "6.0", ""}, {"llvm", "", "llvm"},
}

var summaryRe = regexp.MustCompile(`(?m)^emicheck summary (.*)$`)

func TestEMIToolJoinsRecordsToCallbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C tool and three programs")
	}
	if !cabi.Available {
		require.Empty(t, os.Getenv("CI"), "CI is set but C tools need cgo")
		t.Skip("C tools need cgo")
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libemicheck.so")
	if err := ctoolbuild.BuildTool(lib, filepath.Join("testdata", "emicheck.c")); err != nil {
		if os.Getenv("CI") != "" {
			require.NoError(t, err, "CI is set")
		}
		t.Skip(err)
	}
	devs := []int{0}
	if n := target.NumDevices(); n >= 2 {
		devs = append(devs, 1) // the host plugin gives device 0; OpenCL's first is 1
	} else if os.Getenv("CI") != "" {
		require.GreaterOrEqual(t, n, 2, "CI: no OpenCL device beside the host device")
	} else {
		t.Log("no OpenCL device: host only")
	}
	for _, p := range programs {
		bin := filepath.Join(dir, p.name)
		out, err := exec.Command("go", "build", "-o", bin, p.pkg).CombinedOutput()
		require.NoError(t, err, "go build %s:\n%s", p.pkg, out)
		for _, d := range devs {
			for _, m := range versions {
				t.Run(fmt.Sprintf("%s/device%d/%s", p.name, d, m.name), func(t *testing.T) {
					outFile := filepath.Join(dir, fmt.Sprintf("%s.%d.%s.txt", p.name, d, m.name))
					cmd := exec.Command(bin, append([]string{"-device", strconv.Itoa(d)}, p.args...)...)
					cmd.Env = append(os.Environ(), "GOMPT_PLUGINS=host,opencl", "GOMPT_HOST_DEVICES=1", "OMP_TOOL=enabled",
						"OMP_TOOL_LIBRARIES="+lib, "EMICHECK_OUTPUT="+outFile, "GOMPT_OMPT_VERSION="+m.version, "GOMPT_TOOL_PROFILE="+m.profile)
					if m.profile == "llvm" {
						cmd.Env = append(cmd.Env, "EMICHECK_MAP_NEVER=1")
					}
					out, err := cmd.CombinedOutput()
					require.NoError(t, err, "%s:\n%s", p.name, out)
					b, err := os.ReadFile(outFile)
					require.NoError(t, err)
					checkSummary(t, string(b), p.least)
				})
			}
		}
	}
}

// checkSummary fails t for every error line of the tool, and unless its
// summary shows every operation joined to exactly one record, no record
// left unjoined, and at least least of each count.
func checkSummary(t *testing.T, out string, least map[string]int) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		assert.False(t, strings.HasPrefix(l, "emicheck error: "), "%s", l)
	}
	m := summaryRe.FindStringSubmatch(out)
	require.NotNil(t, m, "no summary from the tool (its finalizer did not run?):\n%s", out)
	f := map[string]int{}
	for _, kv := range strings.Fields(m[1]) {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "summary field %q", kv)
		f[k] = n
	}
	t.Logf("%s", m[0])
	assert.Zero(t, f["errors"], "errors the tool found")
	assert.Zero(t, f["unjoined"], "records the tool could not join")
	assert.Equal(t, f["ops"]+f["submits"], f["joined"], "operations joined to their record, against operations")
	assert.Equal(t, f["ops"], f["op_records"], "data op records, one per op")
	assert.Equal(t, f["submits"], f["kernel_records"], "kernel records, one per submit")
	assert.Equal(t, 2*f["constructs"], f["target_records"], "target records, two per construct")
	for k, n := range least {
		assert.GreaterOrEqual(t, f[k], n, "%s", k)
	}
	assert.Equal(t, f["constructs"]+f["ops"]+f["submits"], f["ids_written"], "ids the tool wrote, one per construct and operation")
}
