package target

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The orders depend clauses promise, seen from Go tasks (target.Go) that
// block until the test lets them go: what may run together does, what
// must wait does.

// gate is a Go task's body that says it started, then waits to be let go.
type gate struct {
	started, release chan struct{}
}

func newGate() *gate { return &gate{make(chan struct{}), make(chan struct{})} }

func (g *gate) body() error {
	close(g.started)
	<-g.release
	return nil
}

// waitStarted fails the test unless g's task starts within 20s.
func (g *gate) waitStarted(t *testing.T, what string) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(20 * time.Second):
		require.FailNow(t, what+" did not start in 20s")
	}
}

// notStarted fails the test if g's task has started (after a moment for
// a wrongly started one to show itself).
func (g *gate) notStarted(t *testing.T, what string) {
	t.Helper()
	select {
	case <-g.started:
		require.FailNow(t, what+" started too early")
	case <-time.After(30 * time.Millisecond):
	}
}

// TestDependWriterWaitsForEveryReader: depend(out: x) after three
// depend(in: x) tasks runs only when all three have ended, whichever ends
// last; the readers run together.
func TestDependWriterWaitsForEveryReader(t *testing.T) {
	hostRuntime(t)
	x := make([]float32, 8)
	readers := []*gate{newGate(), newGate(), newGate()}
	var rt []*Task
	for _, g := range readers {
		rt = append(rt, Go(g.body, DependIn(x)))
	}
	for i, g := range readers {
		g.waitStarted(t, "reader "+string(rune('0'+i))+" (readers do not wait for each other)")
	}
	w := newGate()
	wt := Go(w.body, DependOut(x))
	for _, i := range []int{0, 2, 1} {
		w.notStarted(t, "the writer, with a reader still running,")
		close(readers[i].release)
		require.NoError(t, rt[i].Wait())
	}
	w.waitStarted(t, "the writer, after every reader ended,")
	close(w.release)
	require.NoError(t, wt.Wait())
	depTableEmpty(t)
}

// TestDependReadersAfterWriterRunTogether: depend(in: x) tasks begun after
// a depend(inout: x) task wait for it, then run together; a depend(out:
// x) task begun after them waits for them, and a second writer for the
// first.
func TestDependReadersAfterWriterRunTogether(t *testing.T) {
	hostRuntime(t)
	x := make([]int32, 4)
	w1 := newGate()
	t1 := Go(w1.body, DependInOut(x))
	w1.waitStarted(t, "the first writer")
	r1, r2 := newGate(), newGate()
	tr1, tr2 := Go(r1.body, DependIn(x)), Go(r2.body, DependIn(x))
	w2 := newGate()
	t2 := Go(w2.body, DependOut(x))
	w3 := newGate()
	t3 := Go(w3.body, DependInOut(x))
	r1.notStarted(t, "a reader, with the writer before it running,")
	close(w1.release)
	r1.waitStarted(t, "reader 1")
	r2.waitStarted(t, "reader 2, with reader 1 running,")
	close(r1.release)
	w2.notStarted(t, "the second writer, with reader 2 running,")
	close(r2.release)
	w2.waitStarted(t, "the second writer")
	w3.notStarted(t, "the third writer, with the second running,")
	close(w2.release)
	w3.waitStarted(t, "the third writer")
	close(w3.release)
	for _, tk := range []*Task{t1, tr1, tr2, t2, t3} {
		require.NoError(t, tk.Wait())
	}
	depTableEmpty(t)
}

// TestDependIndependentItemsDoNotWait: tasks on different slices, or only
// reading one slice, do not wait for each other; one naming the same
// slice twice does not wait for itself, and leaves the dependence table
// when it ends.
func TestDependIndependentItemsDoNotWait(t *testing.T) {
	hostRuntime(t)
	a, b := make([]byte, 4), make([]byte, 4)
	ga, gb := newGate(), newGate()
	ta := Go(ga.body, DependOut(a), DependInOut(a))
	tb := Go(gb.body, DependOut(b), DependIn(b))
	tc := Go(func() error { return nil }, DependIn(a[:2]), DependIn(a))
	ga.waitStarted(t, "the task on a")
	gb.waitStarted(t, "the task on b, with the one on a running,")
	close(ga.release)
	close(gb.release)
	for _, tk := range []*Task{ta, tb, tc} {
		require.NoError(t, tk.Wait())
	}
	depTableEmpty(t)
}

// TestDependSyncConstructReturnsItsError: a synchronous construct with
// depend items whose own work fails returns its failure, and a task
// depending on it afterwards runs (it had ended: it orders nothing).
func TestDependSyncConstructReturnsItsError(t *testing.T) {
	hostRuntime(t)
	x, y := vecs(8)
	err := Target(Region{Device: Dev(0), Kernel: nil, Shape: N(8), Maps: []Map{DependOut(y)}, Args: []Arg{Slice(x), Slice(y)}})
	require.Error(t, err, "Target with a nil kernel and a depend item")
	require.NotErrorIs(t, err, ErrDependence, "Target with a nil kernel and a depend item: want its own error")
	ran := false
	require.NoError(t, Go(func() error { ran = true; return nil }, DependIn(y)).Wait(), "a task on y after the failed construct ended")
	require.True(t, ran, "a task on y after the failed construct ended: ran")
	depTableEmpty(t)
}

// depTableEmpty fails unless every task has left the dependence table: it
// holds only work in flight, so a program does not grow it for ever.
func depTableEmpty(t *testing.T) {
	t.Helper()
	depTable.mu.Lock()
	n := len(depTable.m)
	depTable.mu.Unlock()
	assert.Zero(t, n, "the dependence table's entries with nothing in flight")
}
