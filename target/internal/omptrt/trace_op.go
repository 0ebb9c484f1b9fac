package omptrt

import (
	"github.com/gompt/gompt/ompt"
)

// TracedOp is one device operation (data operation or kernel) of a
// construct, captured by (*Target).Op for its trace record: its ids, its
// arguments and the host thread. The runtime keeps it until the
// operation's device times are known, then calls Record. The zero
// TracedOp records nothing.
type TracedOp struct {
	event              ompt.Callback // CallbackTargetDataOp or CallbackTargetSubmit; 0: nothing
	dev                int
	targetID, hostOpID uint64
	thread             uint64
	op                 ompt.DataOpKind
	src, dst           uintptr
	srcDev, dstDev     int
	bytes              uint64
	code               uintptr
	teams              uint32
	t                  *Target // the construct that stages the record, if any
	gen                uint32  // t.gen when captured
}

// HostOpID returns the operation's host_op_id (0 for the zero TracedOp).
func (o *TracedOp) HostOpID() uint64 { return o.hostOpID }

// Valid reports whether Record would record anything (the operation's
// device was tracing when it was captured).
func (o *TracedOp) Valid() bool { return o.event != 0 }

// WantsNative reports whether Record would keep a native record with
// monitoring flag flag (the tool enabled it on the operation's device),
// so the runtime can skip making one. One atomic load.
func (o *TracedOp) WantsNative(flag uint32) bool {
	if o.event == 0 {
		return false
	}
	tr := tracerOf(o.dev)
	return tr != nil && tr.native.Load()&flag != 0
}

// Record queues the operation's trace record(s) on its device: an OMPT
// record (target_data_op or target_submit/kernel) if the tool enabled the
// type, and a native record if native is non-nil and the tool enabled
// native.Flag. begin and end are device times (Device.Now's clock, ns)
// of the operation's start and completion; grantedTeams is the number of
// teams launched (kernels; ignored for data operations). A begin <= 0 is
// replaced by end, an end < begin by begin, and both, if still <= 0, by
// the device clock read now, so records always carry non-zero times with
// end >= begin (if that read fails, the records count as lost). native is read during the call only (its Data may live
// on the caller's stack). Called by the goroutine that owns the
// construct, before the construct's End, in the order the operations were
// issued. Never blocks on the tool: the record is queued (or dropped and
// counted when the queue is full) and delivered by the device's tracing
// goroutine. No allocation.
func (o *TracedOp) Record(begin, end int64, grantedTeams uint32, native *NativeInfo) {
	if o.event == 0 {
		return
	}
	if tr := tracerOf(o.dev); tr != nil {
		o.record(tr, begin, end, grantedTeams, native)
	}
}

// record is Record with the tracer of o's device, tr, looked up.
func (o *TracedOp) record(tr *tracer, begin, end int64, grantedTeams uint32, native *NativeInfo) {
	rec := tr.types.Load()&(1<<o.event) != 0
	if native != nil && native.Flag&tr.native.Load() == 0 {
		native = nil
	}
	if !rec && native == nil {
		return
	}
	if begin <= 0 {
		begin = end
	}
	if end < begin {
		end = begin
	}
	if begin <= 0 {
		now, err := tr.h.dev.Now()
		if err != nil || now <= 0 {
			var flag uint32
			if native != nil {
				flag = native.Flag
			}
			o.lose(flag)
			return
		}
		begin, end = now, now
	}
	if t := o.t; t != nil && t.gen == o.gen {
		// staged in the construct, queued with its other records at End
		if t.nstaged+entMaxWords > len(t.stage) {
			t.flushStage()
		}
		t.nstaged += encOp(t.stage[t.nstaged:], o, uint64(begin), uint64(end), grantedTeams, rec, native)
		return
	}
	var w [entMaxWords]uint64
	tr.push(w[:encOp(w[:], o, uint64(begin), uint64(end), grantedTeams, rec, native)])
}

// Op captures the operation that the last DataOpEnd or SubmitEnd ended,
// with the OS thread id of the thread that ran its callbacks (the
// construct's goroutine holds its thread from its first event to its end,
// so the id is the one its hold read: where the runtime's m.procid
// cannot be used, the gettid system call),
// for its trace record, if its device is tracing (one atomic load);
// otherwise, or on a nil *Target, it returns the zero TracedOp. The
// operation's device is the construct's; for a device memory routine it
// is the destination device, or the source device when the destination
// is the host. Call it after DataOpEnd/SubmitEnd and before the next
// DataOpBegin/SubmitBegin/End of the same scope.
func (t *Target) Op() TracedOp {
	var o TracedOp
	t.capture(&o)
	return o
}

// capture fills o as Op returns it (o is zero on entry) and returns the
// tracer of its device, nil if o is not valid; the trace path's own calls
// fill an operation in place rather than copy one back.
func (t *Target) capture(o *TracedOp) *tracer {
	if t == nil || t.lastOp == opNone {
		return nil
	}
	dev := t.opDev()
	tr := tracerOf(dev)
	if tr == nil {
		return nil
	}
	o.dev, o.thread, o.code = dev, t.tid, t.code
	o.targetID, o.hostOpID = t.idsFor(tr.owner.Load(), t.lastID)
	if !t.routine {
		o.t, o.gen = t, t.gen
	}
	if t.lastOp == opSubmit {
		o.event = ompt.CallbackTargetSubmit
		o.teams = uint32(t.bytes)
		return tr
	}
	o.event = ompt.CallbackTargetDataOp
	o.op, o.src, o.srcDev, o.dst, o.dstDev, o.bytes = t.op, t.src, hostDev(t.srcDev), t.dst, hostDev(t.dstDev), t.bytes
	if t.srcVol != nil {
		// a record outlives the routine's subvolumes: it names the arrays
		o.src, o.dst = t.srcVol.Base, t.dstVol.Base
	}
	return tr
}
