package omptrt

import (
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt/toolslot"
)

// The events inside a construct: data operations, submits, maps and
// dependences.

// DataOpBegin reports the begin of one data operation of the construct:
// op moves or allocates bytes from srcAddr on srcDeviceNum to destAddr on
// destDeviceNum (the host is InitialDevice, -1, which tools get as the
// mode's host number, hostDev; an address not yet known is 0). op is one
// of the 5.2 kinds (or memset); tools get the mode's kind (opKind). It takes a fresh host_op_id, writes it into each EMI tool's
// host_op_id slot, and dispatches target_data_op_emi begin. The runtime
// performs (or enqueues) the operation between DataOpBegin and DataOpEnd.
func (t *Target) DataOpBegin(op ompt.DataOpKind, srcAddr uintptr, srcDeviceNum int, destAddr uintptr, destDeviceNum int, bytes uint64) {
	if t != nil {
		t.dataOpBegin(op, srcAddr, srcDeviceNum, destAddr, destDeviceNum, bytes)
	}
}

// startOp begins the scope's operation of the given state (opData,
// opSubmit): a fresh host_op_id in every tool's slot.
func (t *Target) startOp(state int32) {
	t.own() // first: a nowait construct's target begin comes before the operation
	id := t.takeID()
	t.opID = id
	t.opState = state
	t.lastOp = opNone
	for i := range t.slots {
		s := &t.slots[i]
		s.hostOp = id
		if s.keep != nil && toolslot.SetOp != nil {
			toolslot.SetOp(s.keep, id)
		}
	}
}

// finishOp ends the operation in flight; Op captures it from here.
func (t *Target) finishOp(state int32) {
	t.lastOp, t.lastID = state, t.opID
	t.opID = 0
	t.opState = opNone
}

func (t *Target) dataOpBegin(op ompt.DataOpKind, srcAddr uintptr, srcDeviceNum int, destAddr uintptr, destDeviceNum int, bytes uint64) {
	t.startOp(opData)
	t.op, t.src, t.srcDev, t.dst, t.dstDev, t.bytes = opKind(op), srcAddr, srcDeviceNum, destAddr, destDeviceNum, bytes
	if t.srcVol != nil {
		t.srcVol, t.dstVol = nil, nil
	}
	dispatch(t, t.d.dataOp, (*Target).callDataOp, ompt.ScopeBegin)
}

// callDataOp: the EMI form at both ends, the non-EMI form once, at the
// end, when every argument is final.
func (t *Target) callDataOp(e *dataOpEntry, ep ompt.Endpoint) {
	switch {
	case e.emi != nil:
		e.emi(ep, t.ttd(e.i), t.td(e.i), &t.slots[e.i].hostOp, t.op, t.src, hostDev(t.srcDev), t.dst, hostDev(t.dstDev), t.bytes, t.code)
	case ep == ompt.ScopeEnd:
		e.plain(t.id, t.opID, t.op, t.src, hostDev(t.srcDev), t.dst, hostDev(t.dstDev), t.bytes, t.code)
	}
}

// DataOpBeginRect reports the begin of a rectangular copy as one data
// operation (RectAsOne, OpenMP 6.0): ompt_target_data_transfer_rect (or
// its async kind), whose src and dest addresses point to src and dst,
// bytes the bytes it copies. src and dst (and the arrays they point to)
// must stay unchanged and reachable, and pinned for C tools, until the
// routine's next operation or End; the trace record names their Base
// addresses (a record is delivered after the routine). Its DataOpEnd
// passes the same dst address (uintptr(unsafe.Pointer(dst))).
func (t *Target) DataOpBeginRect(async bool, src *ompt.Subvolume, srcDeviceNum int, dst *ompt.Subvolume, destDeviceNum int, bytes uint64) {
	if t == nil {
		return
	}
	op := ompt.DataOpTransferRect
	if async {
		op = ompt.DataOpTransferRectAsync
	}
	t.dataOpBegin(op, uintptr(unsafe.Pointer(src)), srcDeviceNum, uintptr(unsafe.Pointer(dst)), destDeviceNum, bytes)
	t.srcVol, t.dstVol = src, dst
}

// DataOpEnd reports the end of the data operation begun by DataOpBegin,
// once it is done or enqueued. destAddr is the final destination address
// (for an alloc, the new device address; otherwise the address given to
// DataOpBegin). It dispatches target_data_op_emi end (same host_op_id
// slot as the begin) and the non-EMI target_data_op, which gompt
// dispatches once per operation, here, so that every argument is final.
func (t *Target) DataOpEnd(destAddr uintptr) {
	if t != nil {
		t.dataOpEnd(destAddr)
	}
}

func (t *Target) dataOpEnd(destAddr uintptr) {
	t.dst = destAddr
	t.own()
	dispatch(t, t.d.dataOp, (*Target).callDataOp, ompt.ScopeEnd)
	t.finishOp(opData)
}

// SubmitBegin reports that the construct's kernel is about to be launched
// with requestedNumTeams teams (what the program asked; 0 if it did not
// say). It takes a fresh host_op_id and dispatches target_submit_emi begin
// and the non-EMI target_submit (once, before the launch, as LLVM does).
func (t *Target) SubmitBegin(requestedNumTeams uint32) {
	if t != nil {
		t.submitBegin(requestedNumTeams)
	}
}

func (t *Target) submitBegin(requestedNumTeams uint32) {
	t.startOp(opSubmit)
	t.bytes = uint64(requestedNumTeams)
	dispatch(t, t.d.submit, (*Target).callSubmit, ompt.ScopeBegin)
}

// callSubmit: the EMI form at both ends, the non-EMI form once, at the
// begin (before the launch).
func (t *Target) callSubmit(e *submitEntry, ep ompt.Endpoint) {
	switch {
	case e.emi != nil:
		e.emi(ep, t.td(e.i), &t.slots[e.i].hostOp, uint32(t.bytes))
	case ep == ompt.ScopeBegin:
		e.plain(t.id, t.opID, uint32(t.bytes))
	}
}

// SubmitEnd reports that the launch begun by SubmitBegin has been
// submitted (or, for a synchronous launch, has completed); it dispatches
// target_submit_emi end with the same slots.
func (t *Target) SubmitEnd() {
	if t != nil {
		t.submitEnd()
	}
}

func (t *Target) submitEnd() {
	t.own()
	dispatch(t, t.d.submit, (*Target).callSubmit, ompt.ScopeEnd)
	t.finishOp(opSubmit)
}

// WantsMap reports whether Map would reach any tool (a tool registered
// target_map or target_map_emi), so the runtime can skip building its
// arguments.
func (t *Target) WantsMap() bool { return t != nil && !t.routine && len(t.d.tmap) > 0 }

// Map reports the construct's map items (target_map_emi / target_map):
// one element per item in each slice, all of the same length; flags are
// MapFlag* bits. The slices are read only during the call. The runtime
// calls it once per construct that has map items, after the items are
// mapped (device addresses known) and before the submit.
func (t *Target) Map(hostAddr, deviceAddr []uintptr, bytes []uint64, flags []uint32) {
	if !t.WantsMap() {
		return
	}
	n := min(len(hostAddr), len(deviceAddr), len(bytes), len(flags))
	t.mapHost, t.mapDev, t.mapBytes, t.mapFlags = hostAddr[:n], deviceAddr[:n], bytes[:n], flags[:n]
	t.own()
	dispatch(t, t.d.tmap, (*Target).callMap, ompt.ScopeBegin)
	t.mapHost, t.mapDev, t.mapBytes, t.mapFlags = nil, nil, nil, nil
}

func (t *Target) callMap(e *mapEntry, _ ompt.Endpoint) {
	if e.emi != nil {
		e.emi(&t.slots[e.i].targetData, t.mapHost, t.mapDev, t.mapBytes, t.mapFlags, t.code)
	} else {
		e.plain(t.id, t.mapHost, t.mapDev, t.mapBytes, t.mapFlags, t.code)
	}
}

// WantsDependences reports whether a tool registered the dependences
// callback, so the runtime builds the list only then.
func (t *Target) WantsDependences() bool { return t != nil && !t.routine && len(t.d.deps) > 0 }

// Dependences reports the depend items of the construct's target task
// (ompt_callback_dependences): task_data is each tool's target_task_data
// slot of the construct, the slot its nowait target events pass. The
// runtime calls it once, right after TargetBegin, for a construct with
// depend items; a synchronous construct's target task is an included
// task, whose slot the target events do not pass (nil) but this event
// does. For a nowait construct the items are kept (copied) and the event
// comes when the task starts (Start), on its goroutine, after task_create
// and before its task_schedule and target begin; the encountering
// goroutine does not become the construct's. deps is read only during
// the call.
func (t *Target) Dependences(deps []ompt.Dependence) {
	if !t.WantsDependences() || len(deps) == 0 {
		return
	}
	if t.kind.Nowait() && !t.switched {
		t.deps = append(t.deps[:0], deps...) // for the task's first event
		return
	}
	t.own()
	t.dispatchDeps(deps)
}

// dispatchDeps dispatches dependences with the construct's
// target_task_data slots.
func (t *Target) dispatchDeps(deps []ompt.Dependence) {
	for i := range t.d.deps {
		e := &t.d.deps[i]
		switch {
		case e.t.done.Load():
		case e.native:
			e.emi(&t.slots[e.i].targetTaskData, deps)
		default:
			func() {
				ok := false
				defer e.t.guard(&ok)
				e.emi(&t.slots[e.i].targetTaskData, deps)
				ok = true
			}()
		}
	}
}
