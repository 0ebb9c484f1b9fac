package target

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// datWithin runs begin (which starts a task) on a goroutine of its own and
// returns the task's error, failing the test unless the task is begun and
// done within 20s: a construct that waits for a predecessor that never
// releases it would otherwise hang the test.
func datWithin(t *testing.T, what string, begin func() *Task) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- begin().Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		require.FailNow(t, what+": not done in 20s (its predecessor never released it)")
		return nil
	}
}

// DependOn(t) of a task that has ended already: a construct or Go task
// depending on one that succeeded runs at once; one depending on one that
// failed fails with its error (ErrDependence) without running. Either way
// it begins and ends: a task that has ended keeps releasing dependents.
func TestDependOnEndedTask(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32(i)
	}
	require.NoError(t, EnterData(0, To(x)))

	ok := Go(func() error { return nil })
	require.NoError(t, ok.Wait())
	errFirst := errors.New("dat: first task failed")
	bad := Go(func() error { return errFirst })
	require.ErrorContains(t, bad.Wait(), "dat: first task failed")

	for round := 0; round < 2; round++ { // the second round depends on the same ended tasks again
		var ran atomic.Int32
		err := datWithin(t, "Go task after an ended task", func() *Task {
			return Go(func() error { ran.Add(1); return nil }, DependOn(ok))
		})
		require.NoError(t, err, "round %d: Go task depending on a task that succeeded and ended", round)
		require.Equal(t, int32(1), ran.Load(), "round %d: the Go task after a task that succeeded ran", round)

		x[3] = 100 + float32(round)
		err = datWithin(t, "update after an ended task", func() *Task { return UpdateNowait(0, To(x), DependOn(ok)) })
		require.NoError(t, err, "round %d: update depending on a task that succeeded and ended", round)

		err = datWithin(t, "Go task after an ended failed task", func() *Task {
			return Go(func() error { ran.Add(1); return nil }, DependOn(bad))
		})
		require.ErrorIs(t, err, ErrDependence, "round %d: Go task depending on a task that failed and ended", round)
		require.ErrorIs(t, err, errFirst, "round %d: the dependent's error wraps its predecessor's", round)
		require.Equal(t, int32(1), ran.Load(), "round %d: the Go task after a failed task ran", round)

		x[3] = -1
		err = datWithin(t, "update after an ended failed task", func() *Task { return UpdateNowait(0, To(x), DependOn(bad)) })
		require.ErrorIs(t, err, ErrDependence, "round %d: update depending on a task that failed and ended", round)
		require.ErrorIs(t, err, errFirst, "round %d: the update's error wraps its predecessor's", round)
		err = datWithin(t, "update on the initial device after an ended failed task", func() *Task {
			return UpdateNowait(InitialDevice, To(x), DependOn(bad))
		})
		require.ErrorIs(t, err, ErrDependence, "round %d: update on the initial device depending on a task that failed and ended", round)
		x[3] = 0
		require.NoError(t, Update(0, From(x)))
		assert.Equal(t, 100+float32(round), x[3], "round %d: x[3] on the device: want the first update's, not the refused one's", round)
		x[3] = 3
	}
	require.NoError(t, ExitData(0, Delete(x)))
	depTableEmpty(t)
}

// A data construct that has no device work of its own (an update of data
// that is not present, an enter data of data already present) still
// depends on its predecessor's device work: when the predecessor's kernel
// fails on the device after it released its dependents, the data construct
// fails with ErrDependence, and a task depending on the data construct does
// not run. On the host device the construct's queue waits for the
// predecessor on the device; on a device whose queues cannot (the faulty
// wrapper has no device.Waiter) the construct waits for it on the host.
func TestDataConstructWithoutWorkDependsOnFailedKernel(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func(t *testing.T) *runtimeState
	}{{"host", hostRuntime}, {"host-faulty", faultRuntime}} {
		t.Run(c.name, func(t *testing.T) {
			r := c.start(t)
			noLeak(t, r)
			const n = 64
			x, y := make([]float32, n), make([]float32, n)
			require.NoError(t, EnterData(0, To(x), To(y)))
			// A large copy before the kernel keeps the queue busy, so the
			// kernel fails after its construct has released its dependents.
			big := make([]float32, 4<<20)
			require.NoError(t, EnterData(0, Alloc(big)))
			absent := make([]float32, n)
			for round := 0; round < 10; round++ {
				for _, b := range []struct {
					name  string
					begin func() *Task
				}{
					{"update of absent data", func() *Task { return UpdateNowait(0, To(absent), DependIn(y)) }},
					{"enter data of present data", func() *Task { return EnterDataNowait(0, To(x), DependIn(y)) }},
				} {
					release := make(chan struct{})
					gate := Go(func() error { <-release; return nil }) // t1 is in flight while t2 and t3 begin
					t1 := TargetNowait(Region{Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}, Maps: []Map{To(big).Always(), DependOut(y), DependOn(gate)}})
					t2 := b.begin()
					var ran atomic.Bool
					t3 := Go(func() error { ran.Store(true); return nil }, DependOn(t2))
					close(release)
					require.ErrorContains(t, t1.Wait(), "panicked", "round %d: panicking kernel", round)
					err := t2.Wait()
					require.ErrorIs(t, err, ErrDependence, "round %d: %s after a kernel that failed on the device", round, b.name)
					require.ErrorContains(t, err, "panicked", "round %d: %s after a kernel that failed on the device", round, b.name)
					require.ErrorIs(t, t3.Wait(), ErrDependence, "round %d: Go task after the %s", round, b.name)
					require.False(t, ran.Load(), "round %d: the Go task after the failed %s ran", round, b.name)
				}
			}
			require.NoError(t, ExitData(0, Delete(x), Delete(y), Delete(big)))
			assert.Empty(t, mappingEntries(0), "entries left")
		})
	}
}

// datHold is a kernel whose Go image waits until datRelease is closed (or
// 20s have passed, so a failing test does not hang).
var (
	datRelease chan struct{}
	datHold    = &device.Kernel{
		Name:   "dat_hold",
		Params: []device.Param{{Name: "n", Kind: device.ParamInt64}},
		Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) {
			select {
			case <-datRelease:
			case <-time.After(20 * time.Second):
			}
		}}},
	}
)

// Dependents do not wait for their predecessor's construct to end: once
// the predecessor has enqueued its device work, they start and enqueue
// theirs behind it (the device orders them), so a chain of constructs after
// a kernel that is still running has been started, each releasing the
// next, before the kernel ends; and all succeed once it ends.
func TestDependentsStartWhileKernelRuns(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 64
	x, y := ones(n)
	big := make([]float32, 4<<20)
	require.NoError(t, EnterData(0, To(x), To(y), Alloc(big)))
	datRelease = make(chan struct{})
	released := false
	let := func() {
		if !released {
			released = true
			close(datRelease)
		}
	}
	defer let()
	// The large copy first makes the kernel run on the queue's goroutine,
	// not inline on the construct's.
	t1 := TargetNowait(Region{Kernel: datHold, Shape: N(1), Args: []Arg{Int(1)}, Maps: []Map{To(big).Always(), DependOut(y)}})
	t2 := UpdateNowait(0, To(x), DependIn(y))
	t3 := Go(func() error { return nil }, DependOn(t2))
	isReleased := func(tk *Task) bool {
		tk.ds.mu.Lock()
		defer tk.ds.mu.Unlock()
		return tk.ds.released
	}
	require.Eventually(t, func() bool { return isReleased(t1) && isReleased(t2) }, 20*time.Second, time.Millisecond,
		"the kernel's construct and the update after it did not release their dependents while the kernel ran")
	select {
	case <-t1.Done():
		require.FailNow(t, "the held kernel's construct ended before it was let go")
	default:
	}
	let()
	for i, tk := range []*Task{t1, t2, t3} {
		require.NoError(t, tk.Wait(), "task %d", i+1)
	}
	require.NoError(t, ExitData(0, Delete(x), Delete(y), Delete(big)))
	depTableEmpty(t)
}

// A kernel that fails on the queue's goroutine may have finished, queue
// idle, before its construct releases its dependents: the construct then
// has no event to give them, and must give them its failure instead. A Go
// task depending on it never runs, whichever came first. (The race is
// narrow, hence the rounds: when Fence dropped an idle queue's failure, a
// few rounds in a thousand ran the Go task.)
func TestDependentOfKernelThatFailedBeforeRelease(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	y := make([]float32, 64)
	// Just over the inline limit: the copy, and so the kernel after it,
	// run on the queue's goroutine, and finish quickly.
	mid := make([]float32, 64<<10+1)
	require.NoError(t, EnterData(0, To(y), Alloc(mid)))
	for round := 0; round < 2000; round++ {
		release := make(chan struct{})
		gate := Go(func() error { <-release; return nil })
		t1 := TargetNowait(Region{Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}, Maps: []Map{To(mid).Always(), DependOut(y), DependOn(gate)}})
		var ran atomic.Bool
		t2 := Go(func() error { ran.Store(true); return nil }, DependIn(y))
		close(release)
		require.ErrorContains(t, t1.Wait(), "panicked", "round %d: panicking kernel", round)
		err := t2.Wait()
		require.ErrorIs(t, err, ErrDependence, "round %d: Go task after a kernel that failed", round)
		require.ErrorContains(t, err, "panicked", "round %d: Go task after a kernel that failed", round)
		require.False(t, ran.Load(), "round %d: the Go task ran after its predecessor's kernel failed", round)
	}
	require.NoError(t, ExitData(0, Delete(y), Delete(mid)))
}

// A construct whose device cannot record an event when it releases its
// dependents waits for its queue instead; if its kernel failed there, the
// dependents get that failure: a Go task depending on it does not run.
// Whichever record of the construct fails (n), the outcome is the same.
func TestDependentsSeeFailureFoundWhenRecordFails(t *testing.T) {
	r := faultRuntime(t)
	noLeak(t, r)
	y := make([]float32, 64)
	big := make([]float32, 4<<20)
	require.NoError(t, EnterData(0, To(y), Alloc(big)))
	fired := 0
	for n := 1; n < 10; n++ {
		release := make(chan struct{})
		gate := Go(func() error { <-release; return nil })
		before := faultPlan.Injected(faulty.Record)
		faultPlan.FailNth(faulty.Record, n, device.CodeUnknown)
		// The large copy first: the kernel fails on the queue's
		// goroutine, found only when the queue is waited for.
		t1 := TargetNowait(Region{Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}, Maps: []Map{To(big).Always(), DependOut(y), DependOn(gate)}})
		var ran atomic.Bool
		t2 := Go(func() error { ran.Store(true); return nil }, DependIn(y))
		close(release)
		err1 := t1.Wait()
		err2 := t2.Wait()
		faultPlan.FailNth(faulty.Record, 0, 0)
		require.ErrorContains(t, err1, "panicked", "record %d failing: the panicking kernel's construct", n)
		require.ErrorIs(t, err2, ErrDependence, "record %d failing: Go task after the failed kernel", n)
		require.False(t, ran.Load(), "record %d failing: the Go task ran after its predecessor's kernel failed", n)
		if faultPlan.Injected(faulty.Record) == before {
			break
		}
		fired++
	}
	require.NotZero(t, fired, "the construct recorded no event")
	require.NoError(t, ExitData(0, Delete(y), Delete(big)))
}

// A task that ends leaves a list item's entry in the dependence table only
// when no other task holds it: a writer begun after an earlier writer has
// ended still waits for the readers still running that were begun after
// that writer, and a reader begun after a writer that is still running
// waits for it, though the readers before that writer have ended.
func TestWriterAfterEndedWriterWaitsForReaders(t *testing.T) {
	hostRuntime(t)
	x := make([]float32, 8)
	w1, rd, w2 := newGate(), newGate(), newGate()
	t1 := Go(w1.body, DependOut(x))
	t2 := Go(rd.body, DependIn(x))
	w1.waitStarted(t, "first writer")
	rd.notStarted(t, "reader while the first writer runs")
	close(w1.release)
	require.NoError(t, t1.Wait())
	rd.waitStarted(t, "reader after the first writer ended")
	t3 := Go(w2.body, DependOut(x))
	w2.notStarted(t, "second writer while the reader runs")
	close(rd.release)
	w2.waitStarted(t, "second writer after the reader ended")
	close(w2.release)
	for i, tk := range []*Task{t2, t3} {
		require.NoError(t, tk.Wait(), "task %d", i+2)
	}
	depTableEmpty(t)

	// A reader ending while a writer begun after it is in flight: the
	// entry stays for the writer, so a reader begun now waits for it.
	w1, rd, w2 = newGate(), newGate(), newGate()
	rd2 := newGate()
	t1 = Go(rd.body, DependIn(x))
	rd.waitStarted(t, "reader")
	t2 = Go(w1.body, DependOut(x))
	close(rd.release)
	require.NoError(t, t1.Wait())
	w1.waitStarted(t, "writer after the reader ended")
	t3 = Go(rd2.body, DependIn(x))
	rd2.notStarted(t, "reader begun while the writer runs")
	t4 := Go(w2.body, DependOut(x))
	close(w1.release)
	rd2.waitStarted(t, "reader after the writer ended")
	w2.notStarted(t, "writer after that reader, while it runs")
	close(rd2.release)
	w2.waitStarted(t, "last writer")
	close(w2.release)
	for i, tk := range []*Task{t2, t3, t4} {
		require.NoError(t, tk.Wait(), "task %d", i+2)
	}
	depTableEmpty(t)
}

// A synchronous construct with depend items whose own work fails returns
// that failure (not a dependence error), and a dependent begun after it
// ended runs.
func TestSyncConstructWithDependReturnsItsFailure(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(32)
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"EnterData", func() error { return EnterData(0, To(x).Present(), DependOut(y)) }},
		{"ExitData", func() error { return ExitData(0, From(x), DependIn(y)) }},
		{"Target", func() error { return Target(saxpyRegion(0, len(x), 2, x, y, To(x).Present(), DependInOut(y))) }},
	} {
		err := c.run()
		require.Equal(t, device.CodeNotFound, device.CodeOf(err), "%s of an absent x with a present modifier: %v", c.name, err)
		require.NotErrorIs(t, err, ErrDependence, "%s: want its own failure", c.name)
		ran := false
		require.NoError(t, Go(func() error { ran = true; return nil }, DependInOut(y)).Wait(), "a task on y after the failed %s", c.name)
		require.True(t, ran, "a task on y after the failed %s: ran", c.name)
	}
	assert.Empty(t, mappingEntries(0), "entries after the failed constructs")
	depTableEmpty(t)
}
