package target

import "sync"

// Result is a nowait task that yields a value when it completes: what the
// nowait form of a generated reduction launcher (launch.RunDotNowait)
// returns. The value can only be read through Wait, so it is never read
// before the task has finished.
type Result[T any] struct {
	task  *Task
	value func() T
	once  sync.Once
	v     T
}

// NewResult returns the Result of task t whose value is value(), called
// once, by the first Wait after t has succeeded (never when t failed).
// value must not read what t writes before t has finished; Wait
// guarantees that. Generated launchers call it; a program with a
// hand-built reduction (TargetNowait of a kernel with per-team partial
// results) may wrap its task the same way.
func NewResult[T any](t *Task, value func() T) *Result[T] {
	return &Result[T]{task: t, value: value}
}

// Wait blocks until the task has finished and returns its value and its
// error; on an error the value is T's zero value. It may be called more
// than once and from several goroutines: each call returns the same value.
func (r *Result[T]) Wait() (T, error) {
	if err := r.task.Wait(); err != nil {
		var zero T
		return zero, err
	}
	r.once.Do(func() { r.v = r.value() })
	return r.v, nil
}

// Task returns the task behind r, for DependOn: a construct that depends
// on it runs once the value is ready to read.
func (r *Result[T]) Task() *Task { return r.task }

// Done is closed when the task has finished (then Wait does not block).
func (r *Result[T]) Done() <-chan struct{} { return r.task.Done() }
