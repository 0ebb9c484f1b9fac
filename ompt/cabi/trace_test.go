package cabi

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gompt/gompt/ompt"
)

// ctraceRun runs the "trace" scenario (child_test.go) under
// testdata/ctrace.c with buffers of bufBytes and returns its lines
// without the "ctrace " prefix.
func ctraceRun(t *testing.T, bufBytes int) (got []string, c child) {
	t.Helper()
	dir := t.TempDir()
	lib := build(t, dir, "ctrace")
	c = run(t, dir, "trace", "OMP_TOOL_LIBRARIES="+lib, "TRACE_OUTPUT=trace.txt", fmt.Sprintf("TRACE_BUFFER_BYTES=%d", bufBytes))
	wantLines(t, "child", c.out, "state=active")
	for _, l := range lines(c.file("trace.txt")) {
		s, ok := strings.CutPrefix(l, "ctrace ")
		if !ok {
			t.Fatalf("line without the ctrace prefix: %q", l)
		}
		got = append(got, s)
	}
	if len(got) == 0 {
		t.Fatalf("the C tool wrote nothing; verbose:\n%s\noutput:\n%s", c.verbose, c.out)
	}
	return got, c
}

// initLines are the C tool's results of the tracing entry points before
// and at start_trace on device dev (testdata/ctrace.c on_device_initialize):
// nothing works before start, unknown types and bad devices are errors,
// native answers by what the device honours, start works once.
func initLines(dev int, native ompt.SetResult) []string {
	return []string{
		fmt.Sprintf("init dev=%d unstarted stop=0 pause=0 flush=0 set_trace_ompt 999=%d thread_begin=%d target_map=%d null=%d bogus=%d all=%d data_op_emi=%d",
			dev, ompt.SetError, ompt.SetNever, ompt.SetNever, ompt.SetError, ompt.SetError, ompt.SetSometimes, ompt.SetAlways),
		fmt.Sprintf("init dev=%d set_trace_native=%d bad=%d neg=%d bogus=%d start null_request=0 null_complete=0 bogus=0 null=0 ok=1 twice=0 flush=1 bogus_ops=0",
			dev, native, ompt.SetError, ompt.SetError, ompt.SetError),
	}
}

var (
	reCB     = regexp.MustCompile(`^cb (target \w+ kind=\d+ dev=(\d+) target_id=(\d+) code=(0x[0-9a-f]+)|data_op target_id=(\d+) host_op_id=\d+ .* dest=0x[0-9a-f]+/(-?\d+) .*|submit target_id=(\d+) .*)$`)
	reRec    = regexp.MustCompile(`^rec dev=(\d+) (.*)$`)
	reNative = regexp.MustCompile(`^native host_op_id=(\d+) class=2 type="(host copy|host kernel)" hwid=7 queue=3 times=1 same=1$`)
	reHop    = regexp.MustCompile(`host_op_id=(\d+)`)
)

// TestCTrace drives constructs through the core's runtime-facing API
// (Tracing, Op, Record with device times and device.HostRecord records) under a
// C tool that traces through the C entry points, with buffers of three
// sizes: small (many buffers), large (one per session, flushed parts)
// and ones too small for any record. It checks that every record carries
// the ids and arguments of the callbacks of its operation, in order, on
// its device; that native records follow their operation with their
// abstract form; flush from a tool thread, stop and restart from a
// callback, pause; bad input at every entry point; and that every buffer
// goes back to the tool exactly once.
func TestCTrace(t *testing.T) {
	needC(t)
	for _, bb := range []int{1024, 1 << 20} {
		t.Run(fmt.Sprintf("buffer=%d", bb), func(t *testing.T) {
			got, c := ctraceRun(t, bb)
			all := strings.Join(got, "\n")
			if strings.Contains("\n"+all, "\nerror ") {
				t.Fatalf("the C tool found errors:\n%s", all)
			}
			want := append(initLines(0, ompt.SetAlways), initLines(1, ompt.SetNever)...)
			want = append(want,
				// 7 constructs on device 0 before the flush: 7 OMPT records and
				// 5 native records each, all delivered when flush returns
				"flush dev=0 ret=1 records=49 natives=35",
				"pause dev=0 begin=1,1", "pause dev=0 resume=1,1",
				// stop delivers the 2 constructs of device 1 and gives every
				// buffer back; then stop, pause and flush fail, start works once
				"stop dev=1 ret=1 records=14 given_back=1 again=0 pause=0 flush=0 restart=1 twice=0",
				"checks dev=0 n=29",
				"final live_buffers=0 errors=0")
			wantLines(t, "C tool", strings.Join(got, "\n"), want...)
			checkFinalize(t, got, 0, 56, 40, bb)
			checkFinalize(t, got, 1, 22, 0, bb)
			checkJoin(t, got)
			wantNotContains(t, "verbose log", c.verbose, "lost")
		})
	}

	t.Run("too small", func(t *testing.T) {
		for _, bb := range []int{0, 64} {
			got, c := ctraceRun(t, bb)
			all := strings.Join(got, "\n")
			if strings.Contains("\n"+all, "\nerror ") || strings.Contains("\n"+all, "\nrec ") {
				t.Errorf("buffers of %d bytes: records or errors:\n%s", bb, all)
			}
			wantLines(t, "C tool", all, "flush dev=0 ret=1 records=0 natives=0",
				"stop dev=1 ret=1 records=0 given_back=1 again=0 pause=0 flush=0 restart=1 twice=0", "final live_buffers=0 errors=0")
			for _, dev := range []int{0, 1} {
				m := regexp.MustCompile(fmt.Sprintf(`(?m)^finalize dev=%d requested=(\d+) returned=(\d+) parts=(\d+) records=0 natives=0$`, dev)).FindStringSubmatch(all)
				switch {
				case m == nil:
					t.Errorf("buffers of %d bytes: no clean finalize line for device %d:\n%s", bb, dev, all)
				case bb == 0 && m[1] != "0":
					t.Errorf("buffers of 0 bytes: %s requested", m[1])
				case m[1] != m[2] || m[2] != m[3]:
					// each too-small buffer goes straight back, owned, empty
					t.Errorf("buffers of %d bytes, device %d: requested %s, returned %s, parts %s", bb, dev, m[1], m[2], m[3])
				}
			}
			wantContains(t, "verbose log", c.verbose, "trace records lost")
		}
	})
}

// checkFinalize checks the C tool's count at device_finalize (after the
// runtime delivered everything): every buffer given back, the records
// expected, and at least one part per buffer.
func checkFinalize(t *testing.T, got []string, dev, recs, natives, bufBytes int) {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`^finalize dev=%d requested=(\d+) returned=(\d+) parts=(\d+) records=(\d+) natives=(\d+)$`, dev))
	for _, l := range got {
		m := re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		if n(1) == 0 || n(1) != n(2) || n(3) < n(2) || n(4) != recs || n(5) != natives {
			t.Errorf("device %d at finalize: %s; want every buffer given back, %d records, %d native", dev, l, recs, natives)
		}
		sessions := 1 + dev // device 1's session is stopped and restarted
		if bufBytes >= 1<<20 && n(1) != sessions {
			t.Errorf("device %d: %d buffers of %d bytes requested; want %d, one per session", dev, n(1), bufBytes, sessions)
		}
		return
	}
	t.Errorf("no finalize line for device %d", dev)
}

// checkJoin checks that the records of each device are exactly the
// callbacks of its operations, in order, with the same ids and
// arguments (the paused construct has none), and that each native record
// follows the OMPT record of its operation.
func checkJoin(t *testing.T, got []string) {
	t.Helper()
	devOf := map[string]string{} // target_id -> device
	paused := map[string]bool{}
	want := map[string][]string{}
	recs := map[string][]string{}
	for _, l := range got {
		if m := reCB.FindStringSubmatch(l); m != nil {
			body := strings.TrimPrefix(l, "cb ")
			var dev string
			switch {
			case m[2] != "":
				dev = m[2]
				devOf[m[3]] = dev
				if m[4] == fmt.Sprintf("%#x", codePause) {
					paused[m[3]] = true
				}
				if paused[m[3]] {
					continue
				}
			case m[5] != "":
				if paused[m[5]] {
					continue
				}
				dev = devOf[m[5]]
				if m[5] == "0" { // a device memory routine: the device it touches
					dev = m[6]
				}
			default:
				if paused[m[7]] {
					continue
				}
				dev = devOf[m[7]]
			}
			want[dev] = append(want[dev], body)
			continue
		}
		if m := reRec.FindStringSubmatch(l); m != nil {
			recs[m[1]] = append(recs[m[1]], m[2])
		}
	}
	if len(paused) != 1 {
		t.Errorf("%d paused constructs seen, want 1", len(paused))
	}
	for _, dev := range []string{"0", "1"} {
		var omptRecs []string
		rs := recs[dev]
		for i, r := range rs {
			if strings.HasPrefix(r, "native ") {
				continue
			}
			if strings.HasPrefix(r, "submit ") {
				var ok bool
				if r, ok = strings.CutSuffix(r, " granted=8"); !ok {
					t.Errorf("device %s: kernel record without granted=8: %s", dev, r)
				}
			}
			omptRecs = append(omptRecs, r)
			isOp := strings.HasPrefix(r, "data_op ") || strings.HasPrefix(r, "submit ")
			if dev != "0" || !isOp || strings.Contains(r, "target_id=0 ") {
				continue
			}
			// device 0 honours native records: one follows each operation
			m := (*regexp.Regexp).FindStringSubmatch
			if i+1 >= len(rs) || m(reNative, rs[i+1]) == nil || m(reNative, rs[i+1])[1] != m(reHop, r)[1] {
				next := ""
				if i+1 < len(rs) {
					next = rs[i+1]
				}
				t.Errorf("device 0: record %q is followed by %q, want its native record", r, next)
			}
		}
		if len(omptRecs) < 20 || strings.Join(omptRecs, "\n") != strings.Join(want[dev], "\n") {
			t.Errorf("device %s: records (left) and callbacks (right) differ:\n%s", dev, diffLines(omptRecs, want[dev]))
		}
	}
	if n := len(recs["1"]); n != 22 {
		t.Errorf("device 1 (no native records): %d entries, want 22", n)
	}
}

// TestCToolTrace runs the example tool over the "trace" scenario with
// each CTOOL_TRACE setting: quiet tracing and no tracing print the same
// lines as the Go printer; with CTOOL_TRACE=all every record line joins
// a callback line of the same operation, and each operation on device 0
// has its native record.
func TestCToolTrace(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	lib := buildCtool(t, dir)
	for _, mode := range []string{"", "0", "1", "all"} {
		t.Run("CTOOL_TRACE="+mode, func(t *testing.T) {
			c := run(t, dir, "trace", "OMP_TOOL_LIBRARIES="+lib, "CTOOL_FORM=plain", "CTOOL_TRACE="+mode,
				"CTOOL_OUTPUT=c"+mode+".txt", "CABI_GO_OUTPUT=go"+mode+".txt")
			var events, records []string
			for _, l := range lines(c.file("c" + mode + ".txt")) {
				if strings.HasPrefix(l, "ompt record ") {
					records = append(records, l)
				} else {
					events = append(events, l)
				}
			}
			gt := lines(c.file("go" + mode + ".txt"))
			if len(events) < 80 || strings.Join(events, "\n") != strings.Join(gt, "\n") {
				t.Fatalf("C tool events (left) and Go printer (right) differ:\n%s", diffLines(events, gt))
			}
			wantNotContains(t, "C tool output", c.file("c"+mode+".txt"), "ompt error")
			nat := 0
			for _, r := range records {
				if strings.Contains(r, "type=native") {
					nat++
				}
			}
			switch mode {
			case "", "0":
				if len(records) != 0 {
					t.Fatalf("CTOOL_TRACE=%q printed %d records", mode, len(records))
				}
				return
			case "1":
				if nat != 0 {
					t.Errorf("CTOOL_TRACE=1 printed %d native records", nat)
				}
			case "all":
				// 9 constructs on device 0, 4 data ops and a kernel each
				if nat != 45 {
					t.Errorf("CTOOL_TRACE=all printed %d native records, want 45", nat)
				}
			}
			// 12 constructs (7 records each) and one routine data op
			if n := len(records) - nat; n != 12*7+1 {
				t.Errorf("%d OMPT records, want %d", n, 12*7+1)
			}
			joinCtool(t, records, events)
		})
	}
}

var (
	reCtoolTarget = regexp.MustCompile(`^ompt record type=target dev=(\d+) target_id=(\d+) kind=(\w+) endpoint=(\w+) code=(0x[0-9a-f]+) thread_ok=1 time_ok=1$`)
	reCtoolOp     = regexp.MustCompile(`^ompt record type=target_data_op dev=\d+ (target_id=.*) thread_ok=1 time_ok=1$`)
	reCtoolKernel = regexp.MustCompile(`^ompt record type=target_submit dev=\d+ (target_id=\d+ host_op_id=\d+) requested_teams=(\d+) granted_teams=8 thread_ok=1 time_ok=1$`)
	reCtoolNative = regexp.MustCompile(`^ompt record type=native dev=0 host_op_id=(\d+) class=event name="host (copy|kernel)" hwid=7 time_ok=1$`)
)

// joinCtool turns each ctool record line into the callback line of the
// same operation and checks that it was printed (each once).
func joinCtool(t *testing.T, records, events []string) {
	t.Helper()
	have := map[string]int{}
	hops := map[string]bool{}
	for _, e := range events {
		have[e]++
		if m := reHop.FindStringSubmatch(e); m != nil {
			hops[m[1]] = true
		}
	}
	for _, r := range records {
		var cb string
		if m := reCtoolTarget.FindStringSubmatch(r); m != nil {
			cb = fmt.Sprintf("ompt target %s kind=%s dev=%s target_id=%s code=%s", m[4], m[3], m[1], m[2], m[5])
		} else if m := reCtoolOp.FindStringSubmatch(r); m != nil {
			cb = "ompt target_data_op " + m[1]
		} else if m := reCtoolKernel.FindStringSubmatch(r); m != nil {
			cb = fmt.Sprintf("ompt target_submit %s teams=%s", m[1], m[2])
		} else if m := reCtoolNative.FindStringSubmatch(r); m != nil {
			if !hops[m[1]] {
				t.Errorf("native record of an unknown operation: %s", r)
			}
			continue
		} else {
			t.Errorf("record line in no known format (or with a bad time or thread): %s", r)
			continue
		}
		if have[cb] == 0 {
			t.Errorf("record %q: no callback line %q (or seen as often already)", r, cb)
		}
		have[cb]--
	}
}
