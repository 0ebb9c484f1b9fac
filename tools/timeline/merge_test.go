package timeline

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandPath(t *testing.T) {
	host, _ := os.Hostname()
	pid := strconv.Itoa(os.Getpid())
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		in   string
		env  map[string]string
		want string
		bad  []string
	}{
		{"trace.json", nil, "trace.json", nil},
		{"t-%r.json", nil, "t-0.json", nil},
		{"t-%r.json", map[string]string{"OMPI_COMM_WORLD_RANK": "3", "PMI_RANK": "5"}, "t-3.json", nil},
		{"t-%r.json", map[string]string{"PMI_RANK": "5", "SLURM_PROCID": "7"}, "t-5.json", nil},
		{"t-%r.json", map[string]string{"PMIX_RANK": "6", "SLURM_PROCID": "7"}, "t-6.json", nil},
		{"t-%r.json", map[string]string{"SLURM_PROCID": "7"}, "t-7.json", nil},
		{"t-%r.json", map[string]string{"OMPI_COMM_WORLD_RANK": "x", "SLURM_PROCID": "7"}, "t-7.json", nil},
		{"%h/%p-%r-100%%.json", map[string]string{"PMI_RANK": "2"}, host + "/" + pid + "-2-100%.json", nil},
		{"t-%q-%.json%", nil, "t-%q-%.json%", []string{"%q", "%.", "%"}},
	} {
		got, bad := ExpandPath(c.in, env(c.env))
		assert.Equal(t, c.want, got, "ExpandPath(%q, %v)", c.in, c.env)
		assert.Equal(t, strings.Join(c.bad, " "), strings.Join(bad, " "), "ExpandPath(%q, %v): the bad verbs", c.in, c.env)
	}
}

var (
	progOnce sync.Once
	progBin  string
	progErr  error
)

// buildProg builds testdata/prog once per test binary.
func buildProg(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a program")
	}
	progOnce.Do(func() {
		dir, err := os.MkdirTemp("", "timeline-prog")
		if err != nil {
			progErr = err
			return
		}
		progBin = filepath.Join(dir, "prog")
		if out, err := exec.Command("go", "build", "-o", progBin, "./testdata/prog").CombinedOutput(); err != nil {
			progErr = err
			progBin = string(out)
		}
	})
	require.NoError(t, progErr, "go build ./testdata/prog:\n%s", progBin)
	return progBin
}

func readMergeInput(t *testing.T, path string) File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tf, err := ReadFile(f)
	require.NoError(t, err, path)
	return tf
}

// checkMerged checks a merged timeline of ranks 0..n-1: a process group
// per rank, in rank order, with distinct process ids, and every flow's
// two ends with one id that no other flow has.
func checkMerged(t *testing.T, m File, n int) {
	t.Helper()
	var names []string
	groupOf := map[int]string{}
	for _, ev := range m.TraceEvents {
		if ev.Name == "process_name" {
			name := ev.Args["name"].(string)
			names = append(names, name)
			groupOf[ev.PID] = name[:strings.Index(name, " (")]
		}
	}
	for r := 0; r < n; r++ {
		host := "rank " + strconv.Itoa(r) + " ("
		found := false
		for _, nm := range names {
			if strings.HasPrefix(nm, host) && strings.HasSuffix(nm, "): host") {
				found = true
			}
		}
		assert.True(t, found, "no host process for rank %d in %q", r, names)
	}
	assert.True(t, sort.SliceIsSorted(names, func(a, b int) bool { return names[a][:7] < names[b][:7] }),
		"process groups not in rank order: %q", names)
	ends := map[uint64][]string{}
	for _, ev := range m.TraceEvents {
		if ev.Cat == "flow" {
			g, ok := groupOf[ev.PID]
			require.True(t, ok, "event on process %d, which has no name: %+v", ev.PID, ev)
			ends[ev.ID] = append(ends[ev.ID], ev.Ph+"@"+g)
		}
	}
	assert.NotEmpty(t, ends, "flows in the merged timeline")
	for id, e := range ends {
		if assert.Len(t, e, 2, "flow id %d's ends", id) {
			assert.Equal(t, e[0][2:], e[1][2:], "flow id %d's ends %v: one start and one finish in one rank", id, e)
		}
	}
}

// Two processes of a "job", started 300 ms apart, each write their own
// file (GOMPT_TRACE with %r and %p), recording rank, host and clock
// anchor; merged, the later one's events lie about 300 ms after the
// earlier one's, although each file starts near 0.
func TestMergeProcesses(t *testing.T) {
	bin := buildProg(t)
	dir := t.TempDir()
	run := func(rankVar, rank string) {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), EnvVar+"="+filepath.Join(dir, "t-%r-%p.json"), rankVar+"="+rank,
			"GOMPT_PLUGINS=host", "OMP_TOOL_LIBRARIES=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "prog:\n%s", out)
	}
	run("SLURM_PROCID", "1")
	time.Sleep(300 * time.Millisecond)
	run("PMI_RANK", "0")
	files, _ := filepath.Glob(filepath.Join(dir, "t-*.json"))
	require.Len(t, files, 2, "files: want t-0-PID.json and t-1-PID.json")
	sort.Strings(files)
	var in []MergeInput
	first := map[int]float64{} // rank -> its first construct's ts in its own file
	for _, f := range files {
		tf := readMergeInput(t, f)
		o := tf.OtherData
		rank, _ := number(o["rank"])
		assert.Contains(t, f, "/t-"+strconv.Itoa(int(rank))+"-", "%s: otherData's rank", f)
		assert.NotEmpty(t, o["host"], "%s: otherData's host", f)
		assert.NotNil(t, o["pid"], "%s: otherData's pid", f)
		assert.NotNil(t, o["clock_anchor"], "%s: otherData's clock anchor", f)
		for _, ev := range tf.TraceEvents {
			if ev.Cat == "target" {
				first[int(rank)] = ev.TS
				break
			}
		}
		in = append(in, MergeInput{Name: f, File: tf})
	}
	for r, f := range first {
		require.LessOrEqual(t, f, 250e3, "rank %d's file should start near its own zero: first construct at us", r)
	}
	m, warns, err := Merge(in)
	require.NoError(t, err, "Merge")
	require.Empty(t, warns, "Merge's warnings")
	checkMerged(t, m, 2)
	merged := map[string]float64{}
	for _, ev := range m.TraceEvents {
		if ev.Cat == "target" {
			g := ev.PID / rankPIDs
			if _, ok := merged[strconv.Itoa(g)]; !ok {
				merged[strconv.Itoa(g)] = ev.TS
			}
		}
	}
	// group 1 is rank 0 (started last), group 2 rank 1
	gap := merged["1"] - merged["2"]
	assert.True(t, gap >= 280e3 && gap <= 30e6,
		"rank 0's first construct is %.0f us after rank 1's in the merged timeline; want about 300 ms or more (started 300 ms later)", gap)
}

// The real case: Open MPI's mpirun starts three ranks of a gompt program;
// GOMPT_TRACE=t-%r.json gives a file per rank, and their merge a group
// per rank.
func TestMPIRun(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		require.NotEqual(t, "true", os.Getenv("CI"), "CI: no mpirun (openmpi-bin)")
		t.Skip("no mpirun (Debian: apt-get install openmpi-bin)")
	}
	bin := buildProg(t)
	dir := t.TempDir()
	cmd := exec.Command(mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "3",
		"-x", EnvVar+"="+filepath.Join(dir, "t-%r.json"), "-x", "GOMPT_PLUGINS=host", bin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "mpirun:\n%s", &out)
	var in []MergeInput
	for r := 0; r < 3; r++ {
		f := filepath.Join(dir, "t-"+strconv.Itoa(r)+".json")
		tf := readMergeInput(t, f)
		got, _ := number(tf.OtherData["rank"])
		assert.Equal(t, r, int(got), "%s: rank", f)
		assert.Equal(t, "OMPI_COMM_WORLD_RANK", tf.OtherData["rank_from"], "%s: where the rank came from", f)
		in = append(in, MergeInput{Name: f, File: tf})
	}
	m, warns, err := Merge(in)
	require.NoError(t, err, "Merge")
	require.Empty(t, warns, "Merge's warnings")
	checkMerged(t, m, 3)
}

func TestMergeWarnings(t *testing.T) {
	_, _, err := Merge(nil)
	assert.Error(t, err, "Merge of nothing")
	ev := func(pid int, ts float64) Event { return Event{Name: "x", Ph: "X", PID: pid, TS: ts} }
	a := File{TraceEvents: []Event{ev(1, 10)}, OtherData: map[string]any{"rank": 1.0,
		"clock_anchor": map[string]any{"wtime_zero_unix_ns": "1000000000"}}}
	b := File{TraceEvents: []Event{ev(1, 10)}, OtherData: map[string]any{"rank": 1.0,
		"clock_anchor": map[string]any{"wtime_zero_unix_ns": "1000500000"}}}
	c := File{TraceEvents: []Event{ev(1, 10)}}
	m, warns, err := Merge([]MergeInput{{"a.json", a}, {"b.json", b}, {"c.json", c}})
	require.NoError(t, err)
	w := strings.Join(warns, "\n")
	assert.Contains(t, w, "a.json and b.json both say rank 1", "warnings")
	assert.Contains(t, w, "c.json has no clock anchor", "warnings")
	var ts []float64
	for _, e := range m.TraceEvents {
		ts = append(ts, e.TS)
	}
	sort.Float64s(ts)
	// b's zero is 500 us after a's; c stays where it was
	assert.Equal(t, []float64{10, 10, 510}, ts, "merged times")
}
