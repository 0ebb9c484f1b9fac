package omptrt

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withTool starts the interface with r as the only tool, one device
// initialized and one image loaded; it returns the module id.
func withTool(t *testing.T, r *recorder, n int) uint64 {
	t.Helper()
	reset(t, nil)
	ompt.RegisterTool("rec", r.start)
	Start(fakeRuntime{n})
	require.NoError(t, DeviceInitialize(0, "fake", &clockDevice{procs: 8, rate: 1}))
	mod, err := DeviceLoad(0, "", 0, 0, 1234, 0, 0)
	require.NoError(t, err)
	return mod
}

func infoSuffix(r *recorder, _ string) string {
	dev, tid, op, ok := r.lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)()
	if !ok {
		return " info=none"
	}
	st, _ := r.lookup("ompt_get_state").(ompt.GetStateFunc)()
	return fmt.Sprintf(" info=%d/%s/%s state=%#x", dev, r.name(tid), r.name(op), st)
}

func TestTargetRegionNonEMI(t *testing.T) {
	r := &recorder{plain: true, inside: infoSuffix}
	mod := withTool(t, r, 2)
	region(ompt.KindTarget, 0, 0x4242)
	require.NoError(t, DeviceUnload(0, mod))
	Finalize()
	diffSeq(t, r.got(), []string{
		"device_initialize dev=0 type=fake handle=true lookup=true doc=true info=none",
		`device_load dev=0 file="" bytes=1234 module=#1 info=none`,
		"target ompt_target begin dev=0 task=d1 target_id=#2 code=0x4242 info=0/#2/0 state=0x80",
		"data_op target_id=#2 host_op_id=#3 ompt_target_data_alloc src=0x1000/2 dest=0xd000/0 bytes=64 code=0x4242 info=0/#2/#3 state=0x81",
		"data_op target_id=#2 host_op_id=#4 ompt_target_data_transfer_to_device src=0x1000/2 dest=0xd000/0 bytes=64 code=0x4242 info=0/#2/#4 state=0x81",
		"map target_id=#2 host=[0x1000] dev=[0xd000] bytes=[64] flags=[3] code=0x4242 info=0/#2/0 state=0x80",
		"submit target_id=#2 host_op_id=#5 teams=4 info=0/#2/#5 state=0x80",
		"data_op target_id=#2 host_op_id=#6 ompt_target_data_transfer_from_device src=0xd000/0 dest=0x1000/2 bytes=64 code=0x4242 info=0/#2/#6 state=0x81",
		"data_op target_id=#2 host_op_id=#7 ompt_target_data_delete src=0xd000/0 dest=0x0/2 bytes=0 code=0x4242 info=0/#2/#7 state=0x81",
		"target ompt_target end dev=0 task=d1 target_id=#2 code=0x4242 info=0/#2/0 state=0x80",
		"device_unload dev=0 module=#1 info=none",
		"device_finalize dev=0 info=none",
		"finalize info=none",
	})
	assert.Equal(t, 1, r.finalized, "finalizer calls")
}

func TestTargetRegionEMI(t *testing.T) {
	r := &recorder{emi: true, inside: infoSuffix}
	withTool(t, r, 2)
	region(ompt.KindTarget, 0, 0x4242)
	// A second construct gets a new target id; with pooled scopes it may
	// reuse the same slots, which the standard allows.
	region(ompt.KindTargetUpdate, 0, 0x4343)
	got := r.got()
	want := []string{
		"device_initialize dev=0 type=fake handle=true lookup=true doc=true info=none",
		`device_load dev=0 file="" bytes=1234 module=#1 info=none`,
		"target_emi ompt_target begin dev=0 task=d1 ttd=nil td=d2(0xab02) code=0x4242 info=0/#2/0 state=0x80",
		"data_op_emi begin ttd=nil td=d2(0xab02) hop=h1(#3) ompt_target_data_alloc src=0x1000/2 dest=0x0/0 bytes=64 code=0x4242 info=0/#2/#3 state=0x81",
		"data_op_emi end ttd=nil td=d2(0xab02) hop=h1(#3) ompt_target_data_alloc src=0x1000/2 dest=0xd000/0 bytes=64 code=0x4242 info=0/#2/#3 state=0x81",
		"data_op_emi begin ttd=nil td=d2(0xab02) hop=h1(#4) ompt_target_data_transfer_to_device src=0x1000/2 dest=0xd000/0 bytes=64 code=0x4242 info=0/#2/#4 state=0x81",
		"data_op_emi end ttd=nil td=d2(0xab02) hop=h1(#4) ompt_target_data_transfer_to_device src=0x1000/2 dest=0xd000/0 bytes=64 code=0x4242 info=0/#2/#4 state=0x81",
		"map_emi td=d2(0xab02) host=[0x1000] dev=[0xd000] bytes=[64] flags=[3] code=0x4242 info=0/#2/0 state=0x80",
		"submit_emi begin td=d2(0xab02) hop=h1(#5) teams=4 info=0/#2/#5 state=0x80",
		"submit_emi end td=d2(0xab02) hop=h1(#5) teams=4 info=0/#2/#5 state=0x80",
		"data_op_emi begin ttd=nil td=d2(0xab02) hop=h1(#6) ompt_target_data_transfer_from_device src=0xd000/0 dest=0x1000/2 bytes=64 code=0x4242 info=0/#2/#6 state=0x81",
		"data_op_emi end ttd=nil td=d2(0xab02) hop=h1(#6) ompt_target_data_transfer_from_device src=0xd000/0 dest=0x1000/2 bytes=64 code=0x4242 info=0/#2/#6 state=0x81",
		"data_op_emi begin ttd=nil td=d2(0xab02) hop=h1(#7) ompt_target_data_delete src=0xd000/0 dest=0x0/2 bytes=0 code=0x4242 info=0/#2/#7 state=0x81",
		"data_op_emi end ttd=nil td=d2(0xab02) hop=h1(#7) ompt_target_data_delete src=0xd000/0 dest=0x0/2 bytes=0 code=0x4242 info=0/#2/#7 state=0x81",
		"target_emi ompt_target end dev=0 task=d1 ttd=nil td=d2(0xab02) code=0x4242 info=0/#2/0 state=0x80",
	}
	require.GreaterOrEqual(t, len(got), len(want), "events:\n%q", got)
	diffSeq(t, got[:len(want)], want)
	// The update construct: fresh target id, its own td value, update state.
	second := regexp.MustCompile(`td=d\d+`).ReplaceAllString(got[len(want)], "td=dN")
	assert.Equal(t, "target_emi ompt_target_update begin dev=0 task=d1 ttd=nil td=dN(0xab0f) code=0x4343 info=0/#8/0 state=0x82", second, "second construct's first event")
}

func TestBothFormsOnlyEMI(t *testing.T) {
	r := &recorder{emi: true, plain: true}
	withTool(t, r, 1)
	region(ompt.KindTarget, 0, 0x10)
	for _, ev := range r.got() {
		for _, plain := range []string{"target ", "data_op ", "submit ", "map "} {
			assert.False(t, strings.HasPrefix(ev, plain), "non-EMI event dispatched although the EMI form is registered: %s", ev)
		}
	}
	assert.Len(t, r.got(), 2+15-2, "events: want 15 (2 device + 13 EMI)")
}

func TestRoutineDataOps(t *testing.T) {
	r := &recorder{emi: true, inside: infoSuffix}
	withTool(t, r, 1)
	p := RoutineBegin(0x5000)
	p.DataOpBegin(ompt.DataOpAlloc, 0, ompt.InitialDevice, 0, 0, 32)
	p.DataOpEnd(0xd100)
	p.End()
	r.mu.Lock()
	r.names = nil // a new scope may or may not reuse the pooled slots
	r.mu.Unlock()
	p = RoutineBegin(0x5001)
	p.DataOpBegin(ompt.DataOpMemset, 0, ompt.InitialDevice, 0xd100, 0, 32)
	p.DataOpEnd(0xd100)
	p.End()
	diffSeq(t, r.got()[2:], []string{
		"data_op_emi begin ttd=nil td=d1(0x0) hop=h1(#2) ompt_target_data_alloc src=0x0/1 dest=0x0/0 bytes=32 code=0x5000 info=none",
		"data_op_emi end ttd=nil td=d1(0x0) hop=h1(#2) ompt_target_data_alloc src=0x0/1 dest=0xd100/0 bytes=32 code=0x5000 info=none",
		"data_op_emi begin ttd=nil td=d1(0x0) hop=h1(#1) ompt_target_data_memset src=0x0/1 dest=0xd100/0 bytes=32 code=0x5001 info=none",
		"data_op_emi end ttd=nil td=d1(0x0) hop=h1(#1) ompt_target_data_memset src=0x0/1 dest=0xd100/0 bytes=32 code=0x5001 info=none",
	})

	r2 := &recorder{plain: true}
	withTool(t, r2, 1)
	p = RoutineBegin(0x6000)
	p.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, 0, 0x2000, 1, 8) // device to device: both real
	p.DataOpEnd(0x2000)
	p.End()
	diffSeq(t, r2.got()[2:], []string{
		"data_op target_id=0 host_op_id=#2 ompt_target_data_transfer_to_device src=0x1000/0 dest=0x2000/1 bytes=8 code=0x6000",
	})
}

func TestNowaitTargetTaskData(t *testing.T) {
	r := &recorder{emi: true}
	withTool(t, r, 1)
	tg := TargetBegin(ompt.KindTargetNowait, 0, 0x77)
	done := make(chan bool)
	go func() { // the deferred target task runs on another goroutine
		tg.DataOpBegin(ompt.DataOpTransferToDeviceAsync, 0x1000, ompt.InitialDevice, 0xd000, 0, 16)
		tg.DataOpEnd(0xd000)
		tg.SubmitBegin(0)
		tg.SubmitEnd()
		tg.End()
		close(done)
	}()
	<-done
	diffSeq(t, r.got()[2:], []string{
		"target_emi ompt_target_nowait begin dev=0 task=d1 ttd=d2 td=d3(0xab02) code=0x77",
		"data_op_emi begin ttd=d2 td=d3(0xab02) hop=h1(#2) ompt_target_data_transfer_to_device_async src=0x1000/1 dest=0xd000/0 bytes=16 code=0x77",
		"data_op_emi end ttd=d2 td=d3(0xab02) hop=h1(#2) ompt_target_data_transfer_to_device_async src=0x1000/1 dest=0xd000/0 bytes=16 code=0x77",
		"submit_emi begin td=d3(0xab02) hop=h1(#3) teams=0",
		"submit_emi end td=d3(0xab02) hop=h1(#3) teams=0",
		"target_emi ompt_target_nowait end dev=0 task=d1 ttd=d2 td=d3(0xab02) code=0x77",
	})
}

// TestTargetInfoConcurrent runs constructs on many goroutines at once;
// inside every callback, ompt_get_target_info must name the construct of
// that callback, never another goroutine's.
func TestTargetInfoConcurrent(t *testing.T) {
	reset(t, nil)
	var bad sync.Map
	var lookup ompt.LookupFunc
	var seen sync.Map // every id seen, to check uniqueness
	check := func(tid, hop uint64) {
		_, itid, ihop, ok := lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)()
		if !ok || itid != tid || ihop != hop {
			bad.Store(fmt.Sprintf("event target_id=%d host_op_id=%d, get_target_info=%v %d %d", tid, hop, ok, itid, ihop), true)
		}
	}
	ompt.RegisterTool("info", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			lookup = l
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, e ompt.Endpoint, _ int, _ *ompt.Data, tid uint64, _ uintptr) {
				check(tid, 0)
				if e == ompt.ScopeBegin {
					if _, dup := seen.LoadOrStore(tid, true); dup {
						bad.Store(fmt.Sprintf("target_id %d reused", tid), true)
					}
				}
			}))
			set(ompt.CallbackTargetDataOp, ompt.TargetDataOpCallback(func(tid, hop uint64, _ ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
				check(tid, hop)
				if _, dup := seen.LoadOrStore(hop, true); dup {
					bad.Store(fmt.Sprintf("host_op_id %d reused", hop), true)
				}
			}))
			set(ompt.CallbackTargetSubmit, ompt.TargetSubmitCallback(func(tid, hop uint64, _ uint32) {
				check(tid, hop)
				if _, dup := seen.LoadOrStore(hop, true); dup {
					bad.Store(fmt.Sprintf("host_op_id %d reused", hop), true)
				}
			}))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for range 200 {
				region(ompt.KindTarget, 0, uintptr(0x100+g))
			}
		})
	}
	wg.Wait()
	var bads []any
	bad.Range(func(k, _ any) bool { bads = append(bads, k); return true })
	assert.Empty(t, bads, "what the callbacks found")
	n := 0
	seen.Range(func(any, any) bool { n++; return true })
	assert.Equal(t, 16*200*6, n, "distinct ids seen")
	_, _, _, ok := lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)()
	assert.False(t, ok, "get_target_info outside any construct answered ok")
}

func TestMultipleToolsOwnSlots(t *testing.T) {
	reset(t, nil)
	a := &recorder{emi: true}
	b := &recorder{emi: true}
	c := &recorder{plain: true}
	ompt.RegisterTool("a", a.start)
	ompt.RegisterTool("decline", func(int, string) *ompt.StartResult { return nil })
	ompt.RegisterTool("b", b.start)
	ompt.RegisterTool("c", c.start)
	Start(fakeRuntime{1})
	DeviceInitialize(0, "fake", &clockDevice{procs: 1, rate: 1})
	b.mu.Lock()
	b.events = append(b.events, "padding") // b writes a different td value than a
	b.mu.Unlock()
	var aTD, bTD *ompt.Data
	TargetBegin(ompt.KindTargetEnterData, 0, 0x9).End()
	for _, ev := range a.got() {
		if ev == "target_emi ompt_target_enter_data end dev=0 task=d1 ttd=nil td=d2(0xab01) code=0x9" {
			aTD = &ompt.Data{}
		}
	}
	for _, ev := range b.got() {
		if ev == "target_emi ompt_target_enter_data end dev=0 task=d1 ttd=nil td=d2(0xab02) code=0x9" {
			bTD = &ompt.Data{}
		}
	}
	assert.NotNil(t, aTD, "each tool must see its own target_data value at end:\na: %q", a.got())
	assert.NotNil(t, bTD, "each tool must see its own target_data value at end:\nb: %q", b.got())
	got := c.got()
	if assert.Len(t, got, 3, "non-EMI tool beside EMI tools: %q", got) {
		assert.Equal(t, "target ompt_target_enter_data begin dev=0 task=d1 target_id=#1 code=0x9", got[1], "non-EMI tool beside EMI tools")
	}
	Finalize()
	for name, r := range map[string]*recorder{"a": a, "b": b, "c": c} {
		assert.Equal(t, 1, r.finalized, "tool %s finalized", name)
	}
}

func TestNoToolZeroAlloc(t *testing.T) {
	reset(t, nil)
	Start(fakeRuntime{1})
	require.False(t, Enabled(), "Enabled with no tool")
	require.Nil(t, TargetBegin(ompt.KindTarget, 0, 1), "TargetBegin returned a scope with no tool")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { region(ompt.KindTarget, 0, 1) }), "no tool: allocations per construct")
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		p := RoutineBegin(1)
		p.DataOpBegin(ompt.DataOpAlloc, 0, -1, 0, 0, 8)
		p.DataOpEnd(1)
		p.End()
	}), "no tool: allocations per routine")
}

func TestToolDispatchZeroAlloc(t *testing.T) {
	// a tool that does nothing in its callbacks, to measure the runtime side
	reset(t, nil)
	ompt.RegisterTool("empty", emptyTool)
	Start(fakeRuntime{1})
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop objects on purpose")
	}
	if !fastGetg {
		t.Skip("no assembly getg on this architecture: the fallback allocates")
	}
	emptyRegion() // warm the pool
	assert.LessOrEqual(t, testing.AllocsPerRun(1000, emptyRegion), 0.01, "with a tool: allocations per construct, want 0")
}

// emptyRegion is an empty target construct with one copy: begin, data op,
// submit, end.
func emptyRegion() {
	t := TargetBegin(ompt.KindTarget, 0, 1)
	t.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
	t.DataOpEnd(0xd000)
	t.SubmitBegin(1)
	t.SubmitEnd()
	t.End()
}

// emptyTool registers every target callback (both forms) with empty bodies.
func emptyTool(int, string) *ompt.StartResult {
	return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
		set := l("ompt_set_callback").(ompt.SetCallbackFunc)
		set(ompt.CallbackTargetEMI, func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, *ompt.Data, *ompt.Data, uintptr) {})
		set(ompt.CallbackTargetDataOpEMI, func(ompt.Endpoint, *ompt.Data, *ompt.Data, *uint64, ompt.DataOpKind, uintptr, int, uintptr, int, uint64, uintptr) {
		})
		set(ompt.CallbackTargetSubmitEMI, func(ompt.Endpoint, *ompt.Data, *uint64, uint32) {})
		set(ompt.CallbackTargetMapEMI, func(*ompt.Data, []uintptr, []uintptr, []uint64, []uint32, uintptr) {})
		return 1
	}}
}

// A tool that registers no callback hears of nothing a construct does,
// and no device traces: constructs keep no scope (TargetBegin and
// RoutineBegin give nil, as with no tool, and the runtime skips the call
// site: Listening). Once it registers a callback, the constructs after
// it have scopes and events again.
func TestToolWithoutCallbacksConstructsKeepNoScope(t *testing.T) {
	reset(t, nil)
	var set ompt.SetCallbackFunc
	ompt.RegisterTool("quiet", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set = l("ompt_set_callback").(ompt.SetCallbackFunc)
			return 1
		}}
	})
	Start(fakeRuntime{1})
	require.True(t, Enabled(), "Enabled with a tool attached")
	assert.False(t, Listening(), "Listening with a tool of no callback")
	tg := TargetBegin(ompt.KindTarget, 0, 1)
	assert.Nil(t, tg, "TargetBegin's scope with a tool of no callback")
	tg.End()
	rt := RoutineBegin(1)
	assert.Nil(t, rt, "RoutineBegin's scope with a tool of no callback")
	rt.End()
	var ids []uint64
	require.NotNil(t, set, "ompt_set_callback")
	set(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, _ ompt.Endpoint, _ int, _ *ompt.Data, id uint64, _ uintptr) {
		ids = append(ids, id)
	}))
	assert.True(t, Listening(), "Listening once the tool registered target")
	region(ompt.KindTarget, 0, 1)
	require.Len(t, ids, 2, "target begin and end after the registration")
	assert.NotZero(t, ids[0], "target_id")
	assert.Equal(t, ids[0], ids[1], "one target_id for begin and end")
}
