package omptrt

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gompt/gompt/internal/omptrt/toolslot"
	"github.com/gompt/gompt/ompt"
)

// ids is the one id space of the process: target ids, host op ids,
// module ids and ompt_get_unique_id all come from it, so no two are equal.
var ids atomic.Uint64

func nextID() uint64 { return ids.Add(1) }

// dispatcher is an immutable snapshot of who listens to what, built when
// the set of tools or their callbacks changes. Each entry names the tool
// and its index, which selects the tool's data slots in a Target.
type dispatcher struct {
	tools  []*tool
	target []targetEntry
	dataOp []dataOpEntry
	submit []submitEntry
	tmap   []mapEntry
	deps   []depsEntry

	taskCreate   []hostEntry[ompt.TaskCreateCallback]
	taskSchedule []hostEntry[ompt.TaskScheduleCallback]
}

// hostEntry is one tool's callback for a host event of a nowait
// construct's target task.
type hostEntry[F any] struct {
	t *tool
	i int
	f F
}

// entry is one tool's registration for one event: its EMI callback or,
// if it registered none, its non-EMI one. native copies t.native.
type entry[E, P any] struct {
	t      *tool
	i      int
	native bool
	emi    E
	plain  P
}

type (
	targetEntry = entry[ompt.TargetEMICallback, ompt.TargetCallback]
	dataOpEntry = entry[ompt.TargetDataOpEMICallback, ompt.TargetDataOpCallback]
	submitEntry = entry[ompt.TargetSubmitEMICallback, ompt.TargetSubmitCallback]
	mapEntry    = entry[ompt.TargetMapEMICallback, ompt.TargetMapCallback]
	depsEntry   = entry[ompt.DependencesCallback, ompt.DependencesCallback]
)

// addEntry appends tool t's entry for the event whose two forms are emiEv
// and plainEv, if it registered either: OpenMP 5.2's rule that only the
// EMI form is dispatched when both are registered lives here. A tool's
// callbacks never hold a typed nil (setCallback stores nil for one).
func addEntry[E, P any](l []entry[E, P], t *tool, i int, emiEv, plainEv ompt.Callback) []entry[E, P] {
	if f, ok := t.cbs[emiEv].(E); ok {
		return append(l, entry[E, P]{t: t, i: i, native: t.native, emi: f})
	}
	if f, ok := t.cbs[plainEv].(P); ok {
		return append(l, entry[E, P]{t: t, i: i, native: t.native, plain: f})
	}
	return l
}

// newDispatcher builds the snapshot; for each tool and event it keeps the
// EMI callback if one is registered and the non-EMI one otherwise
// (OpenMP 5.2: when both are registered only the EMI form is dispatched).
// Called with mu held.
func newDispatcher(tools []*tool) *dispatcher {
	d := &dispatcher{tools: append([]*tool(nil), tools...)}
	for i, t := range d.tools {
		d.target = addEntry(d.target, t, i, ompt.CallbackTargetEMI, ompt.CallbackTarget)
		d.dataOp = addEntry(d.dataOp, t, i, ompt.CallbackTargetDataOpEMI, ompt.CallbackTargetDataOp)
		d.submit = addEntry(d.submit, t, i, ompt.CallbackTargetSubmitEMI, ompt.CallbackTargetSubmit)
		d.tmap = addEntry(d.tmap, t, i, ompt.CallbackTargetMapEMI, ompt.CallbackTargetMap)
		if f, ok := t.cbs[ompt.CallbackTaskCreate].(ompt.TaskCreateCallback); ok {
			d.taskCreate = append(d.taskCreate, hostEntry[ompt.TaskCreateCallback]{t, i, f})
		}
		if f, ok := t.cbs[ompt.CallbackTaskSchedule].(ompt.TaskScheduleCallback); ok {
			d.taskSchedule = append(d.taskSchedule, hostEntry[ompt.TaskScheduleCallback]{t, i, f})
		}
		d.deps = addEntry(d.deps, t, i, ompt.CallbackDependences, ompt.CallbackDependences)
	}
	return d
}

// Target is the scope of one target construct (target, target enter data,
// target exit data, target update, or their nowait forms) or of one device
// memory routine, as the runtime reports it to the tools. TargetBegin and
// RoutineBegin return nil when no tool is active; every method of a nil
// *Target returns at once, so the runtime calls them unconditionally and
// pays one atomic load per construct when no tool is attached.
//
// A Target belongs to the construct: its methods are called in sequence,
// by one goroutine at a time (the encountering goroutine, or for nowait
// constructs the goroutine running the deferred target task), with at most
// one data operation or submit in flight. End releases it; it must not be
// used afterwards.
type Target struct {
	// g is the goroutine that dispatched the construct's latest event, 0
	// while the Target is free: taking a free Target (acquire) and
	// publishing it to currentTarget are one compare-and-swap of g. The
	// other fields are written only by the goroutine that owns the
	// construct; currentTarget reads them only after finding g equal to
	// its own goroutine, so every read is ordered after the writes.
	g        atomic.Uintptr
	_        [56]byte // g alone on its cache line: takers and inquiries read it, the owner writes the fields below
	d        *dispatcher
	kind     ompt.TargetKind
	dev      int
	id       uint64 // target_id; 0 for a routine
	opID     uint64 // host_op_id of the operation in flight, 0 if none
	opState  int32  // opNone, opData, opSubmit
	code     uintptr
	routine  bool
	overflow bool          // not in activeTab (every slot was busy): dropped at End
	lockG    uintptr       // the goroutine that holds runtime.LockOSThread for the construct, 0 if none
	ends     atomic.Uint32 // constructs that ended with this Target (detach waits for it to move)
	th       *threadRec    // the OpenMP thread of the goroutine that holds the construct
	taskID   uint64        // the encountering task's id (its thread's initial task)
	switched bool          // a nowait construct's target task was scheduled (task_schedule)

	// host_op_ids are handed out from a block of the id space that the
	// Target takes at once (one atomic add per idBlock operations)
	nextOp, endOp uint64

	// tracing: the host thread and device time of the begin target record
	// (traceT0 0: not recorded), and the operation DataOpEnd/SubmitEnd
	// last ended (for Op)
	tid     uint64
	traceT0 int64
	lastOp  int32
	lastID  uint64
	gen     uint32             // incremented when the Target is reused: TracedOp.t's check
	nstaged int                // words used in stage
	stage   [stageWords]uint64 // entries waiting for the construct's end
	pend    []pendingOp        // traced operations waiting for their device times (trace_path.go); beside slots, which End reads too

	// per-tool slots, indexed by the tool's index in d.tools
	slots []toolSlots

	// the operation in flight
	op             ompt.DataOpKind
	src, dst       uintptr
	srcDev, dstDev int
	bytes          uint64

	// the items Map is reporting, during its dispatch
	mapHost, mapDev []uintptr
	mapBytes        []uint64
	mapFlags        []uint32
}

// toolSlots are one tool's slots in one construct. keep is the word of
// package toolslot: the core never clears it, so a tool face's memory
// hung there serves every construct that reuses the Target.
type toolSlots struct {
	targetData     ompt.Data
	targetTaskData ompt.Data
	hostOp         uint64
	keep           unsafe.Pointer
}

func init() {
	var s toolSlots
	toolslot.Offset = unsafe.Offsetof(s.keep) - unsafe.Offsetof(s.targetData)
	toolslot.TargetTaskOffset = unsafe.Offsetof(s.keep) - unsafe.Offsetof(s.targetTaskData)
}

// idBlock is how many host_op_ids a Target takes from the id space at a
// time.
const idBlock = 64

const (
	opNone = iota
	opData
	opSubmit
)

// TargetBegin reports the begin of a target construct of the given kind on
// device deviceNum (the resolved device number: 0..N-1, or N for the
// initial device), encountered at codePtr (the user's call site, non-zero).
// It dispatches target_emi / target begin to every tool that registered
// one, with a fresh target_id, and returns the construct's scope; nil when
// no tool is active (one atomic load, no allocation). The caller must call
// End on the result (a nil result included) when the construct ends.
func TargetBegin(kind ompt.TargetKind, deviceNum int, codePtr uintptr) *Target {
	if d := cur.Load(); d != nil {
		return d.targetBegin(kind, deviceNum, codePtr)
	}
	return nil
}

func (d *dispatcher) targetBegin(kind ompt.TargetKind, deviceNum int, codePtr uintptr) *Target {
	t := d.get(kind, deviceNum, codePtr, false)
	if kind.Nowait() {
		// As LLVM runs a deferred target task: task_create here, on the
		// encountering thread; task_schedule and the target begin on the
		// thread that runs the task, at its first event (own), so a
		// construct's begin and end come on one thread.
		if len(d.taskCreate) > 0 {
			t.taskCreate()
		}
		t.unlock()
		t.tid = 0
		// The encountering goroutine gives the construct up: until the
		// task's first event takes it (own), no goroutine's inquiries
		// find it (currentTarget reads its fields only for the goroutine
		// that owns it), and waitCallbacks still counts it in progress.
		t.g.Store(handedOff)
		return t
	}
	t.id = nextID()
	t.beginEvents()
	return t
}

// beginEvents dispatches the construct's target begin and stages its
// begin record: the begin record is stamped after the begin callbacks and
// the end record before the end callbacks, so records lie inside the
// callbacks.
func (t *Target) beginEvents() {
	t.dispatchTarget(ompt.ScopeBegin)
	if tr := tracerOf(t.dev); tr != nil {
		t.traceBegin(tr)
	}
}

// RoutineBegin opens the scope of a device memory routine (omp_target_alloc,
// free, memcpy, memcpy_rect, memset, associate, disassociate) called at
// codePtr: its data operations are reported outside any construct
// (non-EMI target_id 0; EMI target_data is the routine's own slot, zeroed
// at its begin and the same slot for all of its data operations). No
// target event is dispatched. Returns nil when no tool is active. End releases it.
func RoutineBegin(codePtr uintptr) *Target {
	d := cur.Load()
	if d == nil {
		return nil
	}
	return d.get(0, ompt.InitialDevice, codePtr, true)
}

func (d *dispatcher) get(kind ompt.TargetKind, dev int, code uintptr, routine bool) *Target {
	g := getg()
	runtime.LockOSThread()
	th := enterThread(d)
	t := acquire(g)
	t.lockG = g
	t.th, t.taskID = th, th.taskID
	if len(t.slots) != len(d.tools) {
		t.resize(len(d.tools))
	}
	t.d = d
	t.kind = kind
	t.dev = dev
	t.code = code
	t.routine = routine
	return t
}

// resize gives t n tool slots, keeping the toolslot words it has (a word
// belongs to whichever tool face hung it, not to a tool index) and
// freeing those it cannot keep.
func (t *Target) resize(n int) {
	s := make([]toolSlots, n)
	for i := range t.slots {
		if i < n {
			s[i].keep = t.slots[i].keep
		} else {
			freeKeep(t.slots[i].keep)
		}
	}
	t.slots = s
}

func freeKeep(p unsafe.Pointer) {
	if p != nil && toolslot.Free != nil {
		toolslot.Free(p)
	}
}

// own records the calling goroutine as the one dispatching t's events.
// The goroutine that dispatches a construct's events holds its OS thread
// (runtime.LockOSThread) until the construct ends, so its callbacks, its
// records' thread_id and a tool's thread-local state agree; a nowait
// construct's task goroutine takes its thread at its first event.
func (t *Target) own() {
	g := getg()
	if t.g.Load() != g {
		t.g.Store(g)
	}
	if t.lockG == 0 {
		runtime.LockOSThread()
		t.lockG = g
		t.tid = 0 // read again on this thread
		t.th = enterThread(t.d)
		if t.kind.Nowait() && !t.routine && !t.switched {
			// its target_id is taken now: get_target_info answers for the
			// most recently begun construct of the goroutine
			t.id = nextID()
			t.switched = true
			t.taskSchedule(ompt.TaskSwitch)
			t.beginEvents()
		}
	}
}

// taskCreate dispatches task_create for a nowait construct's target task
// (ompt_task_target, its target_task_data slot), as LLVM does for the
// target task of a deferred construct, before its target begin.
func (t *Target) taskCreate() {
	for _, e := range t.d.taskCreate {
		if e.t.done.Load() {
			continue
		}
		s := &t.th.slots[e.t.idx]
		func() {
			defer e.t.guard()
			e.f(&s.task, &s.frame, &t.slots[e.i].targetTaskData, ompt.TaskTarget, false, t.code)
		}()
	}
}

// taskSchedule dispatches task_schedule between the calling thread's
// initial task and a nowait construct's target task: TaskSwitch to it at
// the task's first event on its goroutine, TaskComplete back at its end.
func (t *Target) taskSchedule(status int) {
	if len(t.d.taskSchedule) == 0 {
		return
	}
	for _, e := range t.d.taskSchedule {
		if e.t.done.Load() {
			continue
		}
		implicit, target := &t.th.slots[e.t.idx].task, &t.slots[e.i].targetTaskData
		if status == ompt.TaskSwitch {
			func() { defer e.t.guard(); e.f(implicit, status, target) }()
		} else {
			func() { defer e.t.guard(); e.f(target, status, implicit) }()
		}
	}
}

// unlock releases the OS thread the calling goroutine holds for t.
func (t *Target) unlock() {
	if t.lockG != 0 && t.lockG == getg() {
		t.lockG = 0
		runtime.UnlockOSThread()
	}
}

// ttd is tool i's target_task_data slot: nil unless the construct is a
// nowait one (a deferred target task).
func (t *Target) ttd(i int) *ompt.Data {
	if !t.kind.Nowait() {
		return nil
	}
	return &t.slots[i].targetTaskData
}

// td is tool i's target_data slot: the construct's, or for a device
// memory routine the routine's own (zeroed at its begin, the same slot at
// its end), never nil: LLVM passes one and LLVM-written tools read it.
func (t *Target) td(i int) *ompt.Data { return &t.slots[i].targetData }

// index returns tl's index in the construct's dispatcher (which selects
// its slots), -1 if tl has none.
func (t *Target) index(tl *tool) int {
	if tl == nil {
		return -1
	}
	for i, x := range t.d.tools {
		if x == tl {
			return i
		}
	}
	return -1
}

// toolIDs returns the target_data value and host_op_id that tool i holds
// in t: for a native (C) tool what its face keeps in the slot's word,
// for a Go tool its Go slots. 0 where the tool holds none.
func (t *Target) toolIDs(i int) (targetID, hostOpID uint64) {
	s := &t.slots[i]
	if t.d.tools[i].native && s.keep != nil && toolslot.IDs != nil {
		return toolslot.IDs(s.keep)
	}
	return s.targetData.Value, s.hostOp
}

// idsFor returns the ids tool tl sees for the construct and for the
// operation whose runtime host_op_id is op: the values in its slots (an
// EMI tool's own), the runtime's where it left a slot 0, and the
// runtime's for a tool that is not in the construct (nil: none).
func (t *Target) idsFor(tl *tool, op uint64) (targetID, hostOpID uint64) {
	targetID, hostOpID = t.id, op
	if i := t.index(tl); i >= 0 {
		tid, hop := t.toolIDs(i)
		if tid != 0 {
			targetID = tid
		}
		if hop != 0 && op != 0 {
			hostOpID = hop
		}
	}
	return targetID, hostOpID
}

// ID returns the construct's target_id (0 for a routine or a nil scope),
// for the runtime's own diagnostics and trace records.
func (t *Target) ID() uint64 {
	if t == nil {
		return 0
	}
	return t.id
}

// End reports the end of the construct (target_emi / target end, same
// kind, device, code pointer, target_id and data slots as the begin) and
// releases the scope. For a routine it only releases the scope.
func (t *Target) End() {
	if t != nil {
		t.end()
	}
}

// dispatch calls call(t, e, ep) for every entry e of l whose tool is not
// detached: a native tool's directly, a Go tool's under its guard.
func dispatch[E, P any](t *Target, l []entry[E, P], call func(*Target, *entry[E, P], ompt.Endpoint), ep ompt.Endpoint) {
	for i := range l {
		switch e := &l[i]; {
		case e.t.done.Load():
		case e.native:
			call(t, e, ep)
		default:
			guarded(t, e, call, ep)
		}
	}
}

func guarded[E, P any](t *Target, e *entry[E, P], call func(*Target, *entry[E, P], ompt.Endpoint), ep ompt.Endpoint) {
	defer e.t.guard()
	call(t, e, ep)
}

// dispatchTarget calls every tool's target (or target_emi) callback for
// endpoint ep of construct t.
func (t *Target) dispatchTarget(ep ompt.Endpoint) { dispatch(t, t.d.target, (*Target).callTarget, ep) }

func (t *Target) callTarget(e *targetEntry, ep ompt.Endpoint) {
	if e.emi != nil {
		e.emi(t.kind, ep, t.dev, &t.th.slots[e.t.idx].task, t.ttd(e.i), &t.slots[e.i].targetData, t.code)
	} else {
		e.plain(t.kind, ep, t.dev, &t.th.slots[e.t.idx].task, t.id, t.code)
	}
}

func (t *Target) end() {
	if len(t.pend) > 0 {
		t.FlushTrace() // the runtime flushes after its queue syncs; this is the safety net
	}
	if !t.routine {
		t.own()
		if t.traceT0 != 0 || t.nstaged > 0 {
			t.traceEnd()
		}
		t.dispatchTarget(ompt.ScopeEnd)
		if t.switched {
			t.taskSchedule(ompt.TaskComplete)
		}
	}
	t.switched = false
	t.th, t.taskID = nil, 0
	t.id = 0
	t.opID = 0
	t.opState = opNone
	t.lastOp, t.lastID, t.traceT0, t.tid = opNone, 0, 0, 0
	t.nstaged = 0
	t.gen++
	for i := range t.slots {
		s := &t.slots[i]
		s.targetData = ompt.Data{}
		s.targetTaskData = ompt.Data{}
		if s.keep != nil && toolslot.Reset != nil {
			toolslot.Reset(s.keep)
		}
	}
	t.unlock()
	t.lockG = 0
	t.release()
}

// DataOpBegin reports the begin of one data operation of the construct:
// op moves or allocates bytes from srcAddr on srcDeviceNum to destAddr on
// destDeviceNum (the host is InitialDevice, -1; an address not yet known
// is 0). It takes a fresh host_op_id, writes it into each EMI tool's
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
	if t.nextOp == t.endOp {
		end := ids.Add(idBlock)
		t.nextOp, t.endOp = end-idBlock+1, end+1
	}
	id := t.nextOp
	t.nextOp++
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
	t.op, t.src, t.srcDev, t.dst, t.dstDev, t.bytes = op, srcAddr, srcDeviceNum, destAddr, destDeviceNum, bytes
	dispatch(t, t.d.dataOp, (*Target).callDataOp, ompt.ScopeBegin)
}

// callDataOp: the EMI form at both ends, the non-EMI form once, at the
// end, when every argument is final.
func (t *Target) callDataOp(e *dataOpEntry, ep ompt.Endpoint) {
	switch {
	case e.emi != nil:
		e.emi(ep, t.ttd(e.i), t.td(e.i), &t.slots[e.i].hostOp, t.op, t.src, t.srcDev, t.dst, t.dstDev, t.bytes, t.code)
	case ep == ompt.ScopeEnd:
		e.plain(t.id, t.opID, t.op, t.src, t.srcDev, t.dst, t.dstDev, t.bytes, t.code)
	}
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
// does. For a nowait construct it comes on the encountering goroutine,
// after task_create and before the task's task_schedule and target begin
// (as LLVM reports a deferred target task's dependences when it creates
// the task), and does not make that goroutine the construct's. deps is
// read only during the call.
func (t *Target) Dependences(deps []ompt.Dependence) {
	if !t.WantsDependences() || len(deps) == 0 {
		return
	}
	if !t.kind.Nowait() || t.switched {
		t.own()
	}
	for i := range t.d.deps {
		e := &t.d.deps[i]
		switch {
		case e.t.done.Load():
		case e.native:
			e.emi(&t.slots[e.i].targetTaskData, deps)
		default:
			func() {
				defer e.t.guard()
				e.emi(&t.slots[e.i].targetTaskData, deps)
			}()
		}
	}
}

// The table of constructs in progress, for ompt_get_target_info and
// ompt_get_state, which is also where free Targets wait to be reused. Go
// has no thread-local storage, so each Target records the goroutine that
// last dispatched one of its events (t.g); an inquiry answers for the most
// recently begun construct whose last event was dispatched on the calling
// goroutine. Inside a callback that is always the construct of the event
// being dispatched.
//
// A Target, once made, stays in its slot for the life of the process: it
// is taken by a compare-and-swap of its g from 0 to the taking goroutine
// (which also publishes it to currentTarget) and freed by storing 0 again,
// two atomic operations per construct and no pool. Slots fill from the
// lowest, so inquiries and takers scan a short prefix; when all of them
// are busy the construct gets a Target of its own, kept in a set until it
// ends.
const activeSlots = 256

var (
	activeTab   [activeSlots]atomic.Pointer[Target]
	activeHi    atomic.Int32 // slots below it hold a Target; tableMu serializes its growth
	tableMu     sync.Mutex   // guards the table's growth and overflowSet
	overflowSet = map[*Target]struct{}{}
	overflowN   atomic.Int32 // len(overflowSet), read without the lock
)

// acquire takes a free Target for goroutine g.
func acquire(g uintptr) *Target {
	for i := range activeTab[:activeHi.Load()] {
		if t := activeTab[i].Load(); t.g.Load() == 0 && t.g.CompareAndSwap(0, g) {
			return t
		}
	}
	t := &Target{}
	t.g.Store(g) // taken before anyone can see it
	tableMu.Lock()
	defer tableMu.Unlock()
	if n := activeHi.Load(); n < activeSlots {
		activeTab[n].Store(t)
		activeHi.Store(n + 1)
		return t
	}
	t.overflow = true
	overflowSet[t] = struct{}{}
	overflowN.Store(int32(len(overflowSet)))
	return t
}

// release frees t, whose fields its owner has reset; an overflow Target
// is dropped with the toolslot words it holds.
func (t *Target) release() {
	// Counted only while a waitCallbacks runs (a plain load otherwise, not
	// a locked add on every construct), before g is cleared: a waiter sees
	// one or the other. A release that read no waiter just before one
	// began clears g unannounced; if its goroutine takes the same Target
	// again before the waiter looks, the waiter waits for that construct's
	// end too, which is counted. It waits longer, never too little.
	if waiters.Load() != 0 {
		t.ends.Add(1)
	}
	if !t.overflow {
		t.g.Store(0)
		return
	}
	tableMu.Lock()
	delete(overflowSet, t)
	overflowN.Store(int32(len(overflowSet)))
	tableMu.Unlock()
	for i := range t.slots {
		freeKeep(t.slots[i].keep)
	}
}

// handedOff is the g of a nowait construct between its TargetBegin and
// its task's first event: owned by no goroutine (none has this address),
// yet not free (0).
const handedOff uintptr = 1

// currentTarget returns the construct the calling goroutine is in, and
// snapshots of its fields read after the ownership check.
func currentTarget() (t *Target, id uint64) {
	g := getg()
	for i := range activeTab[:activeHi.Load()] {
		c := activeTab[i].Load()
		if c.g.Load() != g {
			continue
		}
		if cid := c.id; cid > id {
			t, id = c, cid
		}
	}
	if overflowN.Load() == 0 {
		return t, id
	}
	tableMu.Lock()
	for c := range overflowSet {
		if c.g.Load() == g {
			if cid := c.id; cid > id {
				t, id = c, cid
			}
		}
	}
	tableMu.Unlock()
	return t, id
}

// waiters counts the waitCallbacks in progress.
var waiters atomic.Int32

// waitCallbacks waits until every construct in progress, other than
// those of the calling goroutine, has ended. detach calls it after
// setting the tool's done flag: a construct that checked the flag before
// (and may be calling the tool) is in progress, and one that begins later
// sees the flag, so no callback of the tool runs after its finalizer. It
// costs the hot path one plain atomic load per construct (release); the
// price is that ompt_finalize_tool waits for whole constructs on other
// goroutines, not only for their callbacks.
func waitCallbacks() {
	waiters.Add(1)
	defer waiters.Add(-1)
	g := getg()
	type busy struct {
		c    *Target
		ends uint32
	}
	var list []busy
	note := func(c *Target) {
		ends := c.ends.Load()
		if og := c.g.Load(); og != 0 && og != g {
			list = append(list, busy{c, ends})
		}
	}
	for i := range activeTab[:activeHi.Load()] {
		note(activeTab[i].Load())
	}
	tableMu.Lock()
	for c := range overflowSet {
		note(c)
	}
	tableMu.Unlock()
	for _, b := range list {
		for b.c.ends.Load() == b.ends && b.c.g.Load() != 0 {
			time.Sleep(20 * time.Microsecond)
		}
	}
}
