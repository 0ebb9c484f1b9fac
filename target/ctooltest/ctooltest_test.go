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

	"github.com/gompt/gompt/internal/ctoolbuild"
	"github.com/gompt/gompt/ompt/cabi"
	"github.com/gompt/gompt/target"
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

var summaryRe = regexp.MustCompile(`(?m)^emicheck summary (.*)$`)

func TestEMIToolJoinsRecordsToCallbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C tool and three programs")
	}
	if !cabi.Available {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but C tools need cgo")
		}
		t.Skip("C tools need cgo")
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libemicheck.so")
	if err := ctoolbuild.BuildTool(lib, filepath.Join("testdata", "emicheck.c")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	devs := []int{0}
	if n := target.NumDevices(); n >= 2 {
		devs = append(devs, 1) // the host plugin gives device 0; OpenCL's first is 1
	} else if os.Getenv("CI") != "" {
		t.Fatalf("CI: no OpenCL device beside the host device (%d devices)", n)
	} else {
		t.Log("no OpenCL device: host only")
	}
	for _, p := range programs {
		bin := filepath.Join(dir, p.name)
		if out, err := exec.Command("go", "build", "-o", bin, p.pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", p.pkg, err, out)
		}
		for _, d := range devs {
			t.Run(fmt.Sprintf("%s/device%d", p.name, d), func(t *testing.T) {
				outFile := filepath.Join(dir, fmt.Sprintf("%s.%d.txt", p.name, d))
				cmd := exec.Command(bin, append([]string{"-device", strconv.Itoa(d)}, p.args...)...)
				cmd.Env = append(os.Environ(), "GOMPT_PLUGINS=host,opencl", "GOMPT_HOST_DEVICES=1", "OMP_TOOL=enabled",
					"OMP_TOOL_LIBRARIES="+lib, "EMICHECK_OUTPUT="+outFile)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", p.name, err, out)
				}
				b, err := os.ReadFile(outFile)
				if err != nil {
					t.Fatal(err)
				}
				checkSummary(t, string(b), p.least)
			})
		}
	}
}

// checkSummary fails t for every error line of the tool, and unless its
// summary shows every operation joined to exactly one record, no record
// left unjoined, and at least least of each count.
func checkSummary(t *testing.T, out string, least map[string]int) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "emicheck error: ") {
			t.Error(l)
		}
	}
	m := summaryRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary from the tool (its finalizer did not run?):\n%s", out)
	}
	f := map[string]int{}
	for _, kv := range strings.Fields(m[1]) {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("summary field %q", kv)
		}
		f[k] = n
	}
	t.Logf("%s", m[0])
	if f["errors"] != 0 || f["unjoined"] != 0 {
		t.Errorf("the tool found %d errors and %d records it could not join", f["errors"], f["unjoined"])
	}
	if f["joined"] != f["ops"]+f["submits"] {
		t.Errorf("%d of %d operations joined to their record", f["joined"], f["ops"]+f["submits"])
	}
	if f["op_records"] != f["ops"] || f["kernel_records"] != f["submits"] || f["target_records"] != 2*f["constructs"] {
		t.Errorf("records: %d data op, %d kernel, %d target; want one per op (%d), per submit (%d), two per construct (%d)",
			f["op_records"], f["kernel_records"], f["target_records"], f["ops"], f["submits"], f["constructs"])
	}
	for k, n := range least {
		if f[k] < n {
			t.Errorf("%s = %d, want at least %d", k, f[k], n)
		}
	}
	if want := f["constructs"] + f["ops"] + f["submits"]; f["ids_written"] != want {
		t.Errorf("the tool wrote %d ids, want one per construct and operation (%d)", f["ids_written"], want)
	}
}
