package target

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An enter data whose dependence fails after it began (its predecessor's
// kernel fails on the device once the predecessor released its
// dependents) reports ErrDependence, "not run", and so leaves nothing
// mapped: a new item is not present afterwards and an item that was
// present keeps its count. Before, the items stayed mapped behind the
// "not run" error, and a program that believed it leaked them. (The
// blocking form runs in a Go task, which may reach EnterData only after
// the kernel's task has ended; it then has nothing to depend on, and runs.)
func TestEnterDataNotRunMapsNothing(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 4096
	x, y := ones(n)
	// A large copy before the kernel keeps its queue busy, so the kernel
	// fails after its construct has released its dependents.
	big := make([]float32, 4<<20)
	require.NoError(t, EnterData(0, To(y), Alloc(big), To(x)))
	for round := range 5 {
		for _, nowait := range []bool{true, false} {
			z := make([]float32, 64)
			release := make(chan struct{})
			gate := Go(func() error { <-release; return nil })
			t1 := TargetNowait(Region{Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}, Maps: []Map{To(big).Always(), DependOut(y), DependOn(gate)}})
			var t2 *Task
			if nowait {
				t2 = EnterDataNowait(0, To(z), To(x), DependIn(y))
				close(release)
			} else {
				t2 = Go(func() error { return EnterData(0, To(z), To(x), DependIn(y)) })
				close(release)
			}
			require.ErrorContains(t, t1.Wait(), "panicked", "round %d: the failing kernel", round)
			err := t2.Wait()
			if !nowait && err == nil {
				// The Go task reached EnterData after the kernel's task had
				// ended: no sibling was in flight to depend on, so it ran,
				// as OpenMP orders only with tasks still pending. Undo it.
				require.True(t, IsPresent(z, 0), "round %d: z after the enter data that ran", round)
				require.NoError(t, ExitData(0, Delete(z), Release(x)), "round %d", round)
				continue
			}
			require.ErrorIs(t, err, ErrDependence, "round %d (nowait %v): the enter data after the failed kernel", round, nowait)
			assert.ErrorContains(t, err, "not run", "round %d (nowait %v)", round, nowait)
			assert.NotContains(t, err.Error(), "releasing its items again", "round %d (nowait %v): the release of what it mapped succeeded", round, nowait)
			assert.False(t, IsPresent(z, 0), "round %d (nowait %v): z, mapped only by the enter data that did not run, is present", round, nowait)
		}
	}
	// x's count is still the one the first EnterData gave it: one release
	// unmaps it.
	require.NoError(t, ExitData(0, Release(x)))
	assert.False(t, IsPresent(x, 0), "x after one release: its count was raised by enter data that did not run")
	require.NoError(t, ExitData(0, Delete(y), Delete(big)))
}
