package omptrt

import (
	"sync"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/ompt"
)

// The trace path from a construct to a record: after DataOpEnd or
// SubmitEnd of a traced device operation the runtime makes one call that
// says how the operation's device times become known, and the record is
// written from there:
//
//   - synchronous operations (alloc, delete, a routine's copy): the
//     runtime reads TraceNow before the operation and calls TraceDone
//     after it, which reads the clock again and records at once (or after
//     the construct's earlier operations that still wait for times);
//   - operations the queue times itself (device.Profiler): TraceTimed
//     with the queue's Timing;
//   - operations bracketed by queue events (no Profiler): TraceBracketed
//     with the events recorded before and after the operation.
//
// A construct keeps its operations that wait for times, in issue order;
// the runtime calls FlushTrace after its queue has synced, before End
// (End flushes what is left). An operation whose device time cannot be
// read (Now, Event.Time, Timing.Times or the bracket's Record fails) is
// not written with made-up times: its records are counted as lost, as
// records the tool had no room for are (TraceStats, and the session's
// OMP_TOOL_VERBOSE_INIT line).

// NativeInfo is what the runtime attaches to an operation's trace record
// when the plugin has a native record for it (TracedOp.Record). Data is
// the plugin's native record (at most ompt.NativeMax bytes, copied; it
// may live on the caller's stack): the bytes of its device.Native, a
// value of the record type the plugin registered (device.RegisterNative:
// host.Record, ...). The record is written only if the tool
// enabled Flag with ompt_set_trace_native and the device can honour it
// (NativeDevice).
type NativeInfo struct {
	Flag       uint32           // one ompt.Native* monitoring flag this record belongs to
	Class      ompt.NativeClass // NativeRecordEvent for timed work, NativeRecordInfo otherwise
	Type       string           // short constant name, e.g. "host copy in"; at most 255 distinct names per process
	HWID       uint64           // where on the device it ran (queue, stream, compute unit); 0 if none
	Start, End uint64           // device ns; 0 if unknown
	Data       []byte           // the native record; len <= NativeMax
}

// pendingOp is one traced operation waiting for its times.
type pendingOp struct {
	op         TracedOp
	begin, end int64          // known times (synchronous operations)
	tm         device.Timing  // the queue's own timing (device.Profiler)
	ev0, ev1   device.Event   // brackets, for queues without a Profiler
	flag       uint32         // ompt.Native* flag of the operation
	kernel     *device.Kernel // the kernel a launch ran; nil for other operations
}

// TraceNow reads the clock of the device of the operation begun last
// (DataOpBegin, SubmitBegin), for TraceDone: 0 if that device is not
// tracing (or on a nil *Target), -1 if the clock could not be read. One
// atomic load when not tracing.
func (t *Target) TraceNow() int64 {
	if t == nil {
		return 0
	}
	tr := tracerOf(t.opDev())
	if tr == nil {
		return 0
	}
	now, err := tr.h.dev.Now()
	if err != nil || now <= 0 {
		return -1
	}
	return now
}

// TraceDone records the synchronous operation just ended (DataOpEnd),
// begun at device time begin (TraceNow's; 0: not traced), ending now.
func (t *Target) TraceDone(begin int64) {
	if t == nil || begin == 0 {
		return
	}
	var op TracedOp
	if t.capture(&op) == nil {
		return
	}
	end := int64(-1)
	if begin > 0 {
		end = t.TraceNow()
	}
	if end <= 0 {
		op.lose(0)
		return
	}
	if len(t.pend) == 0 {
		op.Record(begin, end, 0, nil)
		return
	}
	t.pend = append(t.pend, pendingOp{op: op, begin: begin, end: end})
}

// TraceTimed records the asynchronous operation just ended (DataOpEnd,
// SubmitEnd) with the queue's timing tm of it: at once if tm is ready
// (device.ReadyTiming: a host queue runs small operations inline) and no
// earlier operation waits, else at FlushTrace. flag is the operation's
// ompt.Native* monitoring flag; k the kernel of a launch (its name goes
// into the native record's type), nil otherwise.
func (t *Target) TraceTimed(tm device.Timing, flag uint32, k *device.Kernel) {
	if t == nil {
		return
	}
	var op TracedOp
	tr := t.capture(&op)
	if tr == nil {
		return
	}
	if tm == nil {
		op.lose(flag)
		return
	}
	if len(t.pend) == 0 {
		// A host queue's timing of an operation it ran inline: one type
		// assertion, and no native record unless the tool asked for it.
		if s, ok := tm.(readySpan); ok && s.Ready() && tr.native.Load()&flag == 0 {
			begin, end, teams, err := s.Span()
			if err != nil {
				op.lose(flag)
				return
			}
			op.record(tr, begin, end, uint32(teams), nil)
			return
		}
		if r, ok := tm.(device.ReadyTiming); ok && r.Ready() {
			op.recordTiming(tm, flag, k)
			return
		}
	}
	t.pend = append(t.pend, pendingOp{op: op, flag: flag, tm: tm, kernel: k})
}

// TraceBracketed records the asynchronous operation just ended with the
// queue events recorded before (ev0; nil if the operation's begin is
// unknown) and after it (ev1), at FlushTrace; err is an error of
// recording them, which loses the record.
func (t *Target) TraceBracketed(ev0, ev1 device.Event, err error) {
	if t == nil {
		return
	}
	var op TracedOp
	if t.capture(&op) == nil {
		return
	}
	if err != nil || ev1 == nil {
		op.lose(0)
		return
	}
	t.pend = append(t.pend, pendingOp{op: op, ev0: ev0, ev1: ev1})
}

// readySpan is a timing that can say it is ready and give its span
// without its native record (the host device's).
type readySpan interface {
	device.ReadyTiming
	device.SpanTiming
}

// TracePending reports whether operations wait for their times: the
// runtime then syncs its queue and calls FlushTrace.
func (t *Target) TracePending() bool { return t != nil && len(t.pend) > 0 }

// FlushTrace writes the records of the operations that wait for their
// times, in issue order; it waits for each operation's times.
func (t *Target) FlushTrace() {
	if t == nil {
		return
	}
	for i := range t.pend {
		p := &t.pend[i]
		switch {
		case p.tm != nil:
			p.op.recordTiming(p.tm, p.flag, p.kernel)
			p.tm, p.kernel = nil, nil
			continue
		case p.ev1 != nil:
			var err error
			if p.ev0 != nil {
				p.begin, err = p.ev0.Time()
			}
			end, err1 := p.ev1.Time()
			p.end = end
			p.ev0, p.ev1 = nil, nil
			if err != nil || err1 != nil {
				p.op.lose(0)
				continue
			}
		}
		p.op.Record(p.begin, p.end, 0, nil)
	}
	// Not cleared: the events and timings are let go above; the rest
	// points at pooled scopes, and clearing every entry costs more than
	// the records.
	t.pend = t.pend[:0]
}

// opDev is the device of the operation begun last: the construct's, or
// for a device memory routine its destination device, or its source
// device when the destination is the host.
func (t *Target) opDev() int {
	if !t.routine {
		return t.dev
	}
	if t.dstDev >= 0 {
		return t.dstDev
	}
	return t.srcDev
}

// lose counts the records o would have written as lost: its OMPT record
// if the tool enabled its type, and its native record if the tool
// enabled flag.
func (o *TracedOp) lose(flag uint32) {
	tr := tracerOf(o.dev)
	if tr == nil {
		return
	}
	n := uint64(0)
	if tr.types.Load()&(1<<o.event) != 0 {
		n++
	}
	if flag != 0 && tr.native.Load()&flag != 0 {
		n++
	}
	if n > 0 {
		tr.lost.Add(n)
		tr.untimed.Add(n)
	}
}

// recordTiming records o with the times and native record of the
// queue's timing tm; k is the kernel of a launch, nil otherwise.
func (o *TracedOp) recordTiming(tm device.Timing, flag uint32, k *device.Kernel) {
	if s, ok := tm.(device.SpanTiming); ok && !o.WantsNative(flag) {
		begin, end, teams, err := s.Span()
		if err != nil {
			o.lose(flag)
			return
		}
		o.Record(begin, end, uint32(teams), nil)
		return
	}
	begin, end, native, err := tm.Times()
	if err != nil {
		o.lose(flag)
		return
	}
	if native.Kind == device.NativeNone || !o.WantsNative(flag) {
		o.Record(begin, end, uint32(native.Teams), nil)
		return
	}
	typ := native.Type
	if k != nil && k.Name != "" {
		typ = kernelTypeName(typ, k)
	}
	info := NativeInfo{Flag: flag, Class: ompt.NativeRecordEvent, Type: typ, HWID: native.HWID,
		Start: uint64(begin), End: uint64(end), Data: native.Bytes()}
	o.Record(begin, end, uint32(native.Teams), &info)
}

// kernelTypes holds the native type names of kernel launches, "host
// kernel: saxpy", one per plugin type and kernel, made once so that a
// record allocates nothing.
var kernelTypes struct {
	mu sync.RWMutex
	m  map[kernelType]string
}

type kernelType struct {
	typ string
	k   *device.Kernel
}

// maxKernelTypes bounds the distinct kernel type names: the tools
// interface holds at most 255 native type names per process. Launches of
// kernels beyond it keep the plugin's type alone ("host kernel").
const maxKernelTypes = 192

// kernelTypeName returns the native type name of a launch of k whose
// plugin type is typ: "TYP: NAME", the plugin's type and the kernel's
// name, as ompt/doc.go documents it.
func kernelTypeName(typ string, k *device.Kernel) string {
	key := kernelType{typ, k}
	kernelTypes.mu.RLock()
	s, ok := kernelTypes.m[key]
	kernelTypes.mu.RUnlock()
	if ok {
		return s
	}
	kernelTypes.mu.Lock()
	defer kernelTypes.mu.Unlock()
	if s, ok := kernelTypes.m[key]; ok {
		return s
	}
	if kernelTypes.m == nil {
		kernelTypes.m = map[kernelType]string{}
	}
	s = typ
	if len(kernelTypes.m) < maxKernelTypes {
		s = typ + ": " + k.Name
	}
	kernelTypes.m[key] = s
	return s
}
