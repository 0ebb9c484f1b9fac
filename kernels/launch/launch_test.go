package launch_test

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/gompt/gompt/kernels/launch"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func devices() []target.DeviceClause {
	devs := []target.DeviceClause{target.Dev(target.InitialDevice)}
	for _, d := range target.Devices() {
		devs = append(devs, target.Dev(d.Num))
	}
	return devs
}

func floats(n int, f func(i int) float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}

// Each launcher computes what its Go function computes at every point, on
// every device, bit for bit (Dot within float32 rounding).
func TestLaunchers(t *testing.T) {
	const n = 10007
	x := floats(n, func(i int) float32 { return float32(i%97)/7 - 3 })
	y0 := floats(n, func(i int) float32 { return float32(i%13) * 0.3 })
	for _, dev := range devices() {
		what := target.Describe(dev.Num())

		y := append([]float32(nil), y0...)
		require.NoError(t, launch.RunSaxpy(dev, n, 0.7, x, y), what)
		for i := range y {
			require.Equal(t, 0.7*x[i]+y0[i], y[i], "%s: saxpy y[%d]", what, i)
		}

		c := make([]float32, n)
		require.NoError(t, launch.RunVecAdd(dev, n, x, y0, c), what)
		for i := range c {
			require.Equal(t, x[i]+y0[i], c[i], "%s: vecadd c[%d]", what, i)
		}

		require.NoError(t, launch.RunFill(dev, n, -2.5, c), what)
		for i := range c {
			require.Equal(t, float32(-2.5), c[i], "%s: fill c[%d]", what, i)
		}

		src, dst := make([]int32, n), make([]int32, n)
		for i := range src {
			src[i] = int32(i * 7919)
		}
		require.NoError(t, launch.RunCopy32(dev, n, src, dst), what)
		assert.Equal(t, src, dst, "%s: copy32", what)

		d, err := launch.RunDot(dev, n, x, y0)
		require.NoError(t, err, what)
		var want float64
		for i := range x {
			want += float64(x[i]) * float64(y0[i])
		}
		assert.InEpsilon(t, want, float64(d), 1e-5, "%s: dot", what)

		const nx, ny = 67, 45
		in := floats(nx*ny, func(i int) float32 { return float32(i%11) / 3 })
		out := make([]float32, nx*ny)
		require.NoError(t, launch.RunJacobi(dev, nx, ny, in, out), what)
		for yy := range ny {
			for xx := range nx {
				i := yy*nx + xx
				w := in[i]
				if xx > 0 && yy > 0 && xx < nx-1 && yy < ny-1 {
					w = 0.25 * (in[i-nx] + in[i+nx] + in[i-1] + in[i+1])
				}
				require.Equal(t, w, out[i], "%s: jacobi (%d, %d)", what, xx, yy)
			}
		}

		const m, k, nn = 33, 17, 29
		A := floats(m*k, func(i int) float32 { return float32(i%5) - 1.5 })
		B := floats(k*nn, func(i int) float32 { return float32(i%7) * 0.25 })
		C := make([]float32, m*nn)
		require.NoError(t, launch.RunMatmul(dev, m, nn, k, A, B, C), what)
		for i := range m {
			for j := range nn {
				var acc float32
				for p := range k {
					acc += A[i*k+p] * B[p*nn+j]
				}
				require.Equal(t, acc, C[i*nn+j], "%s: matmul C[%d][%d]", what, i, j)
			}
		}
		require.NoError(t, launch.RunEmpty(dev, 5), what)
	}
}

// A launcher maps slices as the kernel uses them: data already present
// (a Data region) is not copied back by it, only at the region's end.
func TestLaunchersKeepPresentData(t *testing.T) {
	for _, dev := range devices() {
		if dev.Num() == target.InitialDevice {
			continue // no separate memory
		}
		what := target.Describe(dev.Num())
		x := []float32{1, 2, 3, 4}
		y := []float32{10, 20, 30, 40}
		err := target.Data(dev.Num(), []target.Map{target.To(x), target.ToFrom(y)}, func() error {
			if err := launch.RunSaxpy(dev, 4, 2, x, y); err != nil {
				return err
			}
			assert.Equal(t, []float32{10, 20, 30, 40}, y, "%s: y inside the region, before its end", what)
			return nil
		})
		require.NoError(t, err, what)
		assert.Equal(t, []float32{12, 24, 36, 48}, y, "%s: y after the region", what)
	}
}

// A short slice is refused by the runtime with the kernel's and the
// argument's names; an empty iteration space runs nothing; a reduction
// over nothing is its identity.
func TestLauncherEdges(t *testing.T) {
	for _, dev := range devices() {
		what := target.Describe(dev.Num())
		err := launch.RunSaxpy(dev, 10, 1, make([]float32, 10), make([]float32, 3))
		if assert.Error(t, err, what) {
			assert.Contains(t, err.Error(), "saxpy", what)
			assert.Contains(t, err.Error(), "(y)", what)
		}
		assert.NoError(t, launch.RunSaxpy(dev, 0, 1, nil, nil), what)
		assert.NoError(t, launch.RunJacobi(dev, 5, -1, nil, nil), what)
		d, err := launch.RunDot(dev, 0, nil, nil)
		assert.NoError(t, err, what)
		assert.Zero(t, d, what)
		d, err = launch.RunDot(dev, 3, []float32{1, 2, float32(math.Inf(1))}, []float32{1, 1, 0})
		assert.NoError(t, err, what)
		assert.True(t, math.IsNaN(float64(d)), "%s: Inf*0 in a dot product is NaN, got %v", what, d)
	}
}

// Goroutines run saxpy at once on disjoint sub-slices of one array mapped
// on a device, at element offsets whose byte offsets are multiples of no
// base address alignment (rusticl's and NVIDIA's 512 bytes, POCL's 128):
// every launch passes its arguments at odd offsets into the device
// buffers, and every element comes out as plain Go computes it, with
// nothing outside the sub-slices changed.
func TestSaxpyOnUnalignedSubSlicesOfOneMappedArray(t *testing.T) {
	const n, parts = 1<<16 + 37, 8
	const a = float32(1.5)
	x := floats(n, func(i int) float32 { return float32(i%101) - 50 })
	y0 := floats(n, func(i int) float32 { return float32(i%13) * 0.5 })
	// Part p runs over [lo[p], lo[p]+m[p]): odd offsets, so 4*lo[p] is
	// no multiple of 8, and gaps between the parts that no launch writes.
	step := n / parts
	var lo, m [parts]int
	for p := range parts {
		lo[p] = p*step + 2*p + 1
		m[p] = step - 3*p - 7
	}
	for _, dev := range devices() {
		if dev.Num() == target.InitialDevice {
			continue // no device buffers
		}
		what := target.Describe(dev.Num())
		y := append([]float32(nil), y0...)
		err := target.Data(dev.Num(), []target.Map{target.To(x), target.ToFrom(y)}, func() error {
			var wg sync.WaitGroup
			errs := make([]error, parts)
			for p := range parts {
				wg.Go(func() {
					errs[p] = launch.RunSaxpy(dev, m[p], a, x[lo[p]:], y[lo[p]:])
				})
			}
			wg.Wait()
			return errors.Join(errs...)
		})
		require.NoError(t, err, what)
		want := append([]float32(nil), y0...)
		for p := range parts {
			for i := lo[p]; i < lo[p]+m[p]; i++ {
				want[i] = a*x[i] + y0[i]
			}
		}
		for i := range want {
			require.Equal(t, want[i], y[i], "%s: y[%d]", what, i)
		}
	}
}
