package omptrt

import (
	"github.com/gompt/gompt/ompt"
)

// Tracing reports whether the construct's device is tracing (false for a
// nil *Target and for a device memory routine, whose device the runtime
// checks with the package function Tracing). One atomic load.
func (t *Target) Tracing() bool { return t != nil && !t.routine && Tracing(t.dev) }

// stageWords is how many words of entries a construct stages before it
// queues them (its begin record, its operations, its end record): an
// empty target region makes about 25 with native records, a region with
// one mapped array about 90.
const stageWords = 128

// A construct's records are staged in the construct and queued together
// (one critical section on the device's ring instead of one per record)
// when it ends, or earlier when the stage fills. Records of one construct
// stay in order; records of constructs running at the same time on one
// device are queued in the order the constructs end.

// traceBegin stages the construct's begin target record, if its device
// traces target records; called by targetBegin after the fast check.
func (t *Target) traceBegin(tr *tracer) {
	if tr.types.Load()&(1<<ompt.CallbackTarget) == 0 {
		return
	}
	now, err := tr.h.dev.Now()
	if err != nil || now <= 0 {
		// no time for the begin record, so no pair: both are lost
		tr.lost.Add(2)
		tr.untimed.Add(2)
		return
	}
	t.traceT0 = now
	id, _ := t.idsFor(tr.owner.Load(), 0)
	t.nstaged = encTarget(t.stage[:], t, ompt.ScopeBegin, now, id)
}

// traceEnd stages the end target record of a construct whose begin was
// recorded and queues the construct's staged records.
func (t *Target) traceEnd() {
	t0 := t.traceT0
	t.traceT0 = 0
	tr := tracerOf(t.dev)
	if tr == nil {
		t.nstaged = 0
		return
	}
	if t0 != 0 && tr.types.Load()&(1<<ompt.CallbackTarget) != 0 {
		now, err := tr.h.dev.Now()
		if err != nil || now < t0 {
			now = t0
		}
		if t.nstaged+targetWords > len(t.stage) {
			t.flushStage()
		}
		id, _ := t.idsFor(tr.owner.Load(), 0)
		t.nstaged += encTarget(t.stage[t.nstaged:], t, ompt.ScopeEnd, now, id)
	}
	t.flushStage()
}

// flushStage queues the construct's staged records on its device (if it
// still traces; otherwise they are dropped, as records made while tracing
// is paused or stopped are).
func (t *Target) flushStage() {
	n := t.nstaged
	t.nstaged = 0
	if n == 0 {
		return
	}
	if tr := tracerOf(t.dev); tr != nil {
		tr.push(t.stage[:n])
	}
}
