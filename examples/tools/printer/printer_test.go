package printer_test

import (
	"flag"
	"fmt"
	"github.com/gompt/gompt/examples/tools/internal/exampletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Normalize makes a run's event lines comparable across runs: addresses,
// code pointers and ids become names in order of first appearance, so the
// golden file still shows which events share them.
func Normalize(lines []string) []string {
	names := map[string]map[string]string{}
	rename := func(class, v string) string {
		if v == "0x0" || v == "0" {
			return v
		}
		m := names[class]
		if m == nil {
			m = map[string]string{}
			names[class] = m
		}
		if n, ok := m[v]; ok {
			return n
		}
		n := fmt.Sprintf("%s%d", class, len(m)+1)
		m[v] = n
		return n
	}
	idRe := regexp.MustCompile(`\b(target_id|host_op_id|module)=(\d+)`)
	codeRe := regexp.MustCompile(`\bcode=(0x[0-9a-f]+)`)
	hexRe := regexp.MustCompile(`0x[0-9a-f]+`)
	var out []string
	for _, l := range lines {
		l = idRe.ReplaceAllStringFunc(l, func(s string) string {
			m := idRe.FindStringSubmatch(s)
			class := map[string]string{"target_id": "T", "host_op_id": "O", "module": "M"}[m[1]]
			return m[1] + "=" + rename(class, m[2])
		})
		l = codeRe.ReplaceAllStringFunc(l, func(s string) string { return "code=" + rename("C", s[5:]) })
		l = hexRe.ReplaceAllStringFunc(l, func(s string) string { return rename("A", s) })
		out = append(out, l)
	}
	return out
}

// eventLines returns the lines a tool printed.
func eventLines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "ompt ") {
			ls = append(ls, l)
		}
	}
	return ls
}

// CheckPairing checks the rules of OMPT-CONFORMANCE.md that a line sequence
// shows: target begin/end pairs with the same kind, device, id and code
// pointer, every data op and submit inside a construct carrying its id and
// code pointer, ops outside constructs with target_id 0, host_op_ids fresh,
// device_initialize before any event on its device, device_finalize last.
func CheckPairing(t errorer, lines []string) {
	t.Helper()
	var open map[string]string
	seenOp := map[string]bool{}
	inited := map[string]bool{}
	finalized := map[string]bool{}
	for i, l := range lines {
		f := exampletest.Fields(l)
		ev := strings.Fields(l)[1]
		if d, ok := f["dev"]; ok && ev != "device_initialize" && ev != "target_map" {
			assert.True(t, inited[d], "line %d: event on device %s before its device_initialize: %s", i+1, d, l)
			assert.False(t, finalized[d], "line %d: event on device %s after its device_finalize: %s", i+1, d, l)
		}
		switch ev {
		case "device_initialize":
			assert.False(t, inited[f["dev"]], "line %d: device %s initialized twice", i+1, f["dev"])
			inited[f["dev"]] = true
		case "device_finalize":
			finalized[f["dev"]] = true
		case "target":
			assert.NotEqual(t, "0x0", f["code"], "line %d: no code pointer: %s", i+1, l)
			assert.NotEmpty(t, f["code"], "line %d: no code pointer: %s", i+1, l)
			if strings.Fields(l)[2] == "begin" {
				assert.Nil(t, open, "line %d: construct begins inside another: %s", i+1, l)
				open = f
				continue
			}
			if !assert.NotNil(t, open, "line %d: end without begin: %s", i+1, l) {
				continue
			}
			for _, k := range []string{"kind", "dev", "target_id", "code"} {
				assert.Equal(t, f[k], open[k], "line %d: end has %s=%s, begin had", i+1, k, f[k])
			}
			open = nil
		case "target_data_op", "target_submit", "target_map":
			want, code := "0", ""
			if open != nil {
				want, code = open["target_id"], open["code"]
			}
			assert.Equal(t, want, f["target_id"], "line %d: target_id: %s", i+1, l)
			assert.False(t, code != "" && f["code"] != "" && f["code"] != code, "line %d: code=%s, construct's is %s", i+1, f["code"], code)
			if op := f["host_op_id"]; op != "" {
				assert.False(t, seenOp[op], "line %d: host_op_id %s reused", i+1, op)
				seenOp[op] = true
			}
		}
	}
	assert.Nil(t, open, "construct never ended")
}

// TestVeccopyGolden runs examples/veccopy under the printer on the host
// device and compares the exact ordered event sequence with the golden file.
func TestVeccopyGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an example")
	}
	bin := exampletest.Build(t, "veccopy", "ompt_printer")
	cmd := exec.Command(bin, "-device", "0")
	cmd.Env = append(os.Environ(), "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=1", "OMP_TOOL=enabled", "OMP_TOOL_LIBRARIES=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "veccopy: %v\n%s", err, out)
	lines := eventLines(string(out))
	CheckPairing(t, lines)
	got := strings.Join(Normalize(lines), "\n") + "\n"
	exampletest.Golden(t, filepath.Join("testdata", "veccopy.golden"), got, *update)
}

func TestCheckPairingCatchesFaults(t *testing.T) {
	good := []string{
		`ompt device_initialize dev=0 type="host x"`,
		"ompt target begin kind=target dev=0 target_id=2 code=0x10",
		"ompt target_data_op target_id=2 host_op_id=3 op=alloc src=0x1/-1 dest=0x2/0 bytes=4 code=0x10",
		"ompt target end kind=target dev=0 target_id=2 code=0x10",
	}
	bad := [][]string{
		{good[0], good[1], good[2]}, // no end
		{good[0], good[1], "ompt target_data_op target_id=9 host_op_id=3 op=alloc src=0x1/-1 dest=0x2/0 bytes=4 code=0x10", good[3]},
		{good[1], good[2], good[3]}, // no device_initialize
		{good[0], good[1], "ompt target end kind=update dev=0 target_id=2 code=0x10"},
	}
	for i, b := range bad {
		rec := &recorder{}
		CheckPairing(rec, b)
		assert.NotZero(t, rec.n, "bad sequence %d passed CheckPairing", i)
	}
	rec := &recorder{}
	CheckPairing(rec, good)
	assert.Zero(t, rec.n, "good sequence failed CheckPairing %d times", rec.n)
}

// errorer is the part of testing.T that CheckPairing uses.
type errorer interface {
	Helper()
	Errorf(format string, args ...any)
}

type recorder struct{ n int }

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.n++ }
