package timeline

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tool starts once per process (ompt starts once), so each scenario
// runs in a child: target/internal/fakeruntime, which drives the engine
// alone over fake devices, built once per test binary and run with the
// scenario's name and GOMPT_TRACE set to a file; the parent checks the
// file the child's tool wrote.
var (
	fakeOnce sync.Once
	fakeBin  string
	fakeErr  error
	fakeDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fakeDir != "" {
		os.RemoveAll(fakeDir)
	}
	os.Exit(code)
}

// fakeRuntime builds the scenario program once.
func fakeRuntime(t *testing.T) string {
	t.Helper()
	fakeOnce.Do(func() {
		if fakeDir, fakeErr = os.MkdirTemp("", "timeline-test-"); fakeErr != nil {
			return
		}
		fakeBin = filepath.Join(fakeDir, "fakeruntime")
		out, err := exec.Command("go", "build", "-o", fakeBin, "github.com/gompt/gompt/target/internal/fakeruntime").CombinedOutput()
		if err != nil {
			fakeErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, fakeErr, "building the scenario program")
	return fakeBin
}

// child runs one scenario with GOMPT_TRACE=path and returns its standard
// output and standard error.
func child(t *testing.T, scenario, path string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(fakeRuntime(t), scenario)
	cmd.Env = append(os.Environ(), EnvVar+"="+path,
		"OMP_TOOL=enabled", "OMP_TOOL_VERBOSE_INIT=disabled", "OMP_TOOL_LIBRARIES=")
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	require.NoError(t, cmd.Run(), "child %s\nstdout:\n%s\nstderr:\n%s", scenario, o.String(), e.String())
	return o.String(), e.String()
}

func readTrace(t *testing.T, path string) File {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var f File
	require.NoError(t, json.Unmarshal(b, &f), "%s is not JSON:\n%s", path, b)
	return f
}

func expected(t *testing.T, stdout string) map[int]int {
	t.Helper()
	m := map[int]int{}
	for _, l := range strings.Split(stdout, "\n") {
		var dev, n int
		if _, err := fmt.Sscanf(l, "EXPECT device=%d ops=%d", &dev, &n); err == nil {
			m[dev] = n
		}
	}
	require.NotEmpty(t, m, "child printed no expectations:\n%s", stdout)
	return m
}

func num(a map[string]any, k string) (uint64, bool) {
	v, ok := a[k].(float64)
	return uint64(v), ok
}

type key struct{ pid, tid int }

// checkTrace checks the properties every trace must have and returns the
// complete events per device. Every device event must lie inside its
// construct; with strict, also inside its host operation (the fake
// runtime's operations are synchronous; the real runtime's copies and
// kernels run after their host operation has enqueued them).
func checkTrace(t errorer, f File, want map[int]int, strict bool) map[int][]Event {
	t.Helper()
	const tol = 50.0 // us: the translation error allowed
	procs := map[int]string{}
	threads := map[key]string{}
	var xs []Event
	flows := map[uint64][]Event{}
	for _, ev := range f.TraceEvents {
		switch ev.Ph {
		case "M":
			switch ev.Name {
			case "process_name":
				procs[ev.PID], _ = ev.Args["name"].(string)
			case "thread_name":
				threads[key{ev.PID, ev.TID}], _ = ev.Args["name"].(string)
			}
		case "X":
			if !assert.True(t, ev.Dur != nil && *ev.Dur >= 0 && ev.TS >= 0 && !math.IsNaN(ev.TS), "complete event with bad time: %+v", ev) {
				continue
			}
			xs = append(xs, ev)
		case "s", "f":
			flows[ev.ID] = append(flows[ev.ID], ev)
		default:
			assert.Fail(t, "unexpected phase", "%q: %+v", ev.Ph, ev)
		}
	}
	assert.Equal(t, "host", procs[HostPID], "the host process: %v", procs)
	byTrack := map[key][]Event{}
	constructs := map[uint64]Event{}
	hostOps := map[uint64]Event{}
	devs := map[int][]Event{}
	for _, ev := range xs {
		k := key{ev.PID, ev.TID}
		assert.NotEmpty(t, threads[k], "event on a track with no thread_name: %+v", ev)
		assert.NotEmpty(t, procs[ev.PID], "event in a process with no process_name: %+v", ev)
		byTrack[k] = append(byTrack[k], ev)
		id, _ := num(ev.Args, "target_id")
		switch {
		case ev.PID == HostPID && ev.Cat == "target":
			constructs[id] = ev
		case ev.PID == HostPID:
			op, _ := num(ev.Args, "host_op_id")
			hostOps[op] = ev
		default:
			devs[ev.PID-DevicePID] = append(devs[ev.PID-DevicePID], ev)
		}
	}
	// one track holds spans that nest or do not overlap
	for k, evs := range byTrack {
		sort.SliceStable(evs, func(i, j int) bool {
			if evs[i].TS != evs[j].TS {
				return evs[i].TS < evs[j].TS
			}
			return *evs[i].Dur > *evs[j].Dur
		})
		var open []Event
		for _, ev := range evs {
			for len(open) > 0 && open[len(open)-1].TS+*open[len(open)-1].Dur <= ev.TS {
				open = open[:len(open)-1]
			}
			if n := len(open); n > 0 {
				// Ends within a nanosecond are one end written as two
				// microsecond sums (a device whose times bracket its
				// operations gives several the same end).
				a := open[n-1]
				assert.GreaterOrEqual(t, a.TS+*a.Dur+1e-3, ev.TS+*ev.Dur, "track %v: %q [%.3f,+%.3f] and %q [%.3f,+%.3f] overlap without nesting",
					k, a.Name, a.TS, *a.Dur, ev.Name, ev.TS, *ev.Dur)
			}
			open = append(open, ev)
		}
	}
	for dev, n := range want {
		if n > 0 {
			assert.True(t, strings.HasPrefix(procs[DevicePID+dev], "device "+strconv.Itoa(dev)+": "), "device %d process named %q", dev, procs[DevicePID+dev])
		}
		if len(devs[dev]) != n {
			// name the host operations whose device work is missing
			seen := map[uint64]bool{}
			for _, ev := range devs[dev] {
				op, _ := num(ev.Args, "host_op_id")
				seen[op] = true
			}
			var miss []string
			for op, h := range hostOps {
				id, _ := num(h.Args, "target_id")
				src, _ := h.Args["src_device"].(float64)
				dst, _ := h.Args["dest_device"].(float64)
				c, inC := constructs[id]
				cdev, _ := c.Args["device"].(float64)
				if !seen[op] && (int(src) == dev || int(dst) == dev || (h.Cat == "target_submit" && inC && int(cdev) == dev)) {
					miss = append(miss, fmt.Sprintf("%s host_op_id=%d in %q target_id=%d", h.Name, op, c.Name, id))
				}
			}
			sort.Strings(miss)
			assert.Len(t, devs[dev], n, "device %d: device events; host operations without device work: %q", dev, miss)
		}
	}
	inside := func(in, out Event) bool {
		return in.TS >= out.TS-tol && in.TS+*in.Dur <= out.TS+*out.Dur+tol
	}
	for dev, evs := range devs {
		for _, ev := range evs {
			id, _ := num(ev.Args, "target_id")
			op, _ := num(ev.Args, "host_op_id")
			h, ok := hostOps[op]
			if !assert.True(t, ok, "device %d event %q: no host operation with host_op_id %d", dev, ev.Name, op) {
				continue
			}
			if strict || id == 0 {
				assert.True(t, inside(ev, h), "device %d event %q [%.3f,+%.3f] is not inside its host operation [%.3f,+%.3f]", dev, ev.Name, ev.TS, *ev.Dur, h.TS, *h.Dur)
			}
			hid, _ := num(h.Args, "target_id")
			assert.Equal(t, hid, id, "device %d event %q: target_id against its host operation's", dev, ev.Name)
			if id != 0 {
				c, ok := constructs[id]
				if assert.True(t, ok, "device %d event %q: no construct with target_id %d", dev, ev.Name, id) {
					assert.True(t, inside(ev, c), "device %d event %q [%.3f,+%.3f] is not inside its construct [%.3f,+%.3f]", dev, ev.Name, ev.TS, *ev.Dur, c.TS, *c.Dur)
				}
			}
			// one flow per device event, from its host operation
			fl := flows[op]
			if !assert.True(t, len(fl) == 2 && fl[0].Ph == "s" && fl[1].Ph == "f", "device %d event %q: flow %d is %+v, want one s then one f", dev, ev.Name, op, fl) {
				continue
			}
			s, e := fl[0], fl[1]
			assert.Equal(t, [4]any{HostPID, ev.PID, ev.TID, "e"}, [4]any{s.PID, e.PID, e.TID, e.BP},
				"flow %d: from the host (pid, then the end's pid, tid, bp) to the device event's track", op)
			assert.True(t, s.TS >= h.TS && s.TS <= h.TS+*h.Dur && s.TID == h.TID,
				"flow %d starts at %d/%.3f, outside its host operation %d/[%.3f,+%.3f]", op, s.TID, s.TS, h.TID, h.TS, *h.Dur)
			assert.True(t, e.TS >= ev.TS && e.TS <= ev.TS+*ev.Dur, "flow %d ends at %.3f, outside its device event [%.3f,+%.3f]", op, e.TS, ev.TS, *ev.Dur)
		}
	}
	for id, fl := range flows {
		assert.Len(t, fl, 2, "flow %d's events", id)
	}
	return devs
}

func names(evs []Event) map[string]int {
	m := map[string]int{}
	for _, ev := range evs {
		m[ev.Name]++
	}
	return m
}

func TestBasic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	out, errOut := child(t, "basic", path)
	assert.Empty(t, errOut, "warnings")
	assert.Contains(t, out, "COUNTER begins=11", "the other tool did not see every construct beside the timeline")
	f := readTrace(t, path)
	devs := checkTrace(t, f, expected(t, out), true)
	n0 := names(devs[0])
	for name, want := range map[string]int{"alloc 3.9 KiB": 3, "to device 3.9 KiB": 4, "kernel teams=8": 3,
		"kernel teams=4": 2, "from device 3.9 KiB": 3, "delete": 4, "alloc 1 MiB": 1, "to device 1 MiB": 2, "from device 1 MiB": 1} {
		assert.Equal(t, want, n0[name], "device 0: events named %q (all: %v)", name, n0)
	}
	// tracks: device 0's native records name queues 1 and 2; device 1 has
	// none; two host threads; the overlapping nowait constructs need a
	// second lane
	tracks := map[string]bool{}
	hostThreads := 0
	for _, ev := range f.TraceEvents {
		if ev.Ph == "M" && ev.Name == "thread_name" {
			n := ev.Args["name"].(string)
			tracks[strconv.Itoa(ev.PID)+" "+n] = true
			if ev.PID == HostPID && !strings.Contains(n, "(") {
				hostThreads++
			}
		}
	}
	for _, want := range []string{"100 queue 1", "100 queue 2", "101 device 1"} {
		assert.True(t, tracks[want], "no track %q in %v", want, tracks)
	}
	assert.Equal(t, 2, hostThreads, "host thread tracks: %v", tracks)
	lane2 := false
	for tr := range tracks {
		lane2 = lane2 || (strings.HasPrefix(tr, "1 thread ") && strings.HasSuffix(tr, " (2)"))
	}
	assert.True(t, lane2, "the overlapping nowait constructs got no second lane: %v", tracks)
	assert.NotZero(t, f.OtherData["records"], "otherData's records")
	assert.NotZero(t, f.OtherData["native_records"], "otherData's native records")
}

// TestManyBuffers fills several buffers during the run: their times come
// from ompt_translate_time, the last buffer's from the tool's own pairs.
func TestManyBuffers(t *testing.T) {
	if testing.Short() {
		t.Skip("7500 operations")
	}
	path := filepath.Join(t.TempDir(), "trace.json")
	out, errOut := child(t, "many", path)
	assert.Empty(t, errOut, "warnings")
	f := readTrace(t, path)
	want := expected(t, out)
	require.Equal(t, 7500, want[0], "operations the scenario recorded")
	checkTrace(t, f, want, true)
}

func TestBadPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "trace.json")
	out, errOut := child(t, "basic", path)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if assert.Len(t, lines, 1, "warning lines:\n%s", errOut) {
		assert.True(t, strings.HasPrefix(lines[0], "gompt: GOMPT_TRACE: "), "the warning names GOMPT_TRACE: %s", lines[0])
		assert.Contains(t, lines[0], "no such file", "the warning names the error")
	}
	assert.Contains(t, out, "COUNTER begins=11", "the program or the other tool did not run normally")
	assert.NoFileExists(t, path)
}

func TestNoShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	child(t, "noshutdown", path)
	f := readTrace(t, path)
	assert.Empty(t, f.TraceEvents, "without shutdown the file is the placeholder")
	assert.Contains(t, fmt.Sprint(f.OtherData["incomplete"]), "Shutdown", "without shutdown the placeholder says why")
}

func TestHostFallback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	out, _ := child(t, "host-fallback", path)
	f := readTrace(t, path)
	checkTrace(t, f, expected(t, out), true)
	var got []string
	for _, ev := range f.TraceEvents {
		if ev.Ph == "X" {
			got = append(got, fmt.Sprint(ev.PID, " ", ev.Name, " device=", ev.Args["device"]))
		}
	}
	assert.Equal(t, []string{"1 target device=1"}, got, "events")
}

func TestPackNests(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var spans []span
		for range 1 + r.IntN(30) {
			b := float64(r.IntN(100))
			spans = append(spans, span{begin: b, end: b + float64(r.IntN(30))})
		}
		lanes := pack(spans)
		for i, a := range spans {
			for j, b := range spans {
				if i >= j || lanes[i] != lanes[j] {
					continue
				}
				overlap := a.begin < b.end && b.begin < a.end
				nested := (a.begin <= b.begin && b.end <= a.end) || (b.begin <= a.begin && a.end <= b.end)
				if overlap {
					require.True(t, nested, "trial %d: lane %d holds %v and %v", trial, lanes[i], a, b)
				}
			}
		}
	}
	// a nowait pair: B overlaps A; B's operations after A ends go under B
	lanes := pack([]span{{begin: 0, end: 10, group: 1}, {begin: 2, end: 20, group: 2}, {begin: 3, end: 4, group: 1}, {begin: 12, end: 14, group: 2}, {begin: 5, end: 6, group: 2}})
	assert.Equal(t, fmt.Sprint([]int{0, 1, 0, 1, 1}), fmt.Sprint(lanes), "lanes")
}

func TestSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1000: "1000 B", 1024: "1 KiB", 4000: "3.9 KiB",
		1 << 20: "1 MiB", 1536 << 10: "1.5 MiB", 3 << 30: "3 GiB"} {
		assert.Equal(t, want, size(n), "size(%d)", n)
	}
}

// errorer is the part of testing.T that checkTrace uses.
type errorer interface {
	Helper()
	Errorf(format string, args ...any)
}

type countErrors struct{ n int }

func (c *countErrors) Helper()               {}
func (c *countErrors) Errorf(string, ...any) { c.n++ }

// TestCheckTraceCatchesFaults plants one fault at a time in a good trace.
func TestCheckTraceCatchesFaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	out, _ := child(t, "basic", path)
	want := expected(t, out)
	good := readTrace(t, path)
	c := &countErrors{}
	checkTrace(c, good, want, true)
	require.Zero(t, c.n, "checks the good trace fails")
	firstDev := func(f File) int {
		for i, ev := range f.TraceEvents {
			if ev.Ph == "X" && ev.PID >= DevicePID {
				return i
			}
		}
		require.Fail(t, "no device event")
		return 0
	}
	faults := map[string]func(f *File){
		"device event moved out of its construct": func(f *File) { f.TraceEvents[firstDev(*f)].TS += 1e6 },
		"negative duration": func(f *File) {
			d := -1.0
			f.TraceEvents[firstDev(*f)].Dur = &d
		},
		"flow end dropped": func(f *File) {
			for i, ev := range f.TraceEvents {
				if ev.Ph == "f" {
					f.TraceEvents = append(f.TraceEvents[:i:i], f.TraceEvents[i+1:]...)
					return
				}
			}
		},
		"partial overlap on a track": func(f *File) {
			i := firstDev(*f)
			ev := f.TraceEvents[i]
			d := *ev.Dur
			ev.TS += d / 2
			ev.Dur = &d
			ev.Args = map[string]any{"target_id": ev.Args["target_id"], "host_op_id": float64(1 << 40)}
			f.TraceEvents = append(f.TraceEvents, ev)
		},
		"one device event missing": func(f *File) {
			i := firstDev(*f)
			f.TraceEvents = append(f.TraceEvents[:i:i], f.TraceEvents[i+1:]...)
		},
		"no thread name": func(f *File) {
			for i, ev := range f.TraceEvents {
				if ev.Ph == "M" && ev.Name == "thread_name" {
					f.TraceEvents = append(f.TraceEvents[:i:i], f.TraceEvents[i+1:]...)
					return
				}
			}
		},
	}
	for name, plant := range faults {
		b, _ := json.Marshal(good)
		var f File
		json.Unmarshal(b, &f)
		plant(&f)
		c := &countErrors{}
		checkTrace(c, f, want, true)
		assert.NotZero(t, c.n, "fault %q passed checkTrace", name)
	}
}

// TestRealRuntime builds testdata/prog, which runs veccopy's constructs
// and two nowait regions on every device through package target, and
// checks the trace the real runtime's records make. It runs on the host
// device and, if the OpenCL plugin finds a device, on that too.
func TestRealRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	bin := filepath.Join(t.TempDir(), "prog")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/prog").CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	path := filepath.Join(t.TempDir(), "trace.json")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), EnvVar+"="+path, "GOMPT_PLUGINS=host,opencl", "GOMPT_HOST_DEVICES=1",
		"OMP_TOOL=enabled", "OMP_TOOL_LIBRARIES=", "OMP_TOOL_VERBOSE_INIT=disabled")
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	require.NoError(t, cmd.Run(), "prog:\n%s%s", o.String(), e.String())
	assert.Empty(t, e.String(), "warnings")
	var ndev int
	if _, err := fmt.Sscanf(o.String(), "prog: OK on %d devices", &ndev); err != nil || ndev < 1 {
		require.Failf(t, "prog's output", "prog said %q", o.String())
	}
	t.Logf("%d devices", ndev)
	// per device: target 7 (2 allocs, copy in, kernel, copy out, 2
	// deletes), data+update 5, enter+exit 4, routines 3, two nowait
	// targets 14
	want := map[int]int{}
	for d := range ndev {
		want[d] = 33
	}
	f := readTrace(t, path)
	devs := checkTrace(t, f, want, false)
	for d := range ndev {
		kinds := map[string]int{}
		for name, k := range names(devs[d]) {
			for _, p := range []string{"to device", "from device", "copy32 teams=", "alloc", "delete"} {
				if strings.HasPrefix(name, p) {
					kinds[p] += k
				}
			}
		}
		// Kernel slices are named after the kernel (its native record).
		assert.Equal(t, map[string]int{"to device": 7, "from device": 5, "copy32 teams=": 3, "alloc": 9, "delete": 9}, kinds, "device %d: events by kind", d)
	}
	// Construct slices are named after their Go call site in prog's
	// main.go: main.main for its own constructs, main.main.func1 for the
	// update inside the target data body.
	src, err := os.ReadFile(filepath.Join("testdata", "prog", "main.go"))
	require.NoError(t, err)
	lines := strings.Split(string(src), "\n")
	sites := map[string]int{}
	for _, ev := range f.TraceEvents {
		if ev.Cat != "target" {
			continue
		}
		fn, _ := ev.Args["function"].(string)
		file, _ := ev.Args["file"].(string)
		i := strings.LastIndexByte(file, ':')
		line, _ := strconv.Atoi(file[i+1:])
		if !strings.HasPrefix(fn, "main.main") || !strings.HasSuffix(file[:max(i, 0)], "main.go") || line < 1 || line > len(lines) {
			assert.Failf(t, "construct call site", "construct %q: call site %q at %q, want main.main... in prog's main.go", ev.Name, fn, file)
			continue
		}
		assert.Contains(t, lines[line-1], "target.", "construct %q: main.go:%d is not a call into package target", ev.Name, line)
		want := fmt.Sprintf(" %s main.go:%d", fn, line)
		assert.True(t, strings.HasSuffix(ev.Name, want), "construct named %q, want it to end with %q", ev.Name, want)
		sites[strings.Fields(ev.Name)[0]+" "+strings.TrimSpace(lines[line-1])]++
	}
	t.Logf("construct call sites: %v", sites)
	assert.GreaterOrEqual(t, len(sites), 5, "distinct call sites of constructs (target, data, update, enter, exit, nowait): %v", sites)
}

// Kernel slices take the kernel's name from the native type "PLUGIN
// kernel: NAME"; construct slices their call site from a return address.
func TestLabels(t *testing.T) {
	for native, want := range map[string]string{"host kernel: saxpy": "saxpy teams=4", "cuda kernel: jacobi": "jacobi teams=4",
		"cuda kernel": "kernel teams=4", "fake op": "kernel teams=4", "": "kernel teams=4"} {
		assert.Equal(t, want, kernelLabel(native, 4), "kernelLabel(%q)", native)
	}
	sites := callSites{}
	for _, bad := range []uintptr{0, 0x10} {
		cs, ok := sites.at(bad)
		assert.False(t, ok, "call site of %#x: %+v, want none", bad, cs)
	}
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:]) // a return address in this function, as codeptr_ra is
	_, _, line, _ := runtime.Caller(0)
	cs, ok := sites.at(pcs[0])
	require.True(t, ok, "no call site for this function's return address")
	require.Equal(t, "github.com/gompt/gompt/tools/timeline.TestLabels", cs.fn)
	require.Equal(t, line-1, cs.line)
	require.Equal(t, "timeline_test.go", filepath.Base(cs.file))
	assert.Equal(t, fmt.Sprintf("timeline.TestLabels timeline_test.go:%d", line-1), cs.short(), "label")
}
