package omptrt

// Tools that push the trace path at its edges: EMI callbacks registered and
// unregistered mid-session, two tools where only one is EMI, dirty and
// odd buffers, SpanTiming with native records switched per device and
// mid-session, thread ids of routines and nowait constructs, flush and
// stop racing constructs on several goroutines.

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	hostplugin "github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recOp returns the host_op_id of a data op or kernel record, and
// whether it is one.
func recOp(r *ompt.RecordOMPT) (uint64, bool) {
	if d := r.DataOp(); d != nil {
		return d.HostOpID, true
	}
	if k := r.Kernel(); k != nil {
		return k.HostOpID, true
	}
	return 0, false
}

// TestRecordIDsWithEMIRegisteredAndDroppedMidSession: a tracing tool with non-EMI
// callbacks registers EMI callbacks from inside a construct (they take
// effect for the next construct), then drops them (set_callback nil)
// from inside another. Every record joins the callbacks of its own
// construct by ids: the runtime's while the construct's dispatcher had
// no EMI callback, the tool's own while it had.
func TestRecordIDsWithEMIRegisteredAndDroppedMidSession(t *testing.T) {
	const base = 0x5500_0000
	var (
		mu      sync.Mutex
		n       uint64
		phase   int // construct number, 1-based
		targets = map[int]map[uint64]bool{}
		ops     = map[int]map[[2]uint64]bool{}
		set     ompt.SetCallbackFunc
	)
	note := func(tid, hop uint64) {
		if targets[phase] == nil {
			targets[phase], ops[phase] = map[uint64]bool{}, map[[2]uint64]bool{}
		}
		if hop == 0 {
			targets[phase][tid] = true
		} else {
			ops[phase][[2]uint64{tid, hop}] = true
		}
	}
	emiTarget := ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _, _, td *ompt.Data, _ uintptr) {
		mu.Lock()
		defer mu.Unlock()
		if ep == ompt.ScopeBegin {
			n++
			td.Value = base + n
		}
		note(td.Value, 0)
		if phase == 4 && ep == ompt.ScopeBegin {
			// drop the EMI forms mid-construct
			for _, ev := range []ompt.Callback{ompt.CallbackTargetEMI, ompt.CallbackTargetDataOpEMI, ompt.CallbackTargetSubmitEMI} {
				if r := set(ev, nil); r != ompt.SetAlways {
					panic(fmt.Sprint("unregister ", ev, ": ", r))
				}
			}
		}
	})
	emiOp := ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, _, td *ompt.Data, hop *uint64, _ ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
		mu.Lock()
		defer mu.Unlock()
		if ep == ompt.ScopeBegin {
			n++
			*hop = base + n
		}
		note(td.Value, *hop)
	})
	emiSubmit := ompt.TargetSubmitEMICallback(func(ep ompt.Endpoint, td *ompt.Data, hop *uint64, _ uint32) {
		mu.Lock()
		defer mu.Unlock()
		note(td.Value, *hop)
	})
	r := &recorder{extra: func(r *recorder) {
		set = r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)
		set(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _ *ompt.Data, id uint64, _ uintptr) {
			mu.Lock()
			defer mu.Unlock()
			note(id, 0)
			if phase == 2 && ep == ompt.ScopeBegin {
				// register the EMI forms mid-construct
				for ev, f := range map[ompt.Callback]any{ompt.CallbackTargetEMI: emiTarget, ompt.CallbackTargetDataOpEMI: emiOp, ompt.CallbackTargetSubmitEMI: emiSubmit} {
					if r := set(ev, f); r != ompt.SetAlways {
						panic(fmt.Sprint("register ", ev, ": ", r))
					}
				}
			}
		}))
		set(ompt.CallbackTargetDataOp, ompt.TargetDataOpCallback(func(tid, hop uint64, _ ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
			mu.Lock()
			defer mu.Unlock()
			note(tid, hop)
		}))
		set(ompt.CallbackTargetSubmit, ompt.TargetSubmitCallback(func(tid, hop uint64, _ uint32) {
			mu.Lock()
			defer mu.Unlock()
			note(tid, hop)
		}))
	}}
	tt := &traceTool{r: r}
	clks := withTrace(t, tt, 1)
	for p := 1; p <= 5; p++ {
		mu.Lock()
		phase = p
		mu.Unlock()
		tracedRegion(0, uintptr(p), clks[0], false)
	}
	require.Equal(t, 1, tt.flush(0), "flush")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, tt.raw, 5*7, "records")
	for i := range tt.raw {
		rec := &tt.raw[i]
		p := i/7 + 1
		own := p == 3 || p == 4 // constructs whose dispatcher had the EMI forms
		if hop, ok := recOp(rec); ok {
			assert.True(t, ops[p][[2]uint64{rec.TargetID, hop}], "construct %d record %d: target_id %#x host_op_id %#x joins none of its callbacks", p, i, rec.TargetID, hop)
		} else {
			assert.True(t, targets[p][rec.TargetID], "construct %d record %d: target_id %#x joins none of its callbacks", p, i, rec.TargetID)
		}
		assert.Equal(t, own, rec.TargetID&0xffff_0000 == base&0xffff_0000, "construct %d record %d: target_id %#x: the tool's own id?", p, i, rec.TargetID)
	}
}

// twoTools registers tool "a" (EMI target callbacks writing its own ids,
// asks get_target_info inside them) and tool "b" (non-EMI target
// callback, asks get_target_info inside it, owns the trace of device 0
// unless aOwns), in the order given.
type emiTraceTool struct {
	name  string
	emi   bool
	trace bool
	base  uint64

	mu      sync.Mutex
	n       uint64
	info    ompt.GetTargetInfoFunc
	h       *ompt.DeviceHandle
	l       ompt.LookupFunc
	ids     map[uint64]bool // target ids its callbacks saw
	records []ompt.RecordOMPT
	errs    []string
}

func (x *emiTraceTool) start(int, string) *ompt.StartResult {
	return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
		set := l("ompt_set_callback").(ompt.SetCallbackFunc)
		x.info = l("ompt_get_target_info").(ompt.GetTargetInfoFunc)
		x.ids = map[uint64]bool{}
		if x.trace {
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, _ string, h *ompt.DeviceHandle, dl ompt.LookupFunc, _ string) {
				if dev != 0 {
					return
				}
				x.h, x.l = h, dl
				dl("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
				dl("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return make([]byte, 4096) }, func(_ int, b []byte, bytes, begin uint64, _ bool) {
					for cur, k := range ompt.Records(b, bytes, begin) {
						if k == ompt.RecordKindOMPT {
							x.mu.Lock()
							x.records = append(x.records, *ompt.RecordAt(b, cur))
							x.mu.Unlock()
						}
					}
				})
			}))
		}
		check := func(where string, want uint64) {
			_, got, _, ok := x.info()
			if !ok || got != want {
				x.errs = append(x.errs, fmt.Sprintf("%s: %s: get_target_info = %#x (ok %v), want %#x", x.name, where, got, ok, want))
			}
		}
		if x.emi {
			set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _, _, td *ompt.Data, _ uintptr) {
				x.mu.Lock()
				defer x.mu.Unlock()
				if ep == ompt.ScopeBegin {
					x.n++
					td.Value = x.base + x.n
				}
				x.ids[td.Value] = true
				check("target_emi", td.Value)
			}))
		} else {
			set(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, _ ompt.Endpoint, _ int, _ *ompt.Data, id uint64, _ uintptr) {
				x.mu.Lock()
				defer x.mu.Unlock()
				x.ids[id] = true
				check("target", id)
			}))
		}
		return 1
	}}
}

// TestRecordIDsWithTwoToolsOnlyOneEMI: of two tools, one registers EMI target
// callbacks and writes its own target ids; the other registers the
// non-EMI form. Whichever owns device 0's trace, its records carry the
// ids its own callbacks got, and get_target_info answers each tool with
// its ids.
func TestRecordIDsWithTwoToolsOnlyOneEMI(t *testing.T) {
	for _, c := range []struct {
		name    string
		emiOwns bool
		emiLast bool
	}{{"plain owns, EMI first", false, false}, {"plain owns, EMI last", false, true}, {"EMI owns, EMI first", true, false}, {"EMI owns, EMI last", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			reset(t, nil)
			e := &emiTraceTool{name: "emi", emi: true, base: 0xE000_0000, trace: c.emiOwns}
			p := &emiTraceTool{name: "plain", trace: !c.emiOwns}
			order := []*emiTraceTool{e, p}
			if c.emiLast {
				order = []*emiTraceTool{p, e}
			}
			for _, x := range order {
				ompt.RegisterTool(x.name, x.start)
			}
			Start(fakeRuntime{1})
			clk := newTick(0)
			require.NoError(t, DeviceInitialize(0, "tick", clk))
			for i := range 3 {
				tracedRegion(0, uintptr(i+1), clk, false)
				c := TargetBegin(ompt.KindTargetUpdateNowait, 0, 0x99)
				done := make(chan struct{})
				go func() {
					defer close(done)
					c.End()
				}()
				<-done
			}
			owner := p
			if c.emiOwns {
				owner = e
			}
			require.Equal(t, 1, owner.l("ompt_flush_trace").(ompt.FlushTraceFunc)(owner.h), "flush")
			for _, x := range order {
				x.mu.Lock()
				assert.Empty(t, x.errs, "%s: get_target_info", x.name)
				x.mu.Unlock()
			}
			owner.mu.Lock()
			defer owner.mu.Unlock()
			require.Len(t, owner.records, 3*(7+2), "records")
			for i, r := range owner.records {
				assert.True(t, owner.ids[r.TargetID], "record %d: target_id %#x is none its callbacks saw", i, r.TargetID)
			}
		})
	}
}

// TestTraceIntoDirtyOddBuffers: buffers the tool hands back dirty (0xa5), of
// sizes that are no multiple of the record size, as unaligned slices
// (b[3:], b[5:]...), some smaller than one record, with native records
// among the OMPT ones: every record the tool reads back is one of the
// operations done, in order, with no byte left from the fill in the
// padding of an OMPT record or in the padding of a native one, and no
// record lost but those the too-small buffers cost.
func TestTraceIntoDirtyOddBuffers(t *testing.T) {
	zero := map[int32][][2]int{
		int32(ompt.CallbackTarget):       {{4, 8}, {32 + 12, 32 + 16}, {32 + 40, 104}},
		int32(ompt.CallbackTargetDataOp): {{4, 8}, {32 + 12, 32 + 16}, {32 + 28, 32 + 32}, {32 + 44, 32 + 48}, {32 + 72, 104}},
		int32(ompt.CallbackTargetSubmit): {{4, 8}, {32 + 24, 104}},
	}
	var (
		mu    sync.Mutex
		calls int
		dirty []string
		keep  [][]byte // the buffers, alive
	)
	sizes := []int{ompt.RecordOMPTSize - 1, 3*ompt.RecordOMPTSize + 13, 2*ompt.RecordOMPTSize + 7, 40, 5*ompt.RecordOMPTSize + 101, 1000}
	tt := &traceTool{native: ompt.NativeDataMotionExplicit}
	tt.request = func(int) []byte {
		mu.Lock()
		defer mu.Unlock()
		i := calls
		calls++
		off := 1 + i%7
		b := bytes.Repeat([]byte{0xa5}, off+sizes[i%len(sizes)])
		keep = append(keep, b)
		return b[off:]
	}
	tt.complete = func(dev int, b []byte, n, begin uint64) {
		l := tt.l[dev]
		advance := l("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
		typ := l("ompt_get_record_type").(ompt.GetRecordTypeFunc)
		mu.Lock()
		defer mu.Unlock()
		for cur, ok := begin, n > 0; ok; cur, ok = advance(tt.h[dev], b, n, cur) {
			switch typ(b, cur) {
			case ompt.RecordKindOMPT:
				rec := b[cur : cur+uint64(ompt.RecordOMPTSize)]
				ty := (*ompt.RecordOMPT)(unsafe.Pointer(&rec[0])).Type
				for _, s := range zero[ty] {
					if !bytes.Equal(rec[s[0]:s[1]], make([]byte, s[1]-s[0])) {
						dirty = append(dirty, fmt.Sprintf("OMPT record type %d at %d: [%d, %d) = % x", ty, cur, s[0], s[1], rec[s[0]:s[1]]))
					}
				}
			case ompt.RecordKindNative:
				h := (*omptlink.Header)(unsafe.Pointer(&b[cur]))
				body := b[cur+uint64(omptlink.HeaderSize) : cur+uint64(h.Size)]
				nr := int(unsafe.Sizeof(hostplugin.Record{}))
				if bytes.Contains(body[nr:], []byte{0xa5}) {
					dirty = append(dirty, fmt.Sprintf("native record at %d: padding % x", cur, body[nr:]))
				}
			}
		}
	}
	clks := withTrace(t, tt, 1)
	const N = 6
	for i := range N {
		tracedRegion(0, uintptr(i+1), clks[0], true)
		if i%2 == 0 {
			require.Equal(t, 1, tt.flush(0), "flush")
		}
	}
	require.Equal(t, 1, tt.stop(0), "stop")
	mu.Lock()
	assert.Empty(t, dirty, "bytes left from the fill")
	mu.Unlock()
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(N*(7+4)), written+lost, "written %d + lost %d", written, lost)
	lines, _ := tt.got()
	assert.Len(t, lines, int(written), "entries read back against written")
	for _, l := range lines {
		assert.NotContains(t, l, "invalid", "entries:\n%s", strings.Join(lines, "\n"))
	}
	checkTimes(t, tt)
}

// spanTiming is a queue timing with Span (device.SpanTiming): it counts
// which the runtime asked.
type spanTiming struct {
	begin, end int64
	teams      int
	times      *atomic.Int32
	spans      *atomic.Int32
}

func (s *spanTiming) Times() (int64, int64, device.Native, error) {
	s.times.Add(1)
	return s.begin, s.end, hostplugin.Record{Start: s.begin, End: s.end, Queue: 3}.Native("host kernel", 3, s.teams), nil
}
func (s *spanTiming) Span() (int64, int64, int, error) {
	s.spans.Add(1)
	return s.begin, s.end, s.teams, nil
}
func (s *spanTiming) Ready() bool { return true }

// TestSpanAskedOnlyWhereNoNativeIsWanted: native kernel records enabled on
// device 0 and not on device 1, then switched on for device 1 and off
// for device 0 mid-session: a device gets a native record for each launch
// done while its flag was on (never one where it was off), the granted
// teams are the timing's either way, and Span is asked only where no
// native record is wanted.
func TestSpanAskedOnlyWhereNoNativeIsWanted(t *testing.T) {
	tt := &traceTool{native: 0}
	withTrace(t, tt, 2)
	setN := func(dev int, on bool) {
		tt.entry(dev, "ompt_set_trace_native").(ompt.SetTraceNativeFunc)(tt.handle(dev), on, ompt.NativeKernelExecution)
	}
	setN(0, true)
	var times, spans atomic.Int32
	launch := func(dev int, teams int) {
		c := TargetBegin(ompt.KindTarget, dev, uintptr(0x100+dev))
		c.SubmitBegin(2)
		c.SubmitEnd()
		c.TraceTimed(&spanTiming{begin: 5e9, end: 6e9, teams: teams, times: &times, spans: &spans}, ompt.NativeKernelExecution, &device.Kernel{Name: "k"})
		c.FlushTrace()
		c.End()
	}
	launch(0, 11)
	launch(1, 12)
	assert.Equal(t, int32(1), times.Load(), "Times asked (device 0 wants native)")
	assert.Equal(t, int32(1), spans.Load(), "Span asked (device 1 wants none)")
	setN(1, true)
	setN(0, false)
	launch(0, 13)
	launch(1, 14)
	assert.Equal(t, int32(2), times.Load(), "Times asked after the switch")
	assert.Equal(t, int32(2), spans.Load(), "Span asked after the switch")
	tt.flush(0)
	tt.flush(1)
	lines, _ := tt.got()
	var got []string
	for _, l := range lines {
		if !strings.Contains(l, "rec target") {
			got = append(got, l[:4]+" "+strings.Fields(l)[1]+" "+strings.Fields(l)[2])
		}
	}
	// device order in lines depends on flush order: dev0's first
	assert.ElementsMatch(t, []string{
		"dev0 rec kernel", "dev0 native", "dev1 rec kernel", "dev0 rec kernel", "dev1 rec kernel", "dev1 native",
	}, normalizeHop(got), "entries:\n%s", strings.Join(lines, "\n"))
	tt.mu.Lock()
	defer tt.mu.Unlock()
	var granted []uint32
	for _, r := range tt.raw {
		if k := r.Kernel(); k != nil {
			granted = append(granted, k.GrantedNumTeams)
		}
	}
	assert.ElementsMatch(t, []uint32{11, 12, 13, 14}, granted, "granted teams")
}

func normalizeHop(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		if strings.Contains(s, "native") {
			out[i] = s[:strings.Index(s, "native")+len("native")]
		} else {
			out[i] = s
		}
	}
	return out
}

// TestRecordThreadIDsOfRoutinesAndNowait: records of device memory routines
// run on several locked goroutines, and of nowait constructs begun on one
// and run on another, carry the OS thread id of the thread that ran the
// events (gettid there).
func TestRecordThreadIDsOfRoutinesAndNowait(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	var (
		mu2        sync.Mutex
		nowaitTIDs = map[uintptr][]uint64{} // per nowait code pointer, the task threads in order
	)
	const G = 6
	var wg sync.WaitGroup
	tids := make([]uint64, G)
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tids[g] = gettid()
			for range 20 {
				r := RoutineBegin(uintptr(0x1000 + g))
				tracedCopy(r, ompt.DataOpTransferToDevice, 0, 8, clks[0])
				r.End()
				// a nowait construct begun here, run on a fresh goroutine
				c := TargetBegin(ompt.KindTargetEnterDataNowait, 0, uintptr(0x2000+g))
				res := make(chan uint64)
				go func() {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					tracedCopy(c, ompt.DataOpTransferToDeviceAsync, 0, 8, clks[0])
					c.End()
					res <- gettid()
				}()
				tid := <-res
				mu2.Lock()
				nowaitTIDs[uintptr(0x2000+g)] = append(nowaitTIDs[uintptr(0x2000+g)], tid)
				mu2.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, tt.flush(0), "flush")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	seen := map[uintptr]int{}
	for i, r := range tt.raw {
		var code uintptr
		switch {
		case r.DataOp() != nil:
			code = r.DataOp().CodePtr
		case r.Target() != nil:
			code = r.Target().CodePtr
		}
		switch {
		case code >= 0x2000:
			// records of one nowait construct: begin, op, end
			k := seen[code] / 3
			seen[code]++
			mu2.Lock()
			want := nowaitTIDs[code][k]
			mu2.Unlock()
			assert.Equal(t, want, r.ThreadID, "record %d (nowait construct %d of goroutine %d): thread (encountering thread %#x, all task threads %x)", i, k, code-0x2000, tids[code-0x2000], nowaitTIDs[code])
		case code >= 0x1000:
			assert.Equal(t, tids[code-0x1000], r.ThreadID, "record %d (routine of goroutine %d): thread", i, code-0x1000)
		}
	}
	assert.Len(t, tt.raw, G*20*4, "records")
}

// TestTraceFlushStopRestartUnderLoad: constructs on four goroutines and two
// devices (natives on one), with dirty, odd-sized, unaligned buffers;
// another goroutine flushes both devices and stops and restarts device 1's
// trace. Every record the tool reads back is whole (known type, its
// target's records in order begin, ops, end within one session), none is
// delivered twice, and written + lost covers every record made while
// tracing was on (the delivered count equals written).
func TestTraceFlushStopRestartUnderLoad(t *testing.T) {
	var (
		bmu  sync.Mutex
		nreq int
	)
	tt := &traceTool{r: &recorder{emi: true}, native: ompt.NativeDataMotionExplicit}
	tt.request = func(int) []byte {
		bmu.Lock()
		defer bmu.Unlock()
		nreq++
		off := 1 + nreq%7
		b := bytes.Repeat([]byte{0x5a}, off+3*ompt.RecordOMPTSize+nreq%97)
		return b[off:]
	}
	clks := withTrace(t, tt, 2)
	const G, N = 4, 60
	wg := tracedRegions(G, N, clks, func(g int) bool { return g%2 == 0 })
	stop := make(chan struct{})
	var fw sync.WaitGroup
	fw.Add(1)
	var restarts int
	go func() {
		defer fw.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tt.flush(0)
			if i%5 == 0 {
				if tt.stop(1) == 1 {
					restarts++
					tt.start(1)
				}
			} else {
				tt.flush(1)
			}
		}
	}()
	wg.Wait()
	close(stop)
	fw.Wait()
	require.Equal(t, 1, tt.stop(0), "stop 0")
	tt.stop(1)
	w0, _ := TraceStats(0)
	w1, _ := TraceStats(1)
	lines, _ := tt.got()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	assert.Equal(t, int(w0+w1), len(lines), "entries delivered against written (%d restarts)", restarts)
	for _, l := range lines {
		if strings.Contains(l, "invalid") || strings.Contains(l, "rec type") {
			t.Fatalf("bad entry %q", l)
		}
	}
	seenOp := map[uint64]bool{}
	begins := map[uint64]int{}
	for i, r := range tt.raw {
		if hop, ok := recOp(&r); ok {
			assert.False(t, seenOp[hop], "record %d: host_op_id %#x delivered twice", i, hop)
			seenOp[hop] = true
			continue
		}
		ep := ompt.Endpoint(r.Target().Endpoint)
		if ep == ompt.ScopeBegin {
			assert.Zero(t, begins[r.TargetID], "record %d: target %#x begun twice", i, r.TargetID)
			begins[r.TargetID]++
		} else {
			begins[r.TargetID]-- // an end without a begin may come when a stop cut the begin: counted lost
		}
	}
	_, l0 := TraceStats(0)
	assert.Zero(t, l0, "device 0 (never stopped, buffers always large enough) lost records")
	w := w0
	assert.Equal(t, uint64(G/2*N*(7+4)), w, "device 0 records written")
}

// TestRecordIDsWithEMIRegisteredBeforeANowaitTaskRuns: a nowait construct
// begun while the tool had only the non-EMI target callback, its task run
// after the tool registered target_emi (writing its own id): the
// construct's events and records stay with the dispatcher it began with,
// so its records carry the id its non-EMI callbacks got; the next
// construct's records carry the tool's own.
func TestRecordIDsWithEMIRegisteredBeforeANowaitTaskRuns(t *testing.T) {
	var (
		hmu   sync.Mutex
		plain []uint64
		own   []uint64
	)
	r := &recorder{extra: func(r *recorder) {
		r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, _ ompt.Endpoint, _ int, _ *ompt.Data, id uint64, _ uintptr) {
			hmu.Lock()
			plain = append(plain, id)
			hmu.Unlock()
		}))
	}}
	tt := &traceTool{r: r}
	clks := withTrace(t, tt, 1)
	run := func(code uintptr) {
		c := TargetBegin(ompt.KindTargetNowait, 0, code)
		if code == 1 {
			set := r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			require.Equal(t, ompt.SetAlways, set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _, _, td *ompt.Data, _ uintptr) {
				if ep == ompt.ScopeBegin {
					td.Value = 0x7777_0000 + uint64(len(own))
				}
				hmu.Lock()
				own = append(own, td.Value)
				hmu.Unlock()
			})))
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.SubmitBegin(1)
			b, e := clks[0].interval()
			c.SubmitEnd()
			o := c.Op()
			o.Record(b, e, 1, nil)
			c.End()
		}()
		<-done
	}
	run(1)
	run(2)
	require.Equal(t, 1, tt.flush(0), "flush")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	hmu.Lock()
	defer hmu.Unlock()
	require.Len(t, tt.raw, 6, "records")
	require.Len(t, plain, 2, "non-EMI target callbacks (first construct)")
	require.Len(t, own, 2, "target_emi callbacks (second construct)")
	for i := range 3 {
		assert.Equal(t, plain[0], tt.raw[i].TargetID, "first construct record %d", i)
		assert.Equal(t, own[0], tt.raw[3+i].TargetID, "second construct record %d", i)
	}
}
