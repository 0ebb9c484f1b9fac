package target

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt"
)

// depKind is the dependence type of a depend list item.
type depKind uint8

const (
	depIn    depKind = iota + 1 // depend(in: x)
	depOut                      // depend(out: x)
	depInOut                    // depend(inout: x)
	depTask                     // DependOn(t): Go's task dependence
)

var depNames = [...]string{depIn: "DependIn", depOut: "DependOut", depInOut: "DependInOut", depTask: "DependOn"}

func newDep[T any](s []T, k depKind) Map {
	return Map{item: mapping.Item{Host: device.Bytes(s)}, dep: k}
}

// DependIn is a list item of depend(in: s): the construct runs after every
// construct begun earlier with DependOut or DependInOut on s that has not
// ended yet. A construct that has ended orders nothing, also one that
// failed (its own task reports that); DependOn(t) always sees t's failure. Depend items go in a construct's map list (Region.Maps, the
// maps of EnterData, ExitData and Update and their nowait forms) beside
// its map clauses; they map nothing. List items are matched by the address
// of their first element, as LLVM matches them: OpenMP requires two
// depend items to be the same slice or not to overlap at all.
func DependIn[T any](s []T) Map { return newDep(s, depIn) }

// DependOut is a list item of depend(out: s): the construct runs after
// every construct begun earlier with any depend item on s that has not
// ended yet.
func DependOut[T any](s []T) Map { return newDep(s, depOut) }

// DependInOut is a list item of depend(inout: s); it orders as DependOut.
func DependInOut[T any](s []T) Map { return newDep(s, depInOut) }

// DependOn makes the construct run after task t (a task of a nowait
// construct or of Go) has done its work: Go's form of a task dependence,
// for work that shares no slice to name. t may have ended already.
func DependOn(t *Task) Map { return Map{dep: depTask, task: t} }

// ErrDependence is matched (errors.Is) by the error of a construct that did
// not run, or stopped, because a construct it depends on failed. An enter
// data construct with this error has mapped nothing: what it had begun to
// map when the failure came is released again.
var ErrDependence = errors.New("target: a construct this one depends on failed")

// depError is the error of a construct whose predecessor failed; cause is
// the first failure in the chain, so a chain of dependents does not
// stutter.
type depError struct{ cause error }

func (e *depError) Error() string {
	return "target: not run: a construct it depends on (depend clause) failed: " + e.cause.Error()
}
func (e *depError) Unwrap() error        { return e.cause }
func (e *depError) Is(target error) bool { return target == ErrDependence }

// dependErr wraps err, a predecessor's failure, for a dependent.
func dependErr(err error) error {
	var de *depError
	if errors.As(err, &de) {
		return de
	}
	return &depError{cause: err}
}

// splitDeps separates the depend items from the map items of a construct's
// list and checks them. Without depend items it returns maps itself and
// allocates nothing.
func splitDeps(maps []Map) (items, deps []Map, err error) {
	n := 0
	for i := range maps {
		if maps[i].dep != 0 {
			n++
		}
	}
	if n == 0 {
		return maps, nil, nil
	}
	items = make([]Map, 0, len(maps)-n)
	deps = make([]Map, 0, n)
	for i := range maps {
		m := &maps[i]
		switch {
		case m.dep == 0:
			items = append(items, *m)
			continue
		case m.dep == depTask && m.task == nil:
			return nil, nil, fmt.Errorf("target: depend item %d: DependOn(nil); it takes a *Task that a nowait construct or target.Go returned", i)
		case m.dep != depTask && len(m.item.Host) == 0:
			return nil, nil, fmt.Errorf("target: depend item %d (%s): empty or nil slice; a depend list item is a slice with at least one element", i, depNames[m.dep])
		}
		deps = append(deps, *m)
	}
	return items, deps, nil
}

// reportDeps tells the tools the depend items of the construct's target
// task (ompt_callback_dependences). Task dependences (DependOn) have no
// variable and are not reported.
func reportDeps(t *omptrt.Target, deps []Map) {
	if len(deps) == 0 || !t.WantsDependences() {
		return
	}
	out := make([]ompt.Dependence, 0, len(deps))
	for i := range deps {
		var typ ompt.DependenceType
		switch deps[i].dep {
		case depIn:
			typ = ompt.DependenceIn
		case depOut:
			typ = ompt.DependenceOut
		case depInOut:
			typ = ompt.DependenceInOut
		default:
			continue
		}
		out = append(out, ompt.Dependence{Addr: addr(deps[i].item.Host), Type: typ})
	}
	t.Dependences(out)
}

// depTable orders the constructs with depend items: per list item, the
// last writer (out, inout) not yet ended and the readers (in) begun since.
// Constructs are ordered in the order they were begun, on any goroutine.
// A construct leaves the table when it ends, so the table holds only
// work in flight.
var depTable struct {
	mu sync.Mutex
	m  map[uintptr]*depEntry
}

type depEntry struct {
	out *Task
	ins []*Task
}

// waitOn is one predecessor's completion as a dependent sees it: an event
// completing its device work (nil: complete), or its failure.
type waitOn struct {
	ev  device.Event
	err error
}

// depState is the dependence bookkeeping of a task: as a predecessor
// (released, fence, next) and as a dependent (the rest).
type depState struct {
	mu       sync.Mutex
	released bool         // dependents may start: its device work is enqueued, or it ended
	fence    device.Event // completes its device work, until it ends
	relErr   error        // its failure as known at release
	next     []*Task      // dependents waiting for the release

	npred atomic.Int32 // predecessors not released yet, plus one while registering
	waits []waitOn     // released predecessors' completions, under mu
	start func()       // runs the task once npred reaches 0
	keys  []uintptr    // its entries in depTable
	early bool         // releases its dependents when its device work is enqueued
}

// schedule registers task t with depend items deps and calls start once
// every predecessor has released it: at once, on this goroutine, when none
// is in flight; else on the goroutine of the last predecessor to release.
// No goroutine waits meanwhile.
func (t *Task) schedule(deps []Map, start func()) {
	s := &t.ds
	s.start, s.early = start, true
	var preds []*Task
	add := func(p *Task) {
		if p == nil || p == t {
			return
		}
		for _, q := range preds {
			if q == p {
				return
			}
		}
		preds = append(preds, p)
	}
	depTable.mu.Lock()
	if depTable.m == nil {
		depTable.m = map[uintptr]*depEntry{}
	}
	for i := range deps {
		d := &deps[i]
		if d.dep == depTask {
			add(d.task)
			continue
		}
		key := addr(d.item.Host)
		e := depTable.m[key]
		if e == nil {
			e = &depEntry{}
			depTable.m[key] = e
		}
		add(e.out)
		if d.dep == depIn {
			if e.out != t && !has(e.ins, t) {
				e.ins = append(e.ins, t)
			}
		} else {
			for _, r := range e.ins {
				add(r)
			}
			e.ins = e.ins[:0]
			e.out = t
		}
		if !hasKey(s.keys, key) {
			s.keys = append(s.keys, key)
		}
	}
	s.npred.Store(1)
	for _, p := range preds {
		ps := &p.ds
		ps.mu.Lock()
		if ps.released {
			w := waitOn{ps.fence, ps.relErr}
			ps.mu.Unlock()
			s.mu.Lock()
			s.waits = append(s.waits, w)
			s.mu.Unlock()
			continue
		}
		s.npred.Add(1)
		ps.next = append(ps.next, t)
		ps.mu.Unlock()
	}
	depTable.mu.Unlock()
	t.predDone()
}

func has(l []*Task, t *Task) bool {
	for _, x := range l {
		if x == t {
			return true
		}
	}
	return false
}

func hasKey(l []uintptr, k uintptr) bool {
	for _, x := range l {
		if x == k {
			return true
		}
	}
	return false
}

// predDone counts one predecessor released; the last starts the task.
func (t *Task) predDone() {
	s := &t.ds
	if s.npred.Add(-1) == 0 {
		s.start()
	}
}

// release lets t's dependents start: ev completes t's device work (nil:
// complete), err is t's failure. Only the first release counts.
func (t *Task) release(ev device.Event, err error) {
	s := &t.ds
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		return
	}
	s.released, s.fence, s.relErr = true, ev, err
	next := s.next
	s.next = nil
	s.mu.Unlock()
	for _, d := range next {
		ds := &d.ds
		ds.mu.Lock()
		ds.waits = append(ds.waits, waitOn{ev, err})
		ds.mu.Unlock()
		d.predDone()
	}
}

// ended records t's end: dependents begun from now on see its error and
// no event, and t leaves the dependence table.
func (t *Task) ended() {
	s := &t.ds
	t.release(nil, t.err)
	s.mu.Lock()
	s.fence, s.relErr = nil, t.err
	s.mu.Unlock()
	if len(s.keys) == 0 {
		return
	}
	depTable.mu.Lock()
	for _, k := range s.keys {
		e := depTable.m[k]
		if e == nil {
			continue
		}
		if e.out == t {
			e.out = nil
		}
		for i, r := range e.ins {
			if r == t {
				last := len(e.ins) - 1
				e.ins[i], e.ins[last] = e.ins[last], nil
				e.ins = e.ins[:last]
				break
			}
		}
		if e.out == nil && len(e.ins) == 0 {
			delete(depTable.m, k)
		}
	}
	depTable.mu.Unlock()
}

// predErr is the failure of a predecessor known when t started, as t's
// error; nil for a task without dependences.
func (t *Task) predErr() error {
	if t == nil {
		return nil
	}
	s := &t.ds
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.waits {
		if w.err != nil {
			return dependErr(w.err)
		}
	}
	return nil
}

// attach makes c's device operations wait for t's predecessors' device
// work (device events, as for shared present data).
func (t *Task) attach(c *construct) {
	if t == nil {
		return
	}
	s := &t.ds
	s.mu.Lock()
	for _, w := range s.waits {
		if w.ev != nil {
			c.deps = append(c.deps, dep{ev: w.ev, depend: true})
		}
	}
	s.mu.Unlock()
}

// waitHost waits on this goroutine for t's predecessors' device work: the
// initial device and Go tasks run on the host.
func (t *Task) waitHost() error {
	if t == nil {
		return nil
	}
	if err := t.predErr(); err != nil {
		return err
	}
	s := &t.ds
	s.mu.Lock()
	waits := append([]waitOn(nil), s.waits...)
	s.mu.Unlock()
	for _, w := range waits {
		if w.ev != nil {
			if err := w.ev.Wait(); err != nil {
				return dependErr(err)
			}
		}
	}
	return nil
}

// publish releases t's dependents once c has enqueued all of its device
// work (err: c failed): they may start their own work at once, ordered
// after c's by an event. Before, c's queue waits (on the device where it
// can) for what c itself still had to wait for, so the event covers c's
// predecessors too.
func (t *Task) publish(c *construct, err error) {
	if t == nil || !t.ds.early {
		return
	}
	if err == nil {
		if err = c.awaitDevice(); err != nil {
			c.keep(err)
		}
	}
	var ev device.Event
	if err == nil {
		ev = c.Fence()
		err = c.ferr
	}
	t.release(ev, err)
}

// spawnDeps runs fn as a nowait task, which Shutdown waits for; once
// Shutdown has begun it fails instead. With depend items the task is
// registered now, in the order constructs are begun, and its goroutine
// starts when its predecessors have released it; without, fn gets a nil
// *Task and starts at once.
func spawnDeps(deps []Map, fn func(t *Task) error) *Task {
	t, _ := spawnTask(deps, fn)
	return t
}

// spawnTask is spawnDeps that also reports whether the task was refused
// (the runtime is shutting down): fn will then never run.
func spawnTask(deps []Map, fn func(t *Task) error) (t *Task, refused bool) {
	t, r := newTask()
	switch {
	case r == nil:
		return t, true
	case len(deps) == 0:
		t.goRun(r, fn, nil)
	default:
		t.schedule(deps, func() { t.goRun(r, fn, t) })
	}
	return t, false
}

// spawnScoped is spawnDeps for a nowait construct whose tools scope s
// TargetBegin handed off to the task: a task refused drops the scope,
// which fn (ending it) would never reach. (A shutdown that began between
// the construct's TargetBegin and its task waited for that scope forever.)
//
// With a scope (a tool listens), the task's goroutine holds its OS thread
// from its start to its end (omptrt's Start), and a goroutine that blocks
// holding its thread keeps the thread blocked with it: so the task first
// waits for one of the task threads (taskThreads), holding nothing;
// unless a tool's callback began it, inside a construct that may wait
// for it while holding a task thread itself.
func spawnScoped(s *omptrt.Target, deps []Map, fn func(t *Task) error) *Task {
	run := fn
	if s != nil {
		// begun by a tool's callback, inside a construct that may wait
		// for it while it holds a task thread, the task waits for none
		bounded := !omptrt.InConstruct()
		run = func(tk *Task) error {
			if bounded {
				taskThreads <- struct{}{}
				defer func() { <-taskThreads }() // runtime.Goexit in a callback too
			}
			s.Start()
			return fn(tk)
		}
	}
	t, refused := spawnTask(deps, run)
	if refused {
		s.Drop()
	}
	return t
}

// taskThreads bounds the nowait tasks that hold an OS thread at once
// while a tool listens, as LLVM runs target tasks on a few hidden helper
// threads: max(8, GOMAXPROCS at start-up). A task holds one from its start
// to its end, the wait for its device included; the others wait, as
// goroutines that hold no thread. Without the bound, thousands of tasks
// blocked at once (on the present table's lock, say) each kept a thread,
// and Go ended the program at its limit of 10,000 threads.
//
// A task that holds one never waits for a task that has none: a task
// starts once its predecessors have released it, and what it then waits
// for (locks other constructs hold, device work already enqueued) needs
// no task to start; a task its tool callbacks begin and wait for takes
// none (spawnScoped, and for Go tasks omptrt.Unbounded).
var taskThreads = make(chan struct{}, max(8, runtime.GOMAXPROCS(0)))

// runDeps runs fn as a synchronous construct with depend items: it waits
// (blocking the caller, as the construct does) until its predecessors
// have released it.
func runDeps(deps []Map, fn func(t *Task) error) error {
	if len(deps) == 0 {
		return fn(nil)
	}
	t := &Task{done: make(chan struct{})}
	ready := make(chan struct{})
	t.schedule(deps, func() { close(ready) })
	<-ready
	t.err = fn(t)
	t.ended()
	close(t.done)
	return t.err
}

// Go runs fn as a Go task with depend items (OpenMP's task depend): it
// starts once the constructs it depends on have done their work, without
// a goroutine waiting for them meanwhile, and its task's Wait returns fn's
// error. Constructs may depend on it in turn. A predecessor that failed
// fails it without running fn; a panic in fn is its error.
func Go(fn func() error, deps ...Map) *Task {
	if fn == nil {
		return failed(errors.New("target: Go: nil function"))
	}
	items, deps, err := splitDeps(deps)
	if err != nil {
		return failed(err)
	}
	if len(items) > 0 {
		return failed(fmt.Errorf("target: Go: item 0 of %d is a map item (%s); a Go task takes only depend items (DependIn, DependOut, DependInOut, DependOn)", len(items), items[0].item.Type))
	}
	nested := toolsOn() && omptrt.InConstruct()
	return spawnDeps(deps, func(t *Task) (err error) {
		if err := t.waitHost(); err != nil {
			return err
		}
		if nested {
			// begun by a tool's callback, inside a construct that may
			// wait for it holding a held-thread token
			return omptrt.Unbounded(func() error { return runGoTask(fn) })
		}
		return runGoTask(fn)
	})
}

// runGoTask calls a Go task's function; a panic is the task's error (a
// runtime.Goexit is too, see goRun). Shutdown knows a call from a Go task
// by this function's frame.
//
//go:noinline
func runGoTask(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("target: Go task panicked: %v", v)
		}
	}()
	return fn()
}
