package target

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/gompt/gompt/device/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedLen makes a slice too large for a host queue to copy inline, so a
// copy into a new entry is still running when another construct finds the
// entry present.
const sharedLen = 2 * host.InlineCopyMax / 4

// Two nowait regions started back to back read the same input, each with
// its own output: the second finds x present while the first construct's
// copy may still be filling it, and must wait for that copy; whichever
// exits last frees x, and must wait for the other's kernel first.
func TestSharedInputNowait(t *testing.T) {
	_, devs := everyDevice(t)
	for _, dev := range devs {
		t.Run(fmt.Sprint("device", dev), func(t *testing.T) {
			x := make([]float32, sharedLen)
			y1, y2 := make([]float32, sharedLen), make([]float32, sharedLen)
			for round := range 100 {
				for i := range x {
					x[i] = float32(round + 1)
					y1[i], y2[i] = 0, 1
				}
				t1 := TargetNowait(saxpyRegion(dev, len(x), 2, x, y1, To(x), ToFrom(y1)))
				t2 := TargetNowait(saxpyRegion(dev, len(x), 3, x, y2, To(x), ToFrom(y2)))
				require.NoError(t, t1.Wait())
				require.NoError(t, t2.Wait())
				for _, c := range []struct {
					y    []float32
					want float32
				}{{y1, 2 * float32(round+1)}, {y2, 3*float32(round+1) + 1}} {
					for i := 0; i < len(c.y); i += 997 {
						require.Equal(t, c.want, c.y[i], "round %d: y[%d]", round, i)
					}
				}
			}
		})
	}
}

// Goroutines share one input mapped to by each construct, each with its own
// output, on every device.
func TestSharedInputGoroutines(t *testing.T) {
	r, devs := everyDevice(t)
	for _, dev := range devs {
		t.Run(fmt.Sprint("device", dev), func(t *testing.T) {
			x := make([]float32, sharedLen)
			for i := range x {
				x[i] = float32(i % 1000)
			}
			const workers, rounds = 4, 12
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					y := make([]float32, len(x))
					for round := range rounds {
						a := float32(g + round)
						for i := range y {
							y[i] = 1
						}
						if err := Target(saxpyRegion(dev, len(x), a, x, y, To(x), ToFrom(y))); err != nil {
							errs <- err
							return
						}
						for i := 0; i < len(y); i += 331 {
							if want := a*x[i] + 1; y[i] != want {
								errs <- fmt.Errorf("goroutine %d round %d: y[%d] = %g, want %g", g, round, i, y[i], want)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				assert.NoError(t, err)
			}
			if dev >= 0 {
				assert.Zero(t, r.devs[dev].table.Len(), "present table entries after every construct ended")
			}
		})
	}
}

// A kernel argument that is present (from enter data) and not named by a
// map clause is mapped for the region: a concurrent exit data that
// releases the last dynamic reference cannot free it under the kernel.
func TestPresentArgumentHeldForTheRegion(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(sharedLen)
	require.NoError(t, EnterData(0, To(x), To(y)))
	tk := TargetNowait(saxpyRegion(0, len(x), 2, x, y))
	// Released before the region's enter, x is mapped by the region itself;
	// after, the region holds a reference of its own. Either way y, which
	// stays entered, holds the kernel's result on the device.
	require.NoError(t, ExitData(0, Release(x)))
	require.NoError(t, tk.Wait())
	require.Equal(t, 1, r.devs[0].table.Len(), "present table entries: want 1 (y, still entered)")
	require.NoError(t, ExitData(0, From(y)))
	checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
}

// A Data body that panics (recovered by the caller, as a server does per
// request) or calls runtime.Goexit (t.Fatal) still leaves its region: the
// maps are exited with their copy-back, and a later construct sees fresh
// data, on every device.
func TestDataBodyPanicExitsMaps(t *testing.T) {
	r, devs := everyDevice(t)
	for _, dev := range devs {
		t.Run(fmt.Sprint("device", dev), func(t *testing.T) {
			x, y := vecs(1000)
			func() {
				defer func() {
					require.Equal(t, "boom", recover(), "recovered: want the body's panic")
				}()
				Data(dev, []Map{To(x), ToFrom(y)}, func() error {
					assert.NoError(t, Target(saxpyRegion(dev, len(x), 1, x, y)))
					panic("boom")
				})
			}()
			// The region's tofrom copied y back as it was left.
			checkSaxpy(t, 1, x, y, func(i int) float32 { return float32(2 * i) })
			done := make(chan struct{})
			go func() {
				defer close(done)
				Data(dev, []Map{ToFrom(y)}, func() error { runtime.Goexit(); return nil })
			}()
			<-done
			if dev >= 0 {
				require.Zero(t, r.devs[dev].table.Len(), "present table entries after the regions ended: %v", r.devs[dev].table.Entries())
			}
			for i := range y {
				y[i] = 10
			}
			require.NoError(t, Target(saxpyRegion(dev, len(x), 2, x, y, To(x), ToFrom(y))))
			checkSaxpy(t, 2, x, y, func(int) float32 { return 10 })
		})
	}
}

// A kernel that fails while queued (behind a large copy) is its region's
// error: the region's free of z syncs the queue first, and that sync's
// error was taken as a failed free, which the table's retry then
// "fixed", so Target returned nil. The region holding x while it fails
// does not make the later exit data of x fail either. (Which waits carry
// errors, a fill's or another construct's kernel's, is pinned in
// mapping/order_test.go: here the exit data reuses the region's queue.)
func TestOtherConstructsFailureStaysTheirs(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x := make([]float32, 16)
	for round := range 20 {
		require.NoError(t, EnterData(0, To(x)))
		z := make([]float32, sharedLen) // copied on the queue's goroutine
		err := Target(Region{Device: Dev(0), Kernel: panics, Shape: N(1), Maps: []Map{To(x), To(z)}, Args: []Arg{Int(1)}})
		require.ErrorContains(t, err, "panicked", "round %d: the failing region", round)
		require.NoError(t, ExitData(0, Delete(x)), "round %d: exit data after another construct's failed kernel", round)
	}
}
