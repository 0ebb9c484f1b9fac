package omptrt

import (
	"runtime"
	"sync"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.Equal(t, 1, tt.flush(0), "flush_trace(device 0)")
	assert.Equal(t, 1, other, "flush_trace(device 1) from device 0's buffer_complete")
	assert.NotZero(t, dev1Lines, "device 1 records delivered by flush_trace(device 1) from device 0's buffer_complete")
	assert.Zero(t, own, "flush_trace(device 0) from device 0's own buffer_complete")
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
	require.Equal(t, 1, tt.stop(0), "stop_trace")
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
			assert.Equal(t, ompt.RecordKindNative, typ(k.b, cur), "get_record_type at %d of a kept buffer", cur)
			p, _ := getNative(k.b, cur)
			a := abstract(p)
			assert.NotNil(t, p, "native record at %d of a kept buffer: pointer", cur)
			if assert.NotNil(t, a, "native record at %d of a kept buffer: want the record's abstract", cur) {
				assert.NotEmpty(t, a.Type, "native record at %d of a kept buffer: abstract %+v", cur, a)
				assert.NotZero(t, a.StartTime, "native record at %d of a kept buffer: abstract %+v", cur, a)
				assert.GreaterOrEqual(t, a.EndTime, a.StartTime, "native record at %d of a kept buffer: abstract %+v", cur, a)
			}
		}
	}
	require.NotZero(t, natives, "no native record delivered")
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
	require.NotEqual(t, tidA, tidB, "both constructs ran on one thread")
	require.Equal(t, 1, tt.flush(0), "flush")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.NotEmpty(t, tt.raw, "no records")
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
		assert.Equal(t, want, r.ThreadID, "record %d (construct at code %d): thread_id (first construct's thread %d, second's %d)", i, code, tidA, tidB)
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
	require.Equal(t, 1, tt.start(0), "start_trace")
	c.End()
	region(ompt.KindTarget, 0, 3) // traced whole
	require.Equal(t, 1, tt.flush(0), "flush")
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
	require.Equal(t, 1, tt.flush(0), "flush")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.Len(t, tt.raw, 4, "records: want two begin/end pairs")
	assert.GreaterOrEqual(t, tt.raw[1].Time, tt.raw[0].Time+5e6, "first construct: begin record at %d; want the end at least 5 ms later", tt.raw[0].Time)
	assert.Equal(t, tt.raw[2].Time, tt.raw[3].Time, "second construct (clock failed at its end): the end record's time; want the begin's")
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
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
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
	require.Equal(t, 1, l("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return make([]byte, 4096) }, done), "start_trace")
	region(ompt.KindTarget, 0, 1)
	require.Equal(t, 1, l("ompt_stop_trace").(ompt.StopTraceFunc)(h), "stop_trace")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, recs, 2, "target records")
	require.Len(t, ids, 2, "target callbacks")
	for i, r := range recs {
		assert.Equal(t, ids[0], r.TargetID, "record %d: target_id, want the runtime's", i)
		if tg := r.Target(); assert.NotNil(t, tg, "record %d: a target record", i) {
			assert.Equal(t, ids[0], tg.TargetID, "record %d: the body's target_id, want the runtime's", i)
		}
	}
}
