package tracer_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gompt/gompt/examples/tools/internal/exampletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var idRe = regexp.MustCompile(`\b(target_id|host_op_id)=(\d+)`)

// split returns the tool's callback lines ("ompt cb ...") and its other
// lines (records, buffer completions, device and tool events), each in
// the order printed. The two interleave differently from run to run;
// each keeps its own order.
func split(out string) (cbs, rest []string) {
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "ompt cb "):
			cbs = append(cbs, l)
		case strings.HasPrefix(l, "ompt "):
			rest = append(rest, l)
		}
	}
	return cbs, rest
}

// normalize renames ids in order of first appearance, callbacks first,
// so the golden file shows that records carry their callbacks' ids.
func normalize(cbs, rest []string) []string {
	names := map[string]string{}
	n := map[string]int{}
	rename := func(l string) string {
		return idRe.ReplaceAllStringFunc(l, func(s string) string {
			m := idRe.FindStringSubmatch(s)
			if m[2] == "0" {
				return s
			}
			class := map[string]string{"target_id": "T", "host_op_id": "O"}[m[1]]
			k := class + m[2]
			if _, ok := names[k]; !ok {
				n[class]++
				names[k] = fmt.Sprintf("%s%d", class, n[class])
			}
			return m[1] + "=" + names[k]
		})
	}
	var out []string
	out = append(out, "# callbacks")
	for _, l := range cbs {
		out = append(out, rename(l))
	}
	out = append(out, "# records and other events")
	for _, l := range rest {
		out = append(out, rename(l))
	}
	return out
}

// join checks that every record carries the ids and arguments of the
// callbacks of its operation, that every traced operation has its record,
// and that the buffers hold exactly the records printed.
func join(t errorer, cbs, rest []string, traced string) {
	t.Helper()
	ops := map[string]map[string]string{}     // host_op_id: data op or submit callback
	targets := map[string]map[string]string{} // target_id/endpoint: target callback
	for _, l := range cbs {
		f := exampletest.Fields(l)
		switch strings.Fields(l)[2] {
		case "target":
			targets[f["target_id"]+"/"+strings.Fields(l)[3]] = f
		case "target_data_op", "target_submit":
			ops[f["host_op_id"]] = f
		}
	}
	recorded := map[string]bool{}
	records, entries, lastOp := 0, 0, ""
	for _, l := range rest {
		f := exampletest.Fields(l)
		w := strings.Fields(l)
		if w[1] == "buffer_complete" {
			var n int
			fmt.Sscan(f["entries"], &n)
			entries += n
			continue
		}
		if w[1] != "record" {
			continue
		}
		records++
		assert.Equal(t, "ok", f["times"], "record with bad times: %s", l)
		switch w[2] {
		case "target":
			cb := targets[f["target_id"]+"/"+f["endpoint"]]
			if assert.NotNil(t, cb, "target record %s has no target callback", l) {
				assert.Equal(t, cb["kind"], f["kind"], "target record %s: kind differs from its callback's (%v)", l, cb)
				assert.Equal(t, cb["dev"], f["dev"], "target record %s: dev differs from its callback's (%v)", l, cb)
			}
			recorded[f["target_id"]+"/"+f["endpoint"]] = true
		case "target_data_op", "target_kernel":
			lastOp = f["host_op_id"]
			cb := ops[f["host_op_id"]]
			if !assert.NotNil(t, cb, "record %s: no callback with its host_op_id", l) {
				continue
			}
			keys := []string{"target_id"}
			if w[2] == "target_data_op" {
				keys = append(keys, "op", "src_dev", "dest_dev", "bytes")
			} else {
				assert.Equal(t, cb["teams"], f["requested_teams"], "record %s: requested_teams against the submit callback's teams", l)
			}
			for _, k := range keys {
				assert.Equal(t, cb[k], f[k], "record %s: %s against its callback's", l, k)
			}
			recorded[f["host_op_id"]] = true
		case "native":
			assert.Equal(t, lastOp, f["host_op_id"], "native record %s does not follow the record of its operation", l)
		default:
			assert.Fail(t, "unexpected record", l)
		}
	}
	assert.NotZero(t, records, "records printed")
	assert.Equal(t, entries, records, "records printed against the entries of completed buffers")
	for id, cb := range ops {
		if cb["src_dev"] == traced || cb["dest_dev"] == traced || cb["teams"] != "" {
			assert.True(t, recorded[id], "operation host_op_id=%s on device %s has no record: %v", id, traced, cb)
		}
	}
	for k := range targets {
		assert.True(t, recorded[k], "target callback %s has no record", k)
	}
}

// TestVeccopyGolden runs examples/veccopy under the tracer on host
// device 0 and compares the records (and the callbacks) with the golden
// file, and joins records with callbacks.
func TestVeccopyGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an example")
	}
	bin := exampletest.Build(t, "veccopy", "ompt_tracer")
	cmd := exec.Command(bin, "-device", "0")
	cmd.Env = append(os.Environ(), "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=1", "OMP_TOOL=enabled",
		"OMP_TOOL_LIBRARIES=", "GOMPT_TRACE=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "veccopy:\n%s", out)
	cbs, rest := split(string(out))
	join(t, cbs, rest, "0")
	got := strings.Join(normalize(cbs, rest), "\n") + "\n"
	exampletest.Golden(t, filepath.Join("testdata", "veccopy.golden"), got, *update)
}

func TestJoinCatchesFaults(t *testing.T) {
	cbs := []string{
		"ompt cb target begin kind=target dev=0 target_id=2",
		"ompt cb target_data_op target_id=2 host_op_id=3 op=to_device src_dev=-1 dest_dev=0 bytes=4000",
		"ompt cb target_submit target_id=2 host_op_id=4 teams=0",
		"ompt cb target end kind=target dev=0 target_id=2",
	}
	good := []string{
		"ompt record target endpoint=begin kind=target dev=0 target_id=2 times=ok",
		"ompt record target_data_op target_id=2 host_op_id=3 op=to_device src_dev=-1 dest_dev=0 bytes=4000 times=ok",
		`ompt record native host_op_id=3 class=event type="host copy in" hwid=2 times=ok`,
		"ompt record target_kernel target_id=2 host_op_id=4 requested_teams=0 granted_teams=1 times=ok",
		"ompt record target endpoint=end kind=target dev=0 target_id=2 times=ok",
		"ompt buffer_complete dev=0 entries=5 owned=1",
	}
	rec := &recorder{}
	join(rec, cbs, good, "0")
	require.Zero(t, rec.n, "checks the good sequence fails")
	with := func(i int, l string) []string {
		r := append([]string(nil), good...)
		r[i] = l
		return r
	}
	bad := map[string][]string{
		"wrong target_id": with(1, "ompt record target_data_op target_id=9 host_op_id=3 op=to_device src_dev=-1 dest_dev=0 bytes=4000 times=ok"),
		"wrong bytes":     with(1, "ompt record target_data_op target_id=2 host_op_id=3 op=to_device src_dev=-1 dest_dev=0 bytes=4 times=ok"),
		"bad times":       with(3, "ompt record target_kernel target_id=2 host_op_id=4 requested_teams=0 granted_teams=1 times=BAD"),
		"missing record":  with(3, "ompt trace nothing"),
		"native astray":   with(2, `ompt record native host_op_id=4 class=event type="host copy in" hwid=2 times=ok`),
		"wrong end kind":  with(4, "ompt record target endpoint=end kind=update dev=0 target_id=2 times=ok"),
		"entries differ":  with(5, "ompt buffer_complete dev=0 entries=7 owned=1"),
	}
	for name, b := range bad {
		rec := &recorder{}
		join(rec, cbs, b, "0")
		assert.NotZero(t, rec.n, "fault %q passed join", name)
	}
}

// errorer is the part of testing.T that join uses.
type errorer interface {
	Helper()
	Errorf(format string, args ...any)
}

type recorder struct{ n int }

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.n++ }
