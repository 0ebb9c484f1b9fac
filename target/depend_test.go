package target

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ones returns x and y of n elements, all 1.
func ones(n int) (x, y []float32) {
	x, y = make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = 1, 1
	}
	return
}

// wantAll fails unless every element of y is want.
func wantAll(t *testing.T, what string, y []float32, want float32) {
	t.Helper()
	for i, v := range y {
		require.Equal(t, want, v, "%s: y[%d]", what, i)
	}
}

// Two nowait regions over the same slice, the second depending on the
// first: y = 3x + y twice gives 7, never 4 (the second reading y before
// the first wrote it, or its copy back overwriting the first's). Without
// the depend items this fails on the host device (y[0] = 4).
func TestDependNowaitRegionsSeeEachOther(t *testing.T) {
	_, devs := everyDevice(t)
	const n = 1 << 14
	for _, dev := range devs {
		for _, present := range []bool{false, true} {
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for round := 0; round < 10; round++ {
						x, y := ones(n)
						if present {
							if !assert.NoError(t, EnterData(dev, To(x), To(y))) {
								return
							}
						}
						t1 := TargetNowait(saxpyRegion(dev, n, 3, x, y, ToFrom(y), DependOut(y)))
						t2 := TargetNowait(saxpyRegion(dev, n, 3, x, y, ToFrom(y), DependIn(y)))
						var t3 *Task
						if present {
							t3 = UpdateNowait(dev, From(y), DependOut(y)) // after both
						}
						for _, tk := range []*Task{t2, t1, t3} {
							if tk != nil {
								if !assert.NoError(t, tk.Wait()) {
									return
								}
							}
						}
						if present {
							if !assert.NoError(t, ExitData(dev, Delete(x), Delete(y))) {
								return
							}
						}
						for i, v := range y {
							if !assert.Equal(t, float32(7), v, "device %d present=%v round %d: y[%d] (the second region did not see the first's result)", dev, present, round, i) {
								return
							}
						}
					}
				}()
			}
			wg.Wait()
		}
	}
}

// A chunked pipeline: each chunk's copy in, kernel and copy out are three
// nowait constructs ordered by depend items; nothing waits until the end.
func TestDependPipeline(t *testing.T) {
	_, devs := everyDevice(t)
	const n, chunks = 1 << 15, 8
	for _, dev := range devs {
		x, y := vecs(n)
		require.NoError(t, EnterData(dev, Alloc(x), Alloc(y)))
		var tasks []*Task
		c := n / chunks
		for k := 0; k < chunks; k++ {
			xc, yc := x[k*c:(k+1)*c], y[k*c:(k+1)*c]
			tasks = append(tasks,
				UpdateNowait(dev, To(xc), To(yc), DependOut(xc), DependOut(yc)),
				TargetNowait(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(c),
					Maps: []Map{DependIn(xc), DependInOut(yc)},
					Args: []Arg{Int(c), Float32(2), Slice(xc), Slice(yc)}}),
				UpdateNowait(dev, From(yc), DependIn(yc)))
		}
		for _, tk := range tasks {
			require.NoError(t, tk.Wait(), "device %d", dev)
		}
		require.NoError(t, ExitData(dev, Delete(x), Delete(y)))
		checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
	}
}

// A synchronous construct with depend items waits for the nowait ones
// before it, and later ones wait for it.
func TestDependSyncConstruct(t *testing.T) {
	_, devs := everyDevice(t)
	const n = 4096
	for _, dev := range devs {
		x, y := ones(n)
		require.NoError(t, EnterData(dev, To(x), To(y)))
		t1 := TargetNowait(saxpyRegion(dev, n, 3, x, y, DependOut(y)))
		require.NoError(t, Target(saxpyRegion(dev, n, 3, x, y, DependInOut(y))))
		require.NoError(t, Update(dev, From(y), DependIn(y)))
		wantAll(t, fmt.Sprintf("device %d", dev), y, 7)
		require.NoError(t, t1.Wait())
		require.NoError(t, ExitData(dev, Delete(x), Delete(y), DependIn(y)))
	}
}

// A construct depending on one that failed does not run; its error says
// why, names the first failure once, and matches ErrDependence, down a
// chain of dependents.
func TestDependOnFailedTask(t *testing.T) {
	_, devs := everyDevice(t)
	const n = 1024
	for _, dev := range devs {
		x, y := ones(n)
		missing := make([]float32, n)
		// Fails at run time, in the mapping table: present modifier on an
		// item that is not present. It waits for a gate, so it is still in
		// flight when its dependents begin: a construct that has ended
		// orders nothing (DependOn names a task for that).
		release := make(chan struct{})
		gate := Go(func() error { <-release; return nil })
		t1 := TargetNowait(saxpyRegion(dev, n, 3, x, y, To(missing).Present().Named("missing"), DependOut(y), DependOn(gate)))
		t2 := TargetNowait(saxpyRegion(dev, n, 3, x, y, DependInOut(y)))
		t3 := Go(func() error {
			assert.Equal(t, InitialDevice, dev, "Go task ran after a failed predecessor")
			return nil
		}, DependIn(y))
		t4 := TargetNowait(saxpyRegion(dev, n, 3, x, y, DependOn(t3)))
		close(release)
		err1 := t1.Wait()
		if dev != InitialDevice {
			require.Error(t, err1, "device %d: construct with a present item that is not present", dev)
		}
		if err1 == nil { // the initial device has everything present
			for _, tk := range []*Task{t2, t3, t4} {
				require.NoError(t, tk.Wait())
			}
			continue
		}
		for i, tk := range []*Task{t2, t3, t4} {
			err := tk.Wait()
			require.ErrorIs(t, err, ErrDependence, "device %d: dependent %d", dev, i+2)
			msg := err.Error()
			require.Contains(t, msg, err1.Error(), "device %d: dependent %d: want the first failure named", dev, i+2)
			require.Equal(t, 1, strings.Count(msg, "depends on"), "device %d: dependent %d: %q names the first failure more than once", dev, i+2, msg)
		}
		wantAll(t, fmt.Sprintf("device %d: y after the failed chain", dev), y, 1)
		// A task that failed before it began (bad region) fails its
		// dependents too.
		bad := TargetNowait(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(n)})
		err := TargetNowait(saxpyRegion(dev, n, 3, x, y, DependOn(bad))).Wait()
		require.ErrorIs(t, err, ErrDependence, "device %d: dependent of a bad region", dev)
		require.ErrorContains(t, err, "takes 4 arguments", "device %d: dependent of a bad region", dev)
	}
}

// Bad depend input gets a clear error and changes nothing.
func TestDependBadInput(t *testing.T) {
	_, devs := everyDevice(t)
	x, y := ones(16)
	var nilSlice []float32
	for _, dev := range devs {
		for _, c := range []struct {
			name string
			err  error
			want string
		}{
			{"DependIn(nil)", TargetNowait(saxpyRegion(dev, 16, 1, x, y, DependIn(nilSlice))).Wait(), "depend item 0 (DependIn): empty or nil slice"},
			{"DependOut(empty)", Target(saxpyRegion(dev, 16, 1, x, y, To(x), DependOut(y[:0]))), "depend item 1 (DependOut): empty or nil slice"},
			{"DependOn(nil)", UpdateNowait(dev, To(x), DependOn(nil)).Wait(), "DependOn(nil); it takes a *Task"},
			{"depend on a data region", Data(dev, []Map{To(x), DependIn(x)}, func() error { return nil }), "a target data construct has no depend clause"},
			{"Go(nil)", Go(nil).Wait(), "target: Go: nil function"},
			{"Go with a map item", Go(func() error { return nil }, To(x)).Wait(), "a Go task takes only depend items"},
			{"update with a depend item and a bad motion", UpdateNowait(dev, DependIn(x), ToFrom(y)).Wait(), "item 1 is tofrom"},
		} {
			assert.ErrorContains(t, c.err, c.want, "device %d: %s", dev, c.name)
		}
		if dev != InitialDevice {
			assert.False(t, IsPresent(x, dev), "device %d: x present after refused constructs", dev)
		}
	}
	depTable.mu.Lock()
	left := len(depTable.m)
	depTable.mu.Unlock()
	assert.Zero(t, left, "dependence table entries after every construct ended")
}

// Dependents of an unfinished task hold no goroutine while they wait: a
// thousand constructs queued behind a blocked Go task add none, and all
// run, in order, once it returns.
func TestDependWaitsWithoutGoroutines(t *testing.T) {
	hostRuntime(t)
	release := make(chan struct{})
	gate := Go(func() error { <-release; return nil })
	before := runtime.NumGoroutine()
	const n = 1000
	x, y := ones(8)
	var tasks []*Task
	for i := 0; i < n; i++ {
		tasks = append(tasks, TargetNowait(saxpyRegion(0, 8, 1, x, y, DependOn(gate), DependInOut(y))))
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+10, "goroutines held by %d dependents waiting (%d before)", n, before)
	select {
	case <-tasks[0].Done():
		require.FailNow(t, "a dependent ended before the task it depends on")
	case <-time.After(10 * time.Millisecond):
	}
	close(release)
	for _, tk := range tasks {
		require.NoError(t, tk.Wait())
	}
	wantAll(t, "after the chain", y, 1+n)
}

// Go tasks and constructs depend on each other both ways.
func TestDependGoTasks(t *testing.T) {
	_, devs := everyDevice(t)
	const n = 2048
	for _, dev := range devs {
		x, y := ones(n)
		t1 := TargetNowait(saxpyRegion(dev, n, 3, x, y, DependOut(y)))
		var seen float32
		t2 := Go(func() error { seen = y[0]; y[0] = 100; return nil }, DependInOut(y))
		t3 := TargetNowait(saxpyRegion(dev, n, 1, x, y, DependIn(y)))
		t4 := Go(func() error { panic("boom") }, DependOn(t3))
		require.NoError(t, t3.Wait())
		require.Equal(t, float32(4), seen, "device %d: y[0] the Go task saw", dev)
		require.Equal(t, float32(101), y[0], "device %d: y[0]", dev)
		require.Equal(t, float32(5), y[1], "device %d: y[1]", dev)
		require.ErrorContains(t, t4.Wait(), "Go task panicked: boom", "device %d: panicking Go task", dev)
		for _, tk := range []*Task{t1, t2} {
			require.NoError(t, tk.Wait())
		}
	}
}

// A predecessor whose kernel fails on the device after its dependents
// have started (they wait for it on the device, not on a goroutine) fails
// them too: a kernel on present data after it reports the dependence, and
// an update from the device after that copies nothing back.
func TestDependOnKernelFailingOnDevice(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 4096
	x, y := ones(n)
	require.NoError(t, EnterData(0, To(x), To(y)))
	// A large copy before the kernel keeps t1's queue busy, so the kernel
	// fails after t1 has released its dependents.
	big := make([]float32, 4<<20)
	require.NoError(t, EnterData(0, Alloc(big)))
	for round := 0; round < 20; round++ {
		release := make(chan struct{})
		gate := Go(func() error { <-release; return nil }) // t1 is in flight while t2 and t3 begin
		t1 := TargetNowait(Region{Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}, Maps: []Map{To(big).Always(), DependOut(y), DependOn(gate)}})
		t2 := TargetNowait(saxpyRegion(0, n, 3, x, y, DependInOut(y)))
		t3 := UpdateNowait(0, From(y), DependIn(y))
		close(release)
		err1 := t1.Wait()
		require.ErrorContains(t, err1, "panicked", "panicking kernel")
		for i, tk := range []*Task{t2, t3} {
			err := tk.Wait()
			require.ErrorIs(t, err, ErrDependence, "round %d: dependent %d of a kernel that failed on the device", round, i+2)
			require.ErrorContains(t, err, "panicked", "round %d: dependent %d of a kernel that failed on the device", round, i+2)
			require.Equal(t, 1, strings.Count(err.Error(), "depends on"), "round %d: dependent %d of a kernel that failed on the device: %v", round, i+2, err)
		}
		wantAll(t, "y on the host after the failed chain", y, 1)
	}
	require.NoError(t, ExitData(0, Delete(x), Delete(y), Delete(big)))
}

// Work that runs on the host (a Go task, a construct on the initial
// device) after a kernel that fails on the device once its construct has
// released its dependents waits for that kernel and fails with it: the Go
// function never runs, and the initial device's kernel writes nothing.
func TestHostDependentsOfKernelFailingOnDevice(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 64
	y := make([]float32, n)
	require.NoError(t, EnterData(0, To(y)))
	// A large copy before the kernel keeps t1's queue busy, so the kernel
	// fails after t1 has released its dependents.
	big := make([]float32, 4<<20)
	require.NoError(t, EnterData(0, Alloc(big)))
	for round := 0; round < 10; round++ {
		release := make(chan struct{})
		gate := Go(func() error { <-release; return nil })
		t1 := TargetNowait(Region{Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}, Maps: []Map{To(big).Always(), DependOut(y), DependOn(gate)}})
		var ran atomic.Bool
		t2 := Go(func() error { ran.Store(true); return nil }, DependIn(y))
		z := make([]float32, n)
		t3 := TargetNowait(Region{Device: Dev(InitialDevice), Kernel: kernels.Fill, Shape: N(n), Maps: []Map{DependIn(y)},
			Args: []Arg{Int(n), Float32(5), Slice(z)}})
		close(release)
		require.ErrorContains(t, t1.Wait(), "panicked", "panicking kernel")
		for i, tk := range []*Task{t2, t3} {
			err := tk.Wait()
			require.ErrorIs(t, err, ErrDependence, "round %d: host dependent %d of a kernel that failed on the device", round, i+2)
			require.ErrorContains(t, err, "panicked", "round %d: host dependent %d of a kernel that failed on the device", round, i+2)
		}
		require.False(t, ran.Load(), "round %d: the Go task ran after its predecessor failed", round)
		wantAll(t, "z after the initial device's dependent was refused", z, 0)
	}
	require.NoError(t, ExitData(0, Delete(y), Delete(big)))
}
