package cabi

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		require.True(t, ok, "line without the ctrace prefix: %q", l)
		got = append(got, s)
	}
	require.NotEmpty(t, got, "the C tool wrote nothing; verbose:\n%s\noutput:\n%s", c.verbose, c.out)
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
// (Tracing, Op, Record with device times and host.Record records) under a
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
			require.NotContains(t, "\n"+all, "\nerror ", "the C tool found errors")
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
			assert.NotContains(t, "\n"+all, "\nerror ", "buffers of %d bytes: errors", bb)
			assert.NotContains(t, "\n"+all, "\nrec ", "buffers of %d bytes: records", bb)
			wantLines(t, "C tool", all, "flush dev=0 ret=1 records=0 natives=0",
				"stop dev=1 ret=1 records=0 given_back=1 again=0 pause=0 flush=0 restart=1 twice=0", "final live_buffers=0 errors=0")
			for _, dev := range []int{0, 1} {
				m := regexp.MustCompile(fmt.Sprintf(`(?m)^finalize dev=%d requested=(\d+) returned=(\d+) parts=(\d+) records=0 natives=0$`, dev)).FindStringSubmatch(all)
				if !assert.NotNil(t, m, "buffers of %d bytes: no clean finalize line for device %d:\n%s", bb, dev, all) {
					continue
				}
				if bb == 0 {
					assert.Equal(t, "0", m[1], "buffers of 0 bytes: requested")
				}
				// each too-small buffer goes straight back, owned, empty
				assert.Equal(t, m[1], m[2], "buffers of %d bytes, device %d: returned against requested", bb, dev)
				assert.Equal(t, m[2], m[3], "buffers of %d bytes, device %d: parts against returned", bb, dev)
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
		assert.NotZero(t, n(1), "device %d at finalize: %s: buffers requested", dev, l)
		assert.Equal(t, n(1), n(2), "device %d at finalize: %s: every buffer given back", dev, l)
		assert.GreaterOrEqual(t, n(3), n(2), "device %d at finalize: %s: at least one part per buffer", dev, l)
		assert.Equal(t, recs, n(4), "device %d at finalize: %s: records", dev, l)
		assert.Equal(t, natives, n(5), "device %d at finalize: %s: native records", dev, l)
		sessions := 1 + dev // device 1's session is stopped and restarted
		if bufBytes >= 1<<20 {
			assert.Equal(t, sessions, n(1), "device %d: buffers of %d bytes requested, one per session", dev, bufBytes)
		}
		return
	}
	assert.Failf(t, "no finalize line", "device %d", dev)
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
	assert.Len(t, paused, 1, "paused constructs seen")
	for _, dev := range []string{"0", "1"} {
		var omptRecs []string
		rs := recs[dev]
		for i, r := range rs {
			if strings.HasPrefix(r, "native ") {
				continue
			}
			if strings.HasPrefix(r, "submit ") {
				var ok bool
				r, ok = strings.CutSuffix(r, " granted=8")
				assert.True(t, ok, "device %s: kernel record without granted=8: %s", dev, r)
			}
			omptRecs = append(omptRecs, r)
			isOp := strings.HasPrefix(r, "data_op ") || strings.HasPrefix(r, "submit ")
			if dev != "0" || !isOp || strings.Contains(r, "target_id=0 ") {
				continue
			}
			// device 0 honours native records: one follows each operation
			m := (*regexp.Regexp).FindStringSubmatch
			if assert.Less(t, i+1, len(rs), "device 0: record %q is the last, want its native record after it", r) {
				nm := m(reNative, rs[i+1])
				if assert.NotNil(t, nm, "device 0: record %q is followed by %q, want its native record", r, rs[i+1]) {
					assert.Equal(t, m(reHop, r)[1], nm[1], "device 0: record %q is followed by %q, want its native record", r, rs[i+1])
				}
			}
		}
		assert.GreaterOrEqual(t, len(omptRecs), 20, "device %s: records", dev)
		assert.Equal(t, strings.Join(want[dev], "\n"), strings.Join(omptRecs, "\n"), "device %s: records (left) and callbacks (right) differ:\n%s", dev, diffLines(omptRecs, want[dev]))
	}
	assert.Len(t, recs["1"], 22, "device 1 (no native records): entries")
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
			require.GreaterOrEqual(t, len(events), 80, "C tool events")
			require.Equal(t, strings.Join(gt, "\n"), strings.Join(events, "\n"), "C tool events (left) and Go printer (right) differ:\n%s", diffLines(events, gt))
			wantNotContains(t, "C tool output", c.file("c"+mode+".txt"), "ompt error")
			nat := 0
			for _, r := range records {
				if strings.Contains(r, "type=native") {
					nat++
				}
			}
			switch mode {
			case "", "0":
				require.Empty(t, records, "CTOOL_TRACE=%q printed records", mode)
				return
			case "1":
				assert.Zero(t, nat, "CTOOL_TRACE=1 printed native records")
			case "all":
				// 9 constructs on device 0, 4 data ops and a kernel each
				assert.Equal(t, 45, nat, "CTOOL_TRACE=all: native records")
			}
			// 12 constructs (7 records each) and one routine data op
			assert.Equal(t, 12*7+1, len(records)-nat, "OMPT records")
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
			assert.True(t, hops[m[1]], "native record of an unknown operation: %s", r)
			continue
		} else {
			assert.Failf(t, "record line in no known format (or with a bad time or thread)", "%s", r)
			continue
		}
		assert.NotZero(t, have[cb], "record %q: no callback line %q (or seen as often already)", r, cb)
		have[cb]--
	}
}
