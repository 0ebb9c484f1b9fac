package ompt

import (
	"sync"
	"sync/atomic"
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
	pool   sync.Pool
}

// entry is one tool's registration for one event: its EMI callback or,
// if it registered none, its non-EMI one.
type entry[E, P any] struct {
	t     *tool
	i     int
	emi   E
	plain P
}

type (
	targetEntry = entry[TargetEMICallback, TargetCallback]
	dataOpEntry = entry[TargetDataOpEMICallback, TargetDataOpCallback]
	submitEntry = entry[TargetSubmitEMICallback, TargetSubmitCallback]
	mapEntry    = entry[TargetMapEMICallback, TargetMapCallback]
)

// addEntry appends tool t's entry for the event whose two forms are emiEv
// and plainEv, if it registered either: OpenMP 5.2's rule that only the
// EMI form is dispatched when both are registered lives here. A tool's
// callbacks never hold a typed nil (setCallback stores nil for one).
func addEntry[E, P any](l []entry[E, P], t *tool, i int, emiEv, plainEv Callback) []entry[E, P] {
	if f, ok := t.cbs[emiEv].(E); ok {
		return append(l, entry[E, P]{t: t, i: i, emi: f})
	}
	if f, ok := t.cbs[plainEv].(P); ok {
		return append(l, entry[E, P]{t: t, i: i, plain: f})
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
		d.target = addEntry(d.target, t, i, CallbackTargetEMI, CallbackTarget)
		d.dataOp = addEntry(d.dataOp, t, i, CallbackTargetDataOpEMI, CallbackTargetDataOp)
		d.submit = addEntry(d.submit, t, i, CallbackTargetSubmitEMI, CallbackTargetSubmit)
		d.tmap = addEntry(d.tmap, t, i, CallbackTargetMapEMI, CallbackTargetMap)
	}
	n := len(d.tools)
	d.pool.New = func() any {
		return &Target{
			targetData:     make([]Data, n),
			targetTaskData: make([]Data, n),
			hostOp:         make([]uint64, n),
			slot:           -1,
		}
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
	// g is the goroutine that dispatched the construct's latest event.
	// The other fields are written only by the goroutine that owns the
	// construct; currentTarget reads them only after finding g equal to
	// its own goroutine, so every read is ordered after the writes.
	g       atomic.Uintptr
	d       *dispatcher
	kind    TargetKind
	dev     int
	id      uint64 // target_id; 0 for a routine
	opID    uint64 // host_op_id of the operation in flight, 0 if none
	opState int32  // opNone, opData, opSubmit
	code    uintptr
	routine bool
	slot    int

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

	// per-tool slots, indexed by the tool's index in d.tools
	targetData     []Data
	targetTaskData []Data
	hostOp         []uint64

	// the operation in flight
	op             DataOpKind
	src, dst       uintptr
	srcDev, dstDev int
	bytes          uint64
}

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
func TargetBegin(kind TargetKind, deviceNum int, codePtr uintptr) *Target {
	if d := cur.Load(); d != nil {
		return d.targetBegin(kind, deviceNum, codePtr)
	}
	return nil
}

func (d *dispatcher) targetBegin(kind TargetKind, deviceNum int, codePtr uintptr) *Target {
	t := d.get(kind, deviceNum, codePtr, false)
	t.id = nextID()
	t.own() // before register: a scan must never see a stale owner
	t.register()
	t.dispatchTarget(ScopeBegin)
	// the begin record is stamped after the begin callbacks and the end
	// record before the end callbacks: records lie inside the callbacks
	if tr := tracerOf(deviceNum); tr != nil {
		t.traceBegin(tr)
	}
	return t
}

// RoutineBegin opens the scope of a device memory routine (omp_target_alloc,
// free, memcpy, memcpy_rect, memset, associate, disassociate) called at
// codePtr: its data operations are reported outside any construct
// (non-EMI target_id 0, EMI target_data nil). No target event is
// dispatched. Returns nil when no tool is active. End releases it.
func RoutineBegin(codePtr uintptr) *Target {
	d := cur.Load()
	if d == nil {
		return nil
	}
	return d.get(0, InitialDevice, codePtr, true)
}

func (d *dispatcher) get(kind TargetKind, dev int, code uintptr, routine bool) *Target {
	t := d.pool.Get().(*Target)
	t.d = d
	t.kind = kind
	t.dev = dev
	t.code = code
	t.routine = routine
	return t
}

// own records the calling goroutine as the one dispatching t's events.
func (t *Target) own() {
	if g := getg(); t.g.Load() != g {
		t.g.Store(g)
	}
}

func (t *Target) ttd(i int, isNil bool) *Data {
	if isNil {
		return nil
	}
	return &t.targetTaskData[i]
}

func (t *Target) td(i int) *Data {
	if t.routine {
		return nil
	}
	return &t.targetData[i]
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

// dispatchTarget calls every tool's target (or target_emi) callback for
// endpoint ep of construct t.
func (t *Target) dispatchTarget(ep Endpoint) {
	ttdNil := !t.kind.Nowait()
	for _, e := range t.d.target {
		if e.t.done.Load() {
			continue
		}
		if e.emi != nil {
			func() {
				defer e.t.guard()
				e.emi(t.kind, ep, t.dev, &e.t.taskData, t.ttd(e.i, ttdNil), &t.targetData[e.i], t.code)
			}()
		} else {
			func() { defer e.t.guard(); e.plain(t.kind, ep, t.dev, &e.t.taskData, t.id, t.code) }()
		}
	}
}

func (t *Target) end() {
	d := t.d
	if !t.routine {
		t.own()
		if t.traceT0 != 0 || t.nstaged > 0 {
			t.traceEnd()
		}
		t.dispatchTarget(ScopeEnd)
		t.unregister()
	}
	t.id = 0
	t.opID = 0
	t.opState = opNone
	t.lastOp, t.lastID, t.traceT0, t.tid = opNone, 0, 0, 0
	t.nstaged = 0
	t.gen++
	for i := range t.targetData {
		t.targetData[i] = Data{}
		t.targetTaskData[i] = Data{}
	}
	d.pool.Put(t)
}

// DataOpBegin reports the begin of one data operation of the construct:
// op moves or allocates bytes from srcAddr on srcDeviceNum to destAddr on
// destDeviceNum (the host is InitialDevice, -1; an address not yet known
// is 0). It takes a fresh host_op_id, writes it into each EMI tool's
// host_op_id slot, and dispatches target_data_op_emi begin. The runtime
// performs (or enqueues) the operation between DataOpBegin and DataOpEnd.
func (t *Target) DataOpBegin(op DataOpKind, srcAddr uintptr, srcDeviceNum int, destAddr uintptr, destDeviceNum int, bytes uint64) {
	if t != nil {
		t.dataOpBegin(op, srcAddr, srcDeviceNum, destAddr, destDeviceNum, bytes)
	}
}

// startOp begins the scope's operation of the given state (opData,
// opSubmit): a fresh host_op_id in every tool's slot.
func (t *Target) startOp(state int32) uint64 {
	id := nextID()
	t.opID = id
	t.opState = state
	t.lastOp = opNone
	for i := range t.hostOp {
		t.hostOp[i] = id
	}
	t.own()
	return id
}

// finishOp ends the operation in flight; Op captures it from here.
func (t *Target) finishOp(state int32) {
	t.lastOp, t.lastID = state, t.opID
	t.opID = 0
	t.opState = opNone
}

func (t *Target) dataOpBegin(op DataOpKind, srcAddr uintptr, srcDeviceNum int, destAddr uintptr, destDeviceNum int, bytes uint64) {
	t.startOp(opData)
	t.op, t.src, t.srcDev, t.dst, t.dstDev, t.bytes = op, srcAddr, srcDeviceNum, destAddr, destDeviceNum, bytes
	ttdNil := !t.kind.Nowait()
	for _, e := range t.d.dataOp {
		if e.emi == nil || e.t.done.Load() {
			continue
		}
		func() {
			defer e.t.guard()
			e.emi(ScopeBegin, t.ttd(e.i, ttdNil), t.td(e.i), &t.hostOp[e.i], op, srcAddr, srcDeviceNum, destAddr, destDeviceNum, bytes, t.code)
		}()
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
	ttdNil := !t.kind.Nowait()
	tid, id := t.id, t.opID
	for _, e := range t.d.dataOp {
		if e.t.done.Load() {
			continue
		}
		if e.emi != nil {
			func() {
				defer e.t.guard()
				e.emi(ScopeEnd, t.ttd(e.i, ttdNil), t.td(e.i), &t.hostOp[e.i], t.op, t.src, t.srcDev, destAddr, t.dstDev, t.bytes, t.code)
			}()
		} else {
			func() {
				defer e.t.guard()
				e.plain(tid, id, t.op, t.src, t.srcDev, destAddr, t.dstDev, t.bytes, t.code)
			}()
		}
	}
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
	id := t.startOp(opSubmit)
	t.bytes = uint64(requestedNumTeams)
	tid := t.id
	for _, e := range t.d.submit {
		if e.t.done.Load() {
			continue
		}
		if e.emi != nil {
			func() { defer e.t.guard(); e.emi(ScopeBegin, t.td(e.i), &t.hostOp[e.i], requestedNumTeams) }()
		} else {
			func() { defer e.t.guard(); e.plain(tid, id, requestedNumTeams) }()
		}
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
	teams := uint32(t.bytes)
	for _, e := range t.d.submit {
		if e.emi == nil || e.t.done.Load() {
			continue
		}
		func() { defer e.t.guard(); e.emi(ScopeEnd, t.td(e.i), &t.hostOp[e.i], teams) }()
	}
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
	hostAddr, deviceAddr, bytes, flags = hostAddr[:n], deviceAddr[:n], bytes[:n], flags[:n]
	t.own()
	tid := t.id
	for _, e := range t.d.tmap {
		if e.t.done.Load() {
			continue
		}
		if e.emi != nil {
			func() { defer e.t.guard(); e.emi(&t.targetData[e.i], hostAddr, deviceAddr, bytes, flags, t.code) }()
		} else {
			func() { defer e.t.guard(); e.plain(tid, hostAddr, deviceAddr, bytes, flags, t.code) }()
		}
	}
}

// The table of constructs in progress, for ompt_get_target_info and
// ompt_get_state. Go has no thread-local storage, so each Target records
// the goroutine that last dispatched one of its events (t.g); an inquiry
// answers for the most recently begun construct whose last event was
// dispatched on the calling goroutine. Inside a callback that is always
// the construct of the event being dispatched.
const activeSlots = 256

var (
	activeTab   [activeSlots]atomic.Pointer[Target]
	overflowMu  sync.Mutex
	overflowSet = map[*Target]struct{}{}
	overflowN   atomic.Int32 // len(overflowSet), read without the lock
	activeHi    atomic.Int32 // slots at and above it have never been used
)

func (t *Target) register() {
	// lowest free slot first, so inquiries scan a short prefix
	for i := range activeTab {
		if activeTab[i].Load() == nil && activeTab[i].CompareAndSwap(nil, t) {
			t.slot = i
			for {
				hi := activeHi.Load()
				if int32(i) < hi || activeHi.CompareAndSwap(hi, int32(i+1)) {
					break
				}
			}
			return
		}
	}
	overflowMu.Lock()
	overflowSet[t] = struct{}{}
	overflowN.Store(int32(len(overflowSet)))
	overflowMu.Unlock()
	t.slot = -1
}

func (t *Target) unregister() {
	if t.slot >= 0 {
		activeTab[t.slot].Store(nil)
		t.slot = -1
		return
	}
	overflowMu.Lock()
	delete(overflowSet, t)
	overflowN.Store(int32(len(overflowSet)))
	overflowMu.Unlock()
}

// currentTarget returns the construct the calling goroutine is in, and
// snapshots of its fields read after the ownership check.
func currentTarget() (t *Target, id uint64) {
	g := getg()
	for i := range activeTab[:activeHi.Load()] {
		c := activeTab[i].Load()
		if c == nil || c.g.Load() != g {
			continue
		}
		if cid := c.id; cid != 0 && cid > id {
			t, id = c, cid
		}
	}
	if overflowN.Load() == 0 {
		return t, id
	}
	overflowMu.Lock()
	for c := range overflowSet {
		if c.g.Load() == g {
			if cid := c.id; cid > id {
				t, id = c, cid
			}
		}
	}
	overflowMu.Unlock()
	return t, id
}
