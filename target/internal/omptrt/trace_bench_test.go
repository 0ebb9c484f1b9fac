package omptrt

import (
	"testing"

	hostplugin "github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/require"
)

// benchTracing starts a Go tool that registered every target callback
// (empty bodies) and, with on, traces every record type on device 0 into
// 1 MiB buffers that it recycles.
func benchTracing(b *testing.B, on bool, native uint32) *tickDevice {
	reset(b, nil)
	ompt.RegisterTool("empty", emptyTool)
	Start(fakeRuntime{1})
	clk := newTick(ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution)
	require.NoError(b, DeviceInitialize(0, "tick", clk))
	if on {
		h, l, _ := GetDeviceInfo(0)
		l("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
		if native != 0 {
			l("ompt_set_trace_native").(ompt.SetTraceNativeFunc)(h, true, native)
		}
		free := make(chan []byte, 4)
		req := func(int) []byte {
			select {
			case buf := <-free:
				return buf
			default:
				return make([]byte, 1<<20)
			}
		}
		done := func(_ int, buf []byte, _, _ uint64, owned bool) {
			if owned {
				select {
				case free <- buf:
				default:
				}
			}
		}
		require.Equal(b, 1, l("ompt_start_trace").(ompt.StartTraceFunc)(h, req, done), "start_trace")
		b.Cleanup(func() {
			_, lost := TraceStats(0)
			b.ReportMetric(float64(lost)/float64(b.N), "lost/op")
		})
	}
	return clk
}

// BenchmarkEmptyTargetTracingOff: an empty construct (target begin,
// submit, target end) with a tool whose callbacks are all registered but
// tracing off: the cost of the tracing checks is one atomic load per
// construct and per operation.
func BenchmarkEmptyTargetTracingOff(b *testing.B) {
	clk := benchTracing(b, false, 0)
	b.ReportAllocs()
	for b.Loop() {
		tracedSubmit(clk)
	}
}

// BenchmarkEmptyTargetTracingOn: the same construct with every record
// type traced: three records (target begin, kernel, target end).
func BenchmarkEmptyTargetTracingOn(b *testing.B) {
	clk := benchTracing(b, true, 0)
	b.ReportAllocs()
	for b.Loop() {
		tracedSubmit(clk)
	}
}

// BenchmarkRecordCost: the cost of one data-op record as the runtime
// makes it (Op + Record, device times given), tracing on.
func BenchmarkRecordCost(b *testing.B) {
	clk := benchTracing(b, true, 0)
	t := TargetBegin(ompt.KindTarget, 0, 1)
	defer t.End()
	t.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
	t.DataOpEnd(0xd000)
	bt, et := clk.interval()
	b.ReportAllocs()
	for b.Loop() {
		o := t.Op()
		o.Record(bt, et, 0, nil)
	}
}

// BenchmarkRecordCostNative: as BenchmarkRecordCost, with a hostplugin.Record
// native record too (two entries per operation).
func BenchmarkRecordCostNative(b *testing.B) {
	clk := benchTracing(b, true, ompt.NativeDataMotionExplicit)
	t := TargetBegin(ompt.KindTarget, 0, 1)
	defer t.End()
	t.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
	t.DataOpEnd(0xd000)
	bt, et := clk.interval()
	b.ReportAllocs()
	for b.Loop() {
		o := t.Op()
		hn := hostplugin.Record{Start: bt, End: et, Queue: 1}.Native("", 0, 0)
		o.Record(bt, et, 0, &NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent, Type: "host copy", Start: uint64(bt), End: uint64(et), Data: hn.Bytes()})
	}
}

// BenchmarkTracingCheck is the check the runtime makes before each
// operation: one atomic load.
func BenchmarkTracingCheck(b *testing.B) {
	benchTracing(b, true, 0)
	n := 0
	for b.Loop() {
		if Tracing(0) {
			n++
		}
	}
	require.NotZero(b, n, "not tracing")
}

func tracedSubmit(clk *tickDevice) {
	t := TargetBegin(ompt.KindTarget, 0, 1)
	t.SubmitBegin(0)
	var bt, et int64
	if t.Tracing() {
		bt, et = clk.interval()
	}
	t.SubmitEnd()
	o := t.Op()
	o.Record(bt, et, 1, nil)
	t.End()
}

// BenchmarkRecordCostRoutine: a whole traced device memory routine with
// one data op and its record (RoutineBegin ... End): the record beside
// the cost of the scope itself.
func BenchmarkRecordCostRoutine(b *testing.B) {
	clk := benchTracing(b, true, 0)
	bt, et := clk.interval()
	b.ReportAllocs()
	for b.Loop() {
		r := RoutineBegin(1)
		r.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
		r.DataOpEnd(0xd000)
		o := r.Op()
		o.Record(bt, et, 0, nil)
		r.End()
	}
}
