package launch_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gompt/gompt/kernels/launch"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A chain of nowait launchers, ordered by depend items alone (nothing
// waits until the end), computes on every device what the synchronous
// launchers compute one after another: fill x, two saxpys into y, the dot
// of x and y, and a vecadd that depends on the dot's task (DependOn).
func TestNowaitDependChain(t *testing.T) {
	const n = 5003
	for _, dev := range devices() {
		what := target.Describe(dev.Num())
		x := make([]float32, n)
		y := floats(n, func(i int) float32 { return float32(i % 9) })
		z := make([]float32, n)
		t1 := launch.RunFillNowait(dev, n, 0.5, x, target.DependOut(x))
		t2 := launch.RunSaxpyNowait(dev, n, 2, x, y, target.DependIn(x), target.DependInOut(y))
		t3 := launch.RunSaxpyNowait(dev, n, 4, x, y, target.DependIn(x), target.DependInOut(y))
		dot := launch.RunDotNowait(dev, n, x, y, target.DependIn(x), target.DependIn(y))
		t4 := launch.RunVecAddNowait(dev, n, x, y, z, target.DependOn(dot.Task()), target.DependOut(z))
		for i, tk := range []*target.Task{t1, t2, t3, t4} {
			require.NoError(t, tk.Wait(), "%s: task %d", what, i+1)
		}
		d, err := dot.Wait()
		require.NoError(t, err, what)
		var want float64
		for i := range n {
			yi := float32(i%9) + 2*0.5 + 4*0.5
			require.Equal(t, yi, y[i], "%s: y[%d]", what, i)
			require.Equal(t, 0.5+yi, z[i], "%s: z[%d]", what, i)
			want += 0.5 * float64(yi)
		}
		assert.InEpsilon(t, want, float64(d), 1e-5, "%s: dot", what)
	}
}

// A nowait reduction's value is read only through its Result's Wait, which
// every caller may call, from any goroutine, and which gives the same value
// each time; Done is closed by then; an empty space gives the identity.
func TestNowaitReductionValue(t *testing.T) {
	const n = 1 << 16
	x := floats(n, func(i int) float32 { return float32(i%4) - 1 })
	y := floats(n, func(i int) float32 { return 2 })
	for _, dev := range devices() {
		what := target.Describe(dev.Num())
		r := launch.RunDotNowait(dev, n, x, y)
		var wg sync.WaitGroup
		got := make([]float32, 4)
		for g := range got {
			wg.Go(func() {
				v, err := r.Wait()
				assert.NoError(t, err, what)
				got[g] = v
			})
		}
		wg.Wait()
		<-r.Done()
		assert.Equal(t, []float32{n, n, n, n}, got, "%s: sum of 2*(i%%4-1) over %d points", what, n)

		e := launch.RunDotNowait(dev, 0, nil, nil)
		v, err := e.Wait()
		assert.NoError(t, err, what)
		assert.Zero(t, v, what)
	}
}

// An error a synchronous launcher returns before it runs (a slice shorter
// than the kernel's length) reaches the nowait form's Wait, with the same
// words; a reduction's Result gives it with the zero value; constructs
// that depend on the failed one fail with target.ErrDependence and run
// nothing.
func TestNowaitErrors(t *testing.T) {
	for _, dev := range devices() {
		what := target.Describe(dev.Num())
		x, short := make([]float32, 10), make([]float32, 3)
		syncErr := launch.RunSaxpy(dev, 10, 1, x, short)
		require.Error(t, syncErr, what)
		bad := launch.RunSaxpyNowait(dev, 10, 1, x, short, target.DependOut(x))
		err := bad.Wait()
		if assert.Error(t, err, what) {
			assert.Equal(t, syncErr.Error(), err.Error(), "%s: the nowait form's error is the synchronous one's", what)
		}
		after := launch.RunFillNowait(dev, 10, 7, x, target.DependOn(bad))
		assert.ErrorIs(t, after.Wait(), target.ErrDependence, what)
		assert.Equal(t, make([]float32, 10), x, "%s: a fill that depends on a failed launch runs nothing", what)

		r := launch.RunDotNowait(dev, 10, x, short)
		v, err := r.Wait()
		assert.Error(t, err, what)
		assert.Zero(t, v, what)
		r = launch.RunDotNowait(dev, 10, x, x, target.DependOn(bad))
		_, err = r.Wait()
		assert.ErrorIs(t, err, target.ErrDependence, what)
	}
	bad := launch.RunSaxpyNowait(target.Dev(1<<20), 4, 1, make([]float32, 4), make([]float32, 4))
	assert.ErrorIs(t, bad.Wait(), target.ErrDevice, "a device that is not there")
}

// Goroutines launch nowait chains at once, each on its own slices: every
// chain gives its own answer.
func TestNowaitFromGoroutines(t *testing.T) {
	const n, workers = 4099, 6
	for _, dev := range devices() {
		what := target.Describe(dev.Num())
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for w := range workers {
			wg.Go(func() {
				x := floats(n, func(i int) float32 { return float32(w) })
				y := make([]float32, n)
				var tasks []*target.Task
				for r := range 3 {
					tasks = append(tasks, launch.RunSaxpyNowait(dev, n, float32(r+1), x, y, target.DependIn(x), target.DependInOut(y)))
				}
				dot := launch.RunDotNowait(dev, n, x, y, target.DependIn(y))
				for _, tk := range tasks {
					if err := tk.Wait(); err != nil {
						errs[w] = err
						return
					}
				}
				d, err := dot.Wait()
				if err != nil {
					errs[w] = err
					return
				}
				for i := range y {
					if y[i] != 6*float32(w) {
						errs[w] = fmt.Errorf("worker %d: y[%d] = %v, want %v", w, i, y[i], 6*float32(w))
						return
					}
				}
				if want := float32(n * 6 * w * w); d != want {
					errs[w] = fmt.Errorf("worker %d: dot = %v, want %v", w, d, want)
				}
			})
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...), what)
	}
}

// The nowait forms keep data already present on the device (a Data
// region): the pipeline's pattern, update to, kernels, update from, all
// nowait and ordered by depend items.
func TestNowaitInsideData(t *testing.T) {
	const n = 1000
	for _, dev := range devices() {
		what := target.Describe(dev.Num())
		x := floats(n, func(i int) float32 { return float32(i) })
		y := make([]float32, n)
		require.NoError(t, target.EnterData(dev.Num(), target.Alloc(x), target.Alloc(y)), what)
		tasks := []*target.Task{
			target.UpdateNowait(dev.Num(), target.To(x), target.To(y), target.DependOut(x), target.DependOut(y)),
			launch.RunSaxpyNowait(dev, n, 3, x, y, target.DependIn(x), target.DependInOut(y)),
			target.UpdateNowait(dev.Num(), target.From(y), target.DependIn(y)),
		}
		for i, tk := range tasks {
			require.NoError(t, tk.Wait(), "%s: task %d", what, i)
		}
		require.NoError(t, target.ExitData(dev.Num(), target.Delete(x), target.Delete(y)), what)
		for i := range y {
			require.Equal(t, 3*x[i], y[i], "%s: y[%d]", what, i)
		}
	}
}

// RunMatmul over an empty C runs nothing on every device, whichever kernel
// the device gets: the base's empty space is its variant's too.
func TestMatmulEmptyOnEveryDevice(t *testing.T) {
	for _, dev := range devices() {
		what := target.Describe(dev.Num())
		assert.NoError(t, launch.RunMatmul(dev, 0, 5, 3, nil, nil, nil), what)
		assert.NoError(t, launch.RunMatmul(dev, 4, 0, 3, nil, nil, nil), what)
		assert.NoError(t, launch.RunMatmulNowait(dev, 0, 5, 3, nil, nil, nil).Wait(), what)
		assert.NoError(t, launch.RunMatmulTiled(dev, 0, 5, 3, nil, nil, nil), what)
	}
}
