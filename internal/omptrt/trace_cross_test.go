package omptrt

import (
	"runtime"
	"sync"
	"testing"

	"github.com/gompt/gompt/ompt"
)

// TestFlushAnotherDeviceFromBufferCallback: a tool's buffer_complete
// callback of device 0 may flush device 1 (one delivery goroutine waits
// for another, no cycle): flush_trace returns 1 with device 1's records
// delivered; flushing its own device from there returns 0.
func TestFlushAnotherDeviceFromBufferCallback(t *testing.T) {
	var once sync.Once
	var other, own, dev1Lines int
	tt := &traceTool{}
	tt.complete = func(dev int, b []byte, bytes, begin uint64) {
		if dev != 0 || bytes == 0 {
			return
		}
		once.Do(func() {
			other = tt.flush(1)
			lines, _ := tt.got()
			for _, l := range lines {
				if len(l) > 4 && l[:4] == "dev1" {
					dev1Lines++
				}
			}
			own = tt.flush(0)
		})
	}
	clks := withTrace(t, tt, 2)
	tracedRegion(1, 1, clks[1], false)
	tracedRegion(0, 1, clks[0], false)
	if tt.flush(0) != 1 {
		t.Fatal("flush_trace(device 0) failed")
	}
	if other != 1 || dev1Lines == 0 {
		t.Errorf("flush_trace(device 1) from device 0's buffer_complete = %d with %d device 1 records delivered; want 1 and the records", other, dev1Lines)
	}
	if own != 0 {
		t.Errorf("flush_trace(device 0) from device 0's own buffer_complete = %d, want 0", own)
	}
}

// TestAbstractOfAKeptBuffer: a tool that keeps the buffers handed back
// to it (owned) and reads them later, after buffer_complete returned,
// still gets each native record's abstract from get_record_abstract.
func TestAbstractOfAKeptBuffer(t *testing.T) {
	type kept struct {
		b            []byte
		bytes, begin uint64
	}
	var mu sync.Mutex
	var bufs []kept
	tt := &traceTool{native: ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution}
	tt.complete = func(dev int, b []byte, bytes, begin uint64) {
		mu.Lock()
		bufs = append(bufs, kept{b, bytes, begin})
		mu.Unlock()
	}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], true)
	if tt.stop(0) != 1 {
		t.Fatal("stop_trace failed")
	}
	l := tt.l[0]
	typ := l("ompt_get_record_type").(ompt.GetRecordTypeFunc)
	getNative := l("ompt_get_record_native").(ompt.GetRecordNativeFunc)
	abstract := l("ompt_get_record_abstract").(ompt.GetRecordAbstractFunc)
	natives := 0
	mu.Lock()
	defer mu.Unlock()
	for _, k := range bufs {
		for cur, kind := range ompt.Records(k.b, k.bytes, k.begin) {
			if kind != ompt.RecordKindNative {
				continue
			}
			natives++
			if typ(k.b, cur) != ompt.RecordKindNative {
				t.Errorf("get_record_type at %d of a kept buffer: %v", cur, typ(k.b, cur))
			}
			p, _ := getNative(k.b, cur)
			a := abstract(p)
			if p == nil || a == nil || a.Type == "" || a.StartTime == 0 || a.EndTime < a.StartTime {
				t.Errorf("native record at %d of a kept buffer: pointer %v, abstract %+v; want the record's abstract", cur, p, a)
			}
		}
	}
	if natives == 0 {
		t.Fatal("no native record delivered")
	}
}

// TestRecordThreadAfterScopeReuse: two traced constructs, one after the
// other, on two OS threads (the second reuses the first's scope): each
// construct's records carry the id of the thread that ran it.
func TestRecordThreadAfterScopeReuse(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	firstDone, release := make(chan uint64), make(chan struct{})
	go func() {
		runtime.LockOSThread() // kept until release: the second runs on another thread
		defer runtime.UnlockOSThread()
		tracedRegion(0, 1, clks[0], false)
		firstDone <- threadID()
		<-release
	}()
	tidA := <-firstDone
	secondDone := make(chan uint64)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tracedRegion(0, 2, clks[0], false)
		secondDone <- threadID()
	}()
	tidB := <-secondDone
	close(release)
	if tidA == tidB {
		t.Fatalf("both constructs ran on thread %d", tidA)
	}
	if tt.flush(0) != 1 {
		t.Fatal("flush failed")
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if len(tt.raw) == 0 {
		t.Fatal("no records")
	}
	for i, r := range tt.raw {
		code := uintptr(0)
		switch {
		case r.Target() != nil:
			code = r.Target().CodePtr
		case r.DataOp() != nil:
			code = r.DataOp().CodePtr
		default:
			continue
		}
		want := map[uintptr]uint64{1: tidA, 2: tidB}[code]
		if r.ThreadID != want {
			t.Errorf("record %d (construct at code %d): thread_id %d, want %d (first construct's thread %d, second's %d)", i, code, r.ThreadID, want, tidA, tidB)
		}
	}
}

// TestNoUnpairedEndRecord: a construct that began before its device's
// trace started (so its begin was not recorded) gives no target end
// record either, also when its scope was used by an earlier construct.
func TestNoUnpairedEndRecord(t *testing.T) {
	tt := &traceTool{noStart: true}
	withTrace(t, tt, 1)
	region(ompt.KindTarget, 0, 1) // not traced; its scope is reused below
	c := TargetBegin(ompt.KindTarget, 0, 2)
	if tt.start(0) != 1 {
		t.Fatal("start_trace failed")
	}
	c.End()
	region(ompt.KindTarget, 0, 3) // traced whole
	if tt.flush(0) != 1 {
		t.Fatal("flush failed")
	}
	lines, _ := tt.got()
	diffSeq(t, lines, []string{
		"dev0 rec target ompt_target begin dev=0 target_id=#1 code=0x3",
		"dev0 rec target ompt_target end dev=0 target_id=#1 code=0x3",
	})
}

// TestTargetEndRecordTime: a construct's end record carries the device
// time at its end, after its begin record's; when the clock cannot be
// read at the end, the begin's time (never 0, never earlier).
func TestTargetEndRecordTime(t *testing.T) {
	tt, clk := withFlakyTrace(t)
	c := TargetBegin(ompt.KindTarget, 0, 1)
	clk.t.Add(5e6) // 5 ms pass on the device
	c.End()
	c = TargetBegin(ompt.KindTarget, 0, 2)
	clk.fail.Store(1) // the end's clock read fails
	c.End()
	if tt.flush(0) != 1 {
		t.Fatal("flush failed")
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if len(tt.raw) != 4 {
		t.Fatalf("%d records, want 4 (two begin/end pairs)", len(tt.raw))
	}
	if b, e := tt.raw[0].Time, tt.raw[1].Time; e < b+5e6 {
		t.Errorf("first construct: begin record at %d, end record at %d; want the end at least 5 ms later", b, e)
	}
	if b, e := tt.raw[2].Time, tt.raw[3].Time; e != b {
		t.Errorf("second construct (clock failed at its end): begin record at %d, end record at %d; want the begin's time", b, e)
	}
}

// TestUnownedTraceCarriesRuntimeIDs: records of a session started through
// GetDeviceInfo's lookup (no tool's) carry the runtime's target_id, the
// one non-EMI target callbacks get, not the value an EMI tool wrote into
// its own target_data.
func TestUnownedTraceCarriesRuntimeIDs(t *testing.T) {
	reset(t, nil)
	emi := &recorder{emi: true} // first: index 0 of the dispatcher
	ompt.RegisterTool("emi", emi.start)
	var mu sync.Mutex
	var ids []uint64
	ompt.RegisterTool("plain", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTarget, ompt.TargetCallback(
				func(_ ompt.TargetKind, e ompt.Endpoint, _ int, _ *ompt.Data, id uint64, _ uintptr) {
					mu.Lock()
					ids = append(ids, id)
					mu.Unlock()
				}))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	if err := DeviceInitialize(0, "tick", newTick(0)); err != nil {
		t.Fatal(err)
	}
	h, l, _ := GetDeviceInfo(0)
	var recs []ompt.RecordOMPT
	done := func(_ int, b []byte, bytes, begin uint64, _ bool) {
		for cur := range ompt.Records(b, bytes, begin) {
			if r := ompt.RecordAt(b, cur); r != nil {
				mu.Lock()
				recs = append(recs, *r)
				mu.Unlock()
			}
		}
	}
	l("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, ompt.CallbackTarget)
	if l("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return make([]byte, 4096) }, done) != 1 {
		t.Fatal("start_trace failed")
	}
	region(ompt.KindTarget, 0, 1)
	if l("ompt_stop_trace").(ompt.StopTraceFunc)(h) != 1 {
		t.Fatal("stop_trace failed")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 2 || len(ids) != 2 {
		t.Fatalf("%d target records and %d target callbacks, want 2 of each", len(recs), len(ids))
	}
	for i, r := range recs {
		if r.TargetID != ids[0] || r.Target().TargetID != ids[0] {
			t.Errorf("record %d: target_id %d (body %d), want the runtime's %d", i, r.TargetID, r.Target().TargetID, ids[0])
		}
	}
}
