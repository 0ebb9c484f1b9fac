package omptrt

import (
	"github.com/gompt/gompt/ompt"
)

// The dispatcher: which tool listens to which target event, rebuilt when
// tools or their callbacks change.

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

	// threads has an entry for each tool that registered thread_begin,
	// implicit_task or thread_end: the tools a thread's life keeps track
	// of (a tool with none of them pays nothing per life).
	threads []threadEntry

	// quiet: no tool registered any callback. Constructs then keep no
	// scope while no device traces either (listening).
	quiet bool

	// emi: some tool registered the EMI form of a target event, whose
	// callbacks may write the ids it wants in records into its slots
	// (idsFor); without one every slot's ids are the runtime's.
	emi bool
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
	d := &dispatcher{tools: append([]*tool(nil), tools...), quiet: true}
	for i, t := range d.tools {
		for _, cb := range t.cbs {
			if cb != nil {
				d.quiet = false
			}
		}
		d.target = addEntry(d.target, t, i, ompt.CallbackTargetEMI, ompt.CallbackTarget)
		d.dataOp = addEntry(d.dataOp, t, i, ompt.CallbackTargetDataOpEMI, ompt.CallbackTargetDataOp)
		d.submit = addEntry(d.submit, t, i, ompt.CallbackTargetSubmitEMI, ompt.CallbackTargetSubmit)
		d.tmap = addEntry(d.tmap, t, i, ompt.CallbackTargetMapEMI, ompt.CallbackTargetMap)
		for _, ev := range [...]ompt.Callback{ompt.CallbackTargetEMI, ompt.CallbackTargetDataOpEMI, ompt.CallbackTargetSubmitEMI, ompt.CallbackTargetMapEMI} {
			if t.cbs[ev] != nil {
				d.emi = true
			}
		}
		if f, ok := t.cbs[ompt.CallbackTaskCreate].(ompt.TaskCreateCallback); ok {
			d.taskCreate = append(d.taskCreate, hostEntry[ompt.TaskCreateCallback]{t, i, f})
		}
		if f, ok := t.cbs[ompt.CallbackTaskSchedule].(ompt.TaskScheduleCallback); ok {
			d.taskSchedule = append(d.taskSchedule, hostEntry[ompt.TaskScheduleCallback]{t, i, f})
		}
		d.deps = addEntry(d.deps, t, i, ompt.CallbackDependences, ompt.CallbackDependences)
		if e := t.threadEntryLocked(); e.begin != nil || e.task != nil || e.end != nil {
			d.threads = append(d.threads, *e)
		}
	}
	return d
}

// listening is the dispatcher a construct keeps a scope for: nil when no
// tool is attached, or when the tools registered no callback and no
// device traces. Such a tool hears of nothing a construct does (it has
// no callback, and no device handle to start tracing with unless
// device_initialize gave it one), so a construct costs what it does with
// no tool (ompt-bench's empty_target_tool_none). One that registers a
// callback or starts tracing later sees the constructs that begin after.
func listening() *dispatcher {
	d := cur.Load()
	if d == nil || d.quiet && traced.Load() == nil {
		return nil
	}
	return d
}
