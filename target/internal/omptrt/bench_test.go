package omptrt

import (
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/require"
)

// BenchmarkDispatchNoTool is the cost of one event with no tool: a
// TargetBegin (the one atomic load) and the nil-receiver End.
func BenchmarkDispatchNoTool(b *testing.B) {
	reset(b, nil)
	Start(fakeRuntime{1})
	b.ReportAllocs()
	for b.Loop() {
		t := TargetBegin(ompt.KindTarget, 0, 1)
		t.End()
	}
}

// BenchmarkEmptyTargetNoTool is an empty construct (target begin, submit
// begin/end, target end) with no tool.
func BenchmarkEmptyTargetNoTool(b *testing.B) {
	reset(b, nil)
	Start(fakeRuntime{1})
	b.ReportAllocs()
	for b.Loop() {
		emptyConstruct()
	}
}

// BenchmarkDispatchAllCallbacks is the same empty construct with a Go tool
// that registered every target callback (EMI forms, empty bodies).
func BenchmarkDispatchAllCallbacks(b *testing.B) {
	reset(b, nil)
	ompt.RegisterTool("empty", emptyTool)
	Start(fakeRuntime{1})
	b.ReportAllocs()
	for b.Loop() {
		emptyConstruct()
	}
}

// BenchmarkDispatchAllCallbacksNonEMI: as above, non-EMI forms.
func BenchmarkDispatchAllCallbacksNonEMI(b *testing.B) {
	reset(b, nil)
	ompt.RegisterTool("empty", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackTarget, func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64, uintptr) {})
			set(ompt.CallbackTargetDataOp, func(uint64, uint64, ompt.DataOpKind, uintptr, int, uintptr, int, uint64, uintptr) {})
			set(ompt.CallbackTargetSubmit, func(uint64, uint64, uint32) {})
			return 1
		}}
	})
	Start(fakeRuntime{1})
	b.ReportAllocs()
	for b.Loop() {
		emptyConstruct()
	}
}

// BenchmarkGetTargetInfo is one ompt_get_target_info call from inside a
// construct.
func BenchmarkGetTargetInfo(b *testing.B) {
	reset(b, nil)
	ompt.RegisterTool("empty", emptyTool)
	Start(fakeRuntime{1})
	t := TargetBegin(ompt.KindTarget, 0, 1)
	defer t.End()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, ok := getTargetInfo(); !ok { // not require.True: keep the loop's cost the check's
			require.Fail(b, "not in a construct")
		}
	}
}

func emptyConstruct() {
	t := TargetBegin(ompt.KindTarget, 0, 1)
	t.SubmitBegin(0)
	t.SubmitEnd()
	t.End()
}

// BenchmarkDispatchAllCallbacksParallel: the same construct begun by 4
// goroutines per CPU at once, each taking a Target from the shared table.
func BenchmarkDispatchAllCallbacksParallel(b *testing.B) {
	reset(b, nil)
	ompt.RegisterTool("empty", emptyTool)
	Start(fakeRuntime{1})
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			emptyConstruct()
		}
	})
}

// BenchmarkCallbackDispatch: one device memory routine with one data op,
// so two callback dispatches (data_op_emi begin and end) and the
// routine's scope, under a Go tool that registered every target callback.
func BenchmarkCallbackDispatch(b *testing.B) {
	reset(b, nil)
	ompt.RegisterTool("empty", emptyTool)
	Start(fakeRuntime{1})
	b.ReportAllocs()
	for b.Loop() {
		r := RoutineBegin(1)
		r.DataOpBegin(ompt.DataOpTransferToDevice, 1, ompt.InitialDevice, 2, 0, 8)
		r.DataOpEnd(2)
		r.End()
	}
}
