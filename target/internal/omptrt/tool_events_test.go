package omptrt

import (
	"os"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLastToolFinalizedTurnsTheInterfaceOff: once the only tool called
// ompt_finalize_tool, the runtime sees no tool: Enabled is false, the
// state is inactive, and TargetBegin returns nil (nothing to dispatch).
func TestLastToolFinalizedTurnsTheInterfaceOff(t *testing.T) {
	r := &recorder{plain: true}
	withTool(t, r, 1)
	require.True(t, Enabled(), "Enabled with a tool")
	require.Equal(t, StateActive, CurrentState(), "state with a tool")
	r.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	assert.False(t, Enabled(), "Enabled after the only tool finalized itself")
	assert.Equal(t, StateInactive, CurrentState(), "state after the only tool finalized itself")
	c := TargetBegin(ompt.KindTarget, 0, 1)
	assert.Nil(t, c, "TargetBegin after the only tool finalized itself")
	c.End()
}

// TestNowaitConstructLeavesTheEncounteringGoroutine: after TargetBegin of
// a nowait construct, the goroutine that encountered it is in no target
// construct (ompt_get_target_info answers false there); the goroutine
// that runs the deferred task is, from the task's first event.
func TestNowaitConstructLeavesTheEncounteringGoroutine(t *testing.T) {
	r := &recorder{emi: true}
	withTool(t, r, 1)
	info := r.lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)
	c := TargetBegin(ompt.KindTargetNowait, 0, 0x77)
	require.NotNil(t, c, "TargetBegin")
	_, _, _, ok := info()
	assert.False(t, ok, "get_target_info on the encountering goroutine after a nowait TargetBegin")
	type answer struct {
		ok bool
		id uint64
	}
	got := make(chan answer, 1)
	go func() {
		c.DataOpBegin(ompt.DataOpTransferToDeviceAsync, 0x1000, ompt.InitialDevice, 0xd000, 0, 16)
		_, id, _, ok := info()
		c.DataOpEnd(0xd000)
		c.End()
		got <- answer{ok, id}
	}()
	a := <-got
	assert.True(t, a.ok, "get_target_info on the goroutine running the deferred task")
	assert.NotZero(t, a.id, "target_id on the goroutine running the deferred task")
	_, _, _, ok = info()
	assert.False(t, ok, "get_target_info on the encountering goroutine after the construct ended")
}

// TestOnlyToolDecliningIsLogged: when the one tool found declines in its
// initializer, the OMP_TOOL_VERBOSE_INIT log says the interface is
// inactive.
func TestOnlyToolDecliningIsLogged(t *testing.T) {
	log := t.TempDir() + "/v.log"
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": log})
	ompt.RegisterTool("shy", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int { return 0 }}
	})
	Start(fakeRuntime{1})
	assert.False(t, Enabled(), "Enabled after the only tool declined")
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(b), "No tool left after initialize: OMPT interface inactive.", "verbose log")
}

// TestAbstractOfADamagedNativeHeader: get_record_abstract on a native
// record whose type index names no type the runtime made (a tool's copy
// with a damaged header) does not panic: the type reads "native".
func TestAbstractOfADamagedNativeHeader(t *testing.T) {
	reset(t, nil)
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	_, l, _ := GetDeviceInfo(0)
	abstract := l("ompt_get_record_abstract").(ompt.GetRecordAbstractFunc)
	internNative("a name the runtime made") // names are made lazily: at least one
	names := 0
	if p := nativeNames.Load(); p != nil {
		names = len(*p)
	}
	for _, idx := range []uint32{uint32(names), uint32(names) + 1, ^uint32(0)} {
		buf := make([]uint64, (ompt.NativeHeaderSize+8)/8)
		h := (*omptlink.Header)(unsafe.Pointer(&buf[0]))
		*h = omptlink.Header{Marker: ompt.NativeMarker, TypeIdx: idx, Class: int32(ompt.NativeRecordEvent), Start: 1, End: 2, HWID: 3, Size: uint32(ompt.NativeHeaderSize + 8)}
		var a *ompt.RecordAbstract
		require.NotPanics(t, func() { a = abstract(unsafe.Add(unsafe.Pointer(&buf[0]), ompt.NativeHeaderSize)) }, "type index %d of %d names", idx, names)
		if assert.NotNil(t, a, "type index %d", idx) {
			assert.Equal(t, "native", a.Type, "type index %d of %d names", idx, names)
			assert.Equal(t, uint64(3), a.HWID, "hwid")
		}
	}
}

// TestDeviceLoadErrorsReturnNoModule: a DeviceLoad that fails returns
// module id 0 (no module) beside its error.
func TestDeviceLoadErrorsReturnNoModule(t *testing.T) {
	reset(t, nil)
	mod, err := DeviceLoad(3, "a.out", 0, 0, 10, 0, 0)
	assert.ErrorContains(t, err, "not initialized", "DeviceLoad on a device never initialized")
	assert.Zero(t, mod, "module id beside the error")
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	mod, err = DeviceLoad(0, "a.out", 0, 0, 0, 0, 0)
	assert.ErrorContains(t, err, "0 bytes", "DeviceLoad of an empty image")
	assert.Zero(t, mod, "module id beside the error")
}

// TestDependencesCallback: a tool that registered the dependences
// callback gets a construct's depend items with the construct's
// target_task_data slot; a construct with no depend items makes no call;
// a tool whose dependences callback panics is detached (named on stderr)
// and the construct goes on for the other tools.
func TestDependencesCallback(t *testing.T) {
	warn := reset(t, nil)
	type call struct {
		data *ompt.Data
		deps []ompt.Dependence
	}
	var got []call
	var crashes int
	for _, name := range []string{"deps", "crashy"} {
		ompt.RegisterTool(name, func(int, string) *ompt.StartResult {
			return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
				set := l("ompt_set_callback").(ompt.SetCallbackFunc)
				set(ompt.CallbackDependences, ompt.DependencesCallback(func(d *ompt.Data, deps []ompt.Dependence) {
					if name == "crashy" {
						crashes++
						panic("deps boom")
					}
					got = append(got, call{d, append([]ompt.Dependence(nil), deps...)})
				}))
				return 1
			}}
		})
	}
	Start(fakeRuntime{1})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	deps := []ompt.Dependence{{Addr: 0x1000, Type: ompt.DependenceIn}, {Addr: 0x2000, Type: ompt.DependenceOut}}
	for i := range 2 {
		c := TargetBegin(ompt.KindTargetNowait, 0, 0x10)
		require.True(t, c.WantsDependences(), "construct %d: WantsDependences with a dependences tool", i)
		assert.NotPanics(t, func() { c.Dependences(deps) }, "construct %d: Dependences", i)
		c.Dependences(nil)
		c.End()
	}
	require.Len(t, got, 2, "dependences calls: one per construct with depend items")
	for i, g := range got {
		assert.Equal(t, deps, g.deps, "call %d: depend items", i)
		assert.NotNil(t, g.data, "call %d: target_task_data", i)
	}
	assert.Equal(t, 1, crashes, "calls to the tool whose callback panicked")
	assert.Contains(t, warn.String(), `OMPT tool "crashy": a callback panicked: deps boom; the tool is detached`, "stderr")
}

// TestDeviceLoadCallbackPanics: a tool whose device_load callback panics
// is detached (named on stderr); DeviceLoad still returns the module id,
// and the tool gets no device_unload.
func TestDeviceLoadCallbackPanics(t *testing.T) {
	warn := reset(t, nil)
	var loads, unloads int
	ompt.RegisterTool("crashy", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackDeviceLoad, ompt.DeviceLoadCallback(func(int, string, int64, uintptr, uint64, uintptr, uintptr, uint64) {
				loads++
				panic("load boom")
			}))
			set(ompt.CallbackDeviceUnload, ompt.DeviceUnloadCallback(func(int, uint64) { unloads++ }))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	var mod uint64
	var err error
	require.NotPanics(t, func() { mod, err = DeviceLoad(0, "a.out", 0, 0, 10, 0, 0) }, "DeviceLoad with a panicking device_load")
	assert.NoError(t, err, "DeviceLoad")
	assert.NotZero(t, mod, "module id")
	assert.NoError(t, DeviceUnload(0, mod), "DeviceUnload")
	assert.Equal(t, 1, loads, "device_load calls")
	assert.Zero(t, unloads, "device_unload calls to the detached tool")
	assert.Contains(t, warn.String(), `OMPT tool "crashy": a callback panicked: load boom; the tool is detached`, "stderr")
}

// TestTraceStatsOfAnUnknownDevice: TraceStats of a device never
// initialized is 0 written, 0 lost.
func TestTraceStatsOfAnUnknownDevice(t *testing.T) {
	reset(t, nil)
	written, lost := TraceStats(7)
	assert.Zero(t, written, "written")
	assert.Zero(t, lost, "lost")
}

// TestZeroTracedOpRecordsNothing: Record on the zero TracedOp (what Op
// returns when the device did not trace at the operation's end) writes
// no record, even while the device traces every record type and the
// native record's kind.
func TestZeroTracedOpRecordsNothing(t *testing.T) {
	tt := &traceTool{native: ompt.NativeDataMotionExplicit}
	clks := withTrace(t, tt, 1)
	var o TracedOp
	b, e := clks[0].interval()
	o.Record(b, e, 1, nil)
	o.Record(b, e, 1, &NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent, Type: "copy", Start: uint64(b), End: uint64(e)})
	require.Equal(t, 1, tt.flush(0), "flush")
	lines, _ := tt.got()
	assert.Empty(t, lines, "records")
	written, lost := TraceStats(0)
	assert.Zero(t, written+lost, "records written or lost")
}

// TestSetCallbackBeforeStartEnds: a tool whose initializer has returned
// is not active until every tool's initializer has run (Start publishes
// the tools at once). A registration it makes in between (here from the
// next tool's initializer, which it handed its set_callback) is refused
// with ompt_set_error, and nothing is registered: the tool gets no
// device_initialize. Once Start has ended the same call succeeds.
func TestSetCallbackBeforeStartEnds(t *testing.T) {
	reset(t, nil)
	var setA ompt.SetCallbackFunc
	var inits []int
	onInit := ompt.DeviceInitializeCallback(func(dev int, _ string, _ *ompt.DeviceHandle, _ ompt.LookupFunc, _ string) {
		inits = append(inits, dev)
	})
	ompt.RegisterTool("a", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			setA = l("ompt_set_callback").(ompt.SetCallbackFunc)
			return 1
		}}
	})
	var inWindow ompt.SetResult
	ompt.RegisterTool("b", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int {
			require.NotNil(t, setA, "tool a initialized first")
			inWindow = setA(ompt.CallbackDeviceInitialize, onInit)
			return 1
		}}
	})
	Start(fakeRuntime{2})
	assert.Equal(t, ompt.SetError, inWindow, "tool a's set_callback after its initializer returned, before Start ended")
	require.NoError(t, DeviceInitialize(0, "fake", &clockDevice{procs: 1, rate: 1}))
	assert.Empty(t, inits, "device_initialize dispatched to a registration that was refused")
	assert.Equal(t, ompt.SetAlways, setA(ompt.CallbackDeviceInitialize, onInit), "tool a's set_callback once Start ended")
	require.NoError(t, DeviceInitialize(1, "fake", &clockDevice{procs: 1, rate: 1}))
	assert.Equal(t, []int{1}, inits, "devices whose device_initialize tool a got")
}
