package target

import (
	"errors"
)

// Task is a construct running asynchronously (a nowait form), or a Go
// task (Go). Other constructs may depend on it (DependOn).
type Task struct {
	done chan struct{}
	err  error
	ds   depState
}

// Wait blocks until the construct has finished and returns its error.
// It may be called more than once and from several goroutines.
func (t *Task) Wait() error {
	<-t.done
	return t.err
}

// Done is closed when the construct has finished.
func (t *Task) Done() <-chan struct{} { return t.done }

// newTask makes a nowait task that Shutdown waits for, and the runtime
// state that counts it; once Shutdown has begun it returns a task failed
// with ErrShutdown and no state.
func newTask() (*Task, *runtimeState) {
	r := state()
	r.tasks.Add(1)
	if r.closing.Load() {
		r.tasks.Add(-1)
		return failed(ErrShutdown), nil
	}
	return &Task{done: make(chan struct{})}, r
}

// goRun runs fn(arg) on a goroutine of its own and then finishes t: its
// dependents are released, Wait returns fn's error, and r no longer counts
// it.
//
// A task whose function ends its goroutine with runtime.Goexit (a Go
// task's function calling t.Fatal) fails with errGoexit: its dependents
// get ErrDependence rather than running as if it had succeeded.
func (t *Task) goRun(r *runtimeState, fn func(*Task) error, arg *Task) {
	go func() {
		returned := false
		defer func() {
			if !returned {
				t.err = errGoexit
			}
			t.ended()
			close(t.done)
			r.tasks.Add(-1)
		}()
		t.err = fn(arg)
		returned = true
	}()
}

// errGoexit is the error of a task whose goroutine runtime.Goexit ended
// before the task's function returned.
var errGoexit = errors.New("target: task ended by runtime.Goexit before its function returned (t.Fatal, t.FailNow and t.SkipNow call it): it did not complete")

// failed returns a finished task with err.
func failed(err error) *Task {
	t := &Task{done: make(chan struct{}), err: err}
	t.ds.released, t.ds.relErr = true, err
	close(t.done)
	return t
}
