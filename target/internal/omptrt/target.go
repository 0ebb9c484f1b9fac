package omptrt

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt/toolslot"
)

// ids is the one id space of the process: target ids, host op ids,
// module ids and ompt_get_unique_id all come from it, so no two are equal.
var ids atomic.Uint64

func nextID() uint64 { return ids.Add(1) }

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
	overflow bool              // not in activeTab (every slot was busy): dropped at End
	lockG    uintptr           // the goroutine that holds runtime.LockOSThread for the construct, 0 if none
	token    bool              // it waited for one of the held-thread tokens (held.go): given back at its end
	ends     atomic.Uint32     // constructs that ended with this Target (detach waits for it to move)
	th       *threadRec        // the OpenMP thread of the goroutine that holds the construct
	switched bool              // a nowait construct's target task was scheduled (task_schedule)
	deps     []ompt.Dependence // a nowait construct's depend items, dispatched at its task's first event

	// host_op_ids are handed out from a block of the id space that the
	// Target takes at once (one atomic add per idBlock operations)
	nextOp, endOp uint64

	// tracing: the host thread of the construct's records (set by each
	// hold), the device time of the begin target record (traceT0 0: not
	// recorded), and the operation DataOpEnd/SubmitEnd last ended (for Op)
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
	srcVol, dstVol *ompt.Subvolume // a rectangular copy's sides (DataOpBeginRect), else nil

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
// no tool listens (listening: two atomic loads, no allocation). The caller must call
// End on the result (a nil result included) when the construct ends.
func TargetBegin(kind ompt.TargetKind, deviceNum int, codePtr uintptr) *Target {
	if d := listening(); d != nil {
		return d.targetBegin(kind, deviceNum, codePtr)
	}
	return nil
}

func (d *dispatcher) targetBegin(kind ompt.TargetKind, deviceNum int, codePtr uintptr) *Target {
	if kind.Nowait() {
		// A deferred target task. The encountering goroutine does not
		// hold its thread past TargetBegin, so the task's events,
		// task_create and dependences included, come on the thread that
		// runs the task, when it starts (Start) or at its first event
		// (own), whichever comes first: a task created by a
		// thread whose life has ended would outlive its creator's
		// implicit task. Until then no goroutine owns the construct
		// (inquiries find it on none), and waitCallbacks counts it in
		// progress.
		t := acquire(handedOff)
		t.setup(d, kind, deviceNum, codePtr, false)
		return t
	}
	t := d.get(kind, deviceNum, codePtr, false, admit())
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
	d := listening()
	if d == nil {
		return nil
	}
	return d.get(0, ompt.InitialDevice, codePtr, true, admit())
}

// get takes a scope for the calling goroutine and holds its thread.
// token: the construct took a held-thread token (admit), which the scope
// carries from before the hold: a thread_begin or implicit_task callback
// in the hold that ends the goroutine (runtime.Goexit) gives it back
// through the scope (abandonConstructs).
func (d *dispatcher) get(kind ompt.TargetKind, dev int, code uintptr, routine, token bool) *Target {
	g := getg()
	// the scope first: a detach that begins after this finds it in
	// progress (waitCallbacks), and this construct finds the tool
	// detached (enter, dispatch)
	t := acquire(g)
	// setup and hold written out: this is every construct's path, and a
	// call costs more than what these do
	if len(t.slots) != len(d.tools) && d != noTools {
		t.resize(len(d.tools))
	}
	t.d = d
	t.kind = kind
	t.dev = dev
	t.code = code
	t.routine = routine
	t.token = token
	t.hold(g)
	return t
}

// Start is called first by the goroutine that runs a nowait construct's
// deferred task, the scope TargetBegin handed off: the goroutine holds
// its OS thread for the construct from here, before the task's work can
// block on a lock or its device, and the task's first events
// (task_create, dependences, task_schedule, the target begin) are
// dispatched now. The runtime bounds how many task goroutines hold a
// thread at once (target's taskThreads) by waiting before Start. Without
// Start the task's first event does the same. A nil scope does nothing.
func (t *Target) Start() {
	if t != nil {
		t.own()
	}
}

// setup fills the fields of a construct's scope (get does the same).
func (t *Target) setup(d *dispatcher, kind ompt.TargetKind, dev int, code uintptr, routine bool) {
	if len(t.slots) != len(d.tools) && d != noTools {
		t.resize(len(d.tools))
	}
	t.d = d
	t.kind = kind
	t.dev = dev
	t.code = code
	t.routine = routine
}

// hold makes goroutine g (the caller) hold its OS thread for the
// construct: runtime.LockOSThread, and a hold of the thread's record.
// The outermost hold begins a life unless one is open (lives per OS
// thread, threads.go): its initial task gets an id. Holds of another
// goroutine found on the record mean that goroutine exited locked to a
// thread with this id, which died with it; so does an open life of a
// thread with another identity (threadSelf): this is a new thread, and
// the dead one's life is dropped (forget). Then the construct's tools
// with thread callbacks enter the life (enter). unlock gives the hold
// back; the outermost ends the life unless it stays open (th.keep).
func (t *Target) hold(g uintptr) {
	perThread := livesPerThread.Load()
	locked := perThread && goroutineLocked() // before the runtime's own lock
	runtime.LockOSThread()
	t.lockG = g
	tid := threadID()
	t.tid = tid // the records' thread: the construct holds it to its end
	th := probeThread(tid)
	if th == nil {
		th = newThread(tid)
	}
	n := th.holds.Load()
	if n == 0 || th.holder != g {
		if n != 0 {
			th.forget() // its holder died with the thread
		}
		var self uint64
		if perThread {
			if self = threadSelf(); th.live && th.self != self {
				th.forget() // a life of a thread that died with another goroutine
			}
		}
		n = 0
		th.holder = g
		// a goroutine locked to its thread before may exit locked:
		// its life ends with its hold, but on the main thread, which Go
		// never ends (it parks it instead)
		th.keep = perThread && (!locked || tid == mainThread)
		if !th.live {
			th.live = true
			th.self = self
			th.taskID = t.takeID() // a new initial task
		}
	}
	th.holds.Store(n + 1)
	if len(t.d.threads) > 0 {
		th.enter(t.d)
	}
	t.th = th
}

// taskID is the runtime's id of the encountering task, the initial task
// of the life of the thread that holds the construct: target records'
// task_id. (Taken at every life's begin, whether records need it or not,
// so that a tool's ids do not depend on tracing.)
func (t *Target) taskID() uint64 { return t.th.taskID }

// takeID takes an id from the scope's block of the id space.
func (t *Target) takeID() uint64 {
	if t.nextOp == t.endOp {
		end := ids.Add(idBlock)
		t.nextOp, t.endOp = end-idBlock+1, end+1
	}
	id := t.nextOp
	t.nextOp++
	return id
}

// noTools is the dispatcher of a host scope that brings no tool into
// the thread's life; its scope keeps the slots it has.
var noTools = &dispatcher{}

// hostScope holds the calling goroutine's OS thread for events outside
// any construct (device events, a tool's last events), with the tools
// of d in the thread's life (nil: none). It is a routine scope without
// target events (ompt_get_target_info answers false in it), in the table
// of scopes, so that a detach waits for it as for a construct: the life
// it holds ends before the detached tool's finalizer. End releases it.
func hostScope(d *dispatcher) *Target {
	if d == nil {
		d = noTools
	}
	return d.get(0, ompt.InitialDevice, 0, true, false)
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
// (runtime.LockOSThread, and a hold of the thread's life) until the
// construct ends, so its callbacks, its records' thread_id and a tool's
// thread-local state agree; a nowait construct's task goroutine takes
// its thread at its first event, and then dispatches the target task's
// task_create, dependences and task_schedule and the target begin.
func (t *Target) own() {
	g := getg()
	if t.g.Load() != g {
		t.g.Store(g)
	}
	if t.lockG == 0 {
		t.hold(g) // on this thread: t.tid is read again
		if t.kind.Nowait() && !t.routine && !t.switched {
			t.switched = true
			// the task is created and its dependences reported before the
			// construct begins (get_target_info answers false there)
			if len(t.d.taskCreate) > 0 {
				t.taskCreate()
			}
			if len(t.deps) > 0 {
				t.dispatchDeps(t.deps)
			}
			// its target_id is taken now: get_target_info answers for the
			// most recently begun construct of the goroutine
			t.id = nextID()
			t.taskSchedule(ompt.TaskSwitch)
			t.beginEvents()
		}
	}
}

// taskCreate dispatches task_create for a nowait construct's target task
// (ompt_task_target, its target_task_data slot, encountered by the
// initial task of the thread that runs it), before its target begin.
func (t *Target) taskCreate() {
	for _, e := range t.d.taskCreate {
		if e.t.done.Load() {
			continue
		}
		s := &t.th.slots[e.t.idx]
		func() {
			ok := false
			defer e.t.guard(&ok)
			e.f(&s.task, &s.frame, &t.slots[e.i].targetTaskData, ompt.TaskTarget, len(t.deps) > 0, t.code)
			ok = true
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
			func() { ok := false; defer e.t.guard(&ok); e.f(implicit, status, target); ok = true }()
		} else {
			func() { ok := false; defer e.t.guard(&ok); e.f(target, status, implicit); ok = true }()
		}
	}
}

// unlock releases the OS thread the calling goroutine holds for t (the
// outermost hold ends the thread's life unless it stays open:
// implicit_task end and thread_end for each tool in it).
func (t *Target) unlock() {
	if t.lockG != 0 && t.lockG == getg() {
		// the hold given back (every construct's path, written out)
		th := t.th
		n := th.holds.Load() - 1
		if n == 0 {
			if !th.keep {
				if th.entered > 0 {
					th.leaveAll()
				}
				th.live = false
			}
			th.holder = 0
		}
		th.holds.Store(n)
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
// runtime's for a tool that is not in the construct (nil: none). Every
// traced record asks (the device's owner); where no tool registered an
// EMI target event, no slot holds an id and the answer is the runtime's.
func (t *Target) idsFor(tl *tool, op uint64) (targetID, hostOpID uint64) {
	if !t.d.emi {
		return t.id, op
	}
	return t.slotIDs(tl, op)
}

// slotIDs is idsFor reading tl's slots: a Go tool's here, a C tool's
// through its face.
func (t *Target) slotIDs(tl *tool, op uint64) (targetID, hostOpID uint64) {
	targetID, hostOpID = t.id, op
	for i, x := range t.d.tools {
		if x != tl {
			continue
		}
		s := &t.slots[i]
		tid, hop := s.targetData.Value, s.hostOp
		if x.native {
			tid, hop = t.toolIDs(i)
		}
		if tid != 0 {
			targetID = tid
		}
		if hop != 0 && op != 0 {
			hostOpID = hop
		}
		break
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
// Small enough to inline: an event no tool registered (a tracing tool
// with no callbacks, a thread tool) costs a length check.
func dispatch[E, P any](t *Target, l []entry[E, P], call func(*Target, *entry[E, P], ompt.Endpoint), ep ompt.Endpoint) {
	if len(l) != 0 {
		dispatchAll(t, l, call, ep)
	}
}

func dispatchAll[E, P any](t *Target, l []entry[E, P], call func(*Target, *entry[E, P], ompt.Endpoint), ep ompt.Endpoint) {
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
	ok := false
	defer e.t.guard(&ok)
	call(t, e, ep)
	ok = true
}

// dispatchTarget calls every tool's target (or target_emi) callback for
// endpoint ep of construct t.
func (t *Target) dispatchTarget(ep ompt.Endpoint) {
	if l := t.d.target; len(l) != 0 { // dispatch written out: within the inlining budget
		dispatchAll(t, l, (*Target).callTarget, ep)
	}
}

func (t *Target) callTarget(e *targetEntry, ep ompt.Endpoint) {
	if e.emi != nil {
		e.emi(t.kind, ep, toolDev(t.dev), &t.th.slots[e.t.idx].task, t.ttd(e.i), &t.slots[e.i].targetData, t.code)
	} else {
		e.plain(t.kind, ep, toolDev(t.dev), &t.th.slots[e.t.idx].task, t.id, t.code)
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
	// the thread's life may end here, before the scope is free: a detach
	// waiting for this construct finds its tool's thread_end done
	t.unlock()
	t.giveToken() // inlined: a flag test when the construct took none
	t.lockG = 0
	t.switched = false
	t.th = nil
	t.id = 0
	t.opID = 0
	t.opState = opNone
	t.lastOp, t.lastID, t.traceT0, t.tid = opNone, 0, 0, 0
	t.nstaged = 0
	t.deps = t.deps[:0]
	if t.srcVol != nil {
		t.srcVol, t.dstVol = nil, nil // a routine's rectangular copy: let its subvolumes go
	}
	t.gen++
	t.clearSlots()
	t.release()
}

// clearSlots zeroes the tools' data slots of the scope for its next use.
func (t *Target) clearSlots() {
	for i := range t.slots {
		s := &t.slots[i]
		s.targetData = ompt.Data{}
		s.targetTaskData = ompt.Data{}
		if s.keep != nil && toolslot.Reset != nil {
			toolslot.Reset(s.keep)
		}
	}
}

// Drop releases the scope of a nowait construct that TargetBegin handed
// off and whose task will never run: the runtime refused the task (it
// was shut down in between). Nothing was dispatched for the construct
// (its events come at its task's first event), and nothing is: to the
// tools it never began. Without it the scope stayed in progress, owned
// by no goroutine, and the shutdown's detach waited for it forever
// (waitCallbacks). Drop on a nil scope does nothing; on any other scope
// it panics.
func (t *Target) Drop() {
	if t == nil {
		return
	}
	if t.g.Load() != handedOff || t.lockG != 0 || t.switched {
		panic("omptrt: Drop of a construct that is not a nowait construct handed off by TargetBegin")
	}
	t.deps = t.deps[:0]
	t.gen++
	t.clearSlots()
	t.release()
}
