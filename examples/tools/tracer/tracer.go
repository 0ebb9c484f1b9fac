// Package tracer is an example OMPT tool written in Go that uses device
// tracing. Importing it registers a tool that, in device_initialize,
// starts tracing on every device through the device's lookup
// (ompt_start_trace, ompt_set_trace_ompt for every record type,
// ompt_set_trace_native for data motion and kernel execution) and prints
// each trace record it gets back, read through the standard entry points
// (ompt_advance_buffer_cursor, ompt_get_record_type, ompt_get_record_ompt,
// ompt_get_record_native, ompt_get_record_abstract), one line per record
// in a stable key=value format:
//
//	ompt record target endpoint=begin kind=target dev=0 target_id=2 times=ok
//	ompt record target_data_op target_id=2 host_op_id=3 op=alloc src_dev=-1 dest_dev=0 bytes=4000 times=ok
//	ompt record native host_op_id=3 class=event type="host alloc" hwid=1 times=ok
//	ompt record target_kernel target_id=2 host_op_id=5 requested_teams=0 granted_teams=8 times=ok
//
// Raw times are not printed (they differ from run to run); times=ok says
// that the record's time is non-zero and its end time not before it
// (times=BAD otherwise). It also prints the target, data-op and submit
// callbacks with their ids, so that records can be joined with callbacks:
//
//	ompt cb target begin kind=target dev=0 target_id=2
//	ompt cb target_data_op target_id=2 host_op_id=3 op=alloc src_dev=-1 dest_dev=0 bytes=4000
//	ompt cb target_submit target_id=2 host_op_id=5 teams=0
//
// Records arrive on the device's tracing goroutine, after the callbacks
// of their operations; the two kinds of lines interleave differently from
// run to run, but each kind keeps its own order. Every example links the
// tool with `-tags ompt_tracer`:
//
//	GOMPT_PLUGINS=host go run -tags ompt_tracer ./examples/veccopy -device 0
package tracer

import (
	"fmt"
	"github.com/gompt/gompt/examples/tools/internal/lines"
	"io"
	"os"
	"sync"

	"github.com/gompt/gompt/ompt"
)

// BufferSize is the size of the buffers the tool gives the runtime:
// small, so that a short program fills several.
const BufferSize = 2048

var out = lines.NewOut()

// SetOutput sends the lines to w instead of standard output.
func SetOutput(w io.Writer) { out.SetOutput(w) }

func printf(format string, args ...any) { out.Printf(format, args...) }

func init() {
	ompt.RegisterTool("tracer", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: initialize, Finalize: func(*ompt.Data) { printf("finalize") }}
	})
}

func initialize(lookup ompt.LookupFunc, initialDeviceNum int, _ *ompt.Data) int {
	set, ok := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
	if !ok {
		fmt.Fprintln(os.Stderr, "tracer: no ompt_set_callback")
		return 0
	}
	printf("initialize initial_device=%d", initialDeviceNum)
	set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(deviceInitialize))
	set(ompt.CallbackDeviceFinalize, ompt.DeviceFinalizeCallback(func(dev int) {
		printf("device_finalize dev=%d", dev)
	}))
	set(ompt.CallbackTarget, ompt.TargetCallback(func(kind ompt.TargetKind, ep ompt.Endpoint, dev int, _ *ompt.Data, id uint64, _ uintptr) {
		printf("cb target %s kind=%s dev=%d target_id=%d", ep, lines.Kind(kind), dev, id)
	}))
	set(ompt.CallbackTargetDataOp, ompt.TargetDataOpCallback(func(id, op uint64, kind ompt.DataOpKind, _ uintptr, srcDev int, _ uintptr, dstDev int, bytes uint64, _ uintptr) {
		printf("cb target_data_op target_id=%d host_op_id=%d op=%s src_dev=%d dest_dev=%d bytes=%d",
			id, op, lines.Op(kind), srcDev, dstDev, bytes)
	}))
	set(ompt.CallbackTargetSubmit, ompt.TargetSubmitCallback(func(id, op uint64, teams uint32) {
		printf("cb target_submit target_id=%d host_op_id=%d teams=%d", id, op, teams)
	}))
	return 1
}

// device is one traced device's entry points, resolved by its lookup.
type device struct {
	h         *ompt.DeviceHandle
	advance   ompt.AdvanceBufferCursorFunc
	recType   ompt.GetRecordTypeFunc
	recOMPT   ompt.GetRecordOMPTFunc
	recNative ompt.GetRecordNativeFunc
	recAbst   ompt.GetRecordAbstractFunc
}

var (
	devMu   sync.Mutex
	devices = map[int]*device{}
)

func deviceInitialize(dev int, typ string, h *ompt.DeviceHandle, lookup ompt.LookupFunc, _ string) {
	printf("device_initialize dev=%d type=%q", dev, typ)
	d := &device{h: h}
	var ok [8]bool
	d.advance, ok[0] = lookup("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	d.recType, ok[1] = lookup("ompt_get_record_type").(ompt.GetRecordTypeFunc)
	d.recOMPT, ok[2] = lookup("ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)
	d.recNative, ok[3] = lookup("ompt_get_record_native").(ompt.GetRecordNativeFunc)
	d.recAbst, ok[4] = lookup("ompt_get_record_abstract").(ompt.GetRecordAbstractFunc)
	start, ok5 := lookup("ompt_start_trace").(ompt.StartTraceFunc)
	setOMPT, ok6 := lookup("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)
	setNative, ok7 := lookup("ompt_set_trace_native").(ompt.SetTraceNativeFunc)
	ok[5], ok[6], ok[7] = ok5, ok6, ok7
	for i, o := range ok {
		if !o {
			printf("trace dev=%d error=missing_entry_point_%d", dev, i)
			return
		}
	}
	devMu.Lock()
	devices[dev] = d
	devMu.Unlock()
	if start(h, request, complete) != 1 {
		printf("trace dev=%d error=start_trace_failed", dev)
		return
	}
	resOMPT := setOMPT(h, true, 0)
	resNative := setNative(h, true, ompt.NativeDataMotionExplicit|ompt.NativeKernelExecution)
	printf("trace start dev=%d set_trace_ompt=%v set_trace_native=%v", dev, resOMPT, resNative)
}

func request(int) []byte { return make([]byte, BufferSize) }

func timesOK(ok bool) string {
	if ok {
		return "ok"
	}
	return "BAD"
}

// complete prints the records of one completed buffer part.
func complete(dev int, buf []byte, bytes, begin uint64, owned bool) {
	devMu.Lock()
	d := devices[dev]
	devMu.Unlock()
	n := 0
	if d != nil && bytes > begin {
		for cur := begin; ; {
			n++
			printRecord(d, dev, buf, cur)
			next, ok := d.advance(d.h, buf, bytes, cur)
			if !ok {
				break
			}
			cur = next
		}
	}
	o := 0
	if owned {
		o = 1
	}
	printf("buffer_complete dev=%d entries=%d owned=%d", dev, n, o)
}

func printRecord(d *device, dev int, buf []byte, cur uint64) {
	switch k := d.recType(buf, cur); k {
	case ompt.RecordKindOMPT:
		r := d.recOMPT(buf, cur)
		switch {
		case r.Target() != nil:
			b := r.Target()
			printf("record target endpoint=%s kind=%s dev=%d target_id=%d times=%s",
				ompt.Endpoint(b.Endpoint), lines.Kind(ompt.TargetKind(b.Kind)), b.DeviceNum, r.TargetID,
				timesOK(r.Time > 0 && r.ThreadID != 0 && b.TargetID == r.TargetID))
		case r.DataOp() != nil:
			b := r.DataOp()
			printf("record target_data_op target_id=%d host_op_id=%d op=%s src_dev=%d dest_dev=%d bytes=%d times=%s",
				r.TargetID, b.HostOpID, lines.Op(ompt.DataOpKind(b.OpType)), b.SrcDeviceNum, b.DestDeviceNum, b.Bytes,
				timesOK(r.Time > 0 && b.EndTime >= r.Time))
		case r.Kernel() != nil:
			b := r.Kernel()
			printf("record target_kernel target_id=%d host_op_id=%d requested_teams=%d granted_teams=%d times=%s",
				r.TargetID, b.HostOpID, b.RequestedNumTeams, b.GrantedNumTeams, timesOK(r.Time > 0 && b.EndTime >= r.Time))
		default:
			printf("record ompt type=%d", r.Type)
		}
	case ompt.RecordKindNative:
		p, hostOp := d.recNative(buf, cur)
		a := d.recAbst(p)
		if a == nil {
			printf("record native host_op_id=%d abstract=none", hostOp)
			return
		}
		printf("record native host_op_id=%d class=%s type=%q hwid=%d times=%s",
			hostOp, className(a.Class), a.Type, a.HWID, timesOK(a.StartTime > 0 && a.EndTime >= a.StartTime))
	default:
		printf("record %v dev=%d cursor=%d", k, dev, cur)
	}
}

func className(c ompt.NativeClass) string {
	switch c {
	case ompt.NativeRecordInfo:
		return "info"
	case ompt.NativeRecordEvent:
		return "event"
	}
	return fmt.Sprint(int(c))
}
