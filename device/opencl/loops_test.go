//go:build cgo

package opencl_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopFault reports whether err is a launch's device.FaultLoopLimit.
func loopFault(err error) bool {
	var kf *device.KernelFault
	return errors.As(err, &kf) && kf.Site.Kind == device.FaultLoopLimit
}

// matmulProblem is C = A*B for 1 x k A and k x 1 B, one point.
func matmulProblem(k int) ([][]byte, []device.Arg, float32) {
	a, b := make([]float32, k), make([]float32, k)
	var want float32
	for i := range a {
		a[i], b[i] = float32(i%3), float32(i%5)
		want += a[i] * b[i]
	}
	bufs := [][]byte{nil, nil, nil, f32bytes(a), f32bytes(b), f32bytes([]float32{-1})}
	i64 := func(v int) device.Arg { return device.Arg{Bits: uint64(v)} }
	return bufs, []device.Arg{i64(1), i64(1), i64(k), {}, {}, {}}, want
}

// On a device whose driver ends a work-item's loops after 65535 turns in
// all (Mesa's llvmpipe), a launch whose work-items loop longer fails with
// a device.FaultLoopLimit, never a wrong result: a matmul point whose own
// loop runs 70000 times, and a 4x3001 matmul in one team of 4 threads,
// whose work-items loop over 750 rows each (the launch that silently left
// 22 rows unwritten). Shorter loops on the same device give the right
// result. Skipped where no OpenCL device limits loops (run with
// RUSTICL_ENABLE=swrast where Mesa's rusticl is installed).
func TestLoopLimitFailsTheLaunchNotTheResult(t *testing.T) {
	ran := false
	for _, d := range devices(t) {
		limited, why := opencl.LoopsLimited(d)
		if !limited {
			continue
		}
		ran = true
		name := d.Info().Name
		f, err := d.Load(kernels.Matmul)
		require.NoError(t, err)
		require.True(t, opencl.Guarded(f), "%s: matmul built without the loop guard (%s)", name, why)
		q, err := d.NewQueue()
		require.NoError(t, err)

		bufs, args, want := matmulProblem(1000)
		out, err := tryRun(t, d, q, f, device.Shape{Size: [3]int{1, 1, 1}}, bufs, args)
		require.NoError(t, err, "%s: a loop of 1000 turns", name)
		assert.Equal(t, want, bytesf32(out[5])[0], "%s: a loop of 1000 turns", name)

		bufs, args, _ = matmulProblem(70000)
		_, err = tryRun(t, d, q, f, device.Shape{Size: [3]int{1, 1, 1}}, bufs, args)
		require.Error(t, err, "%s: a loop of 70000 turns in one work-item gave no error", name)
		assert.True(t, loopFault(err), "%s: a loop of 70000 turns: %v, want a FaultLoopLimit", name, err)
		assert.Contains(t, err.Error(), "kernel matmul", name)
		assert.Contains(t, err.Error(), "ended its loops early", name)

		// The queue goes on after the fault.
		bufs, args, want = matmulProblem(17)
		out, err = tryRun(t, d, q, f, device.Shape{Size: [3]int{1, 1, 1}}, bufs, args)
		require.NoError(t, err, "%s: a launch after the fault", name)
		assert.Equal(t, want, bytesf32(out[5])[0], "%s: a launch after the fault", name)

		nx, ny, k := 4, 3001, 17
		rnd := func(n int) []byte {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(i%101) / 101
			}
			return f32bytes(v)
		}
		i64 := func(v int) device.Arg { return device.Arg{Bits: uint64(v)} }
		bufs = [][]byte{nil, nil, nil, rnd(ny * k), rnd(k * nx), rnd(ny * nx)}
		args = []device.Arg{i64(ny), i64(nx), i64(k), {}, {}, {}}
		_, err = tryRun(t, d, q, f, device.Shape{Size: [3]int{nx, ny, 1}, Teams: 1, Threads: 5}, bufs, args)
		assert.True(t, loopFault(err), "%s: matmul 4x3001 in one team of 5 threads: %v, want a FaultLoopLimit", name, err)
		require.NoError(t, q.Release())
	}
	if !ran {
		t.Skip("no OpenCL device ends loops early (Mesa's llvmpipe: RUSTICL_ENABLE=swrast)")
	}
}

// With the loop guard on (as on llvmpipe; here pretended), the library's
// kernels, checked ones too, take their fault record and compute what
// they compute without it, on grid-stride launches that loop too; only
// the devices that need it build kernels so (POCL does not).
func TestLoopGuardKeepsResults(t *testing.T) {
	for _, real := range devices(t) {
		if limited, why := opencl.LoopsLimited(real); !limited {
			f, err := real.Load(kernels.Saxpy)
			require.NoError(t, err)
			assert.False(t, opencl.Guarded(f), "%s builds with the loop guard though it needs none (%s)", real.Info().Name, why)
		}
		d := opencl.PretendLoopGuard(t, real)
		q, err := d.NewQueue()
		require.NoError(t, err)
		i64 := func(v int) device.Arg { return device.Arg{Bits: uint64(v)} }
		rnd := func(n int, seed float32) []byte {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(i%101)/101 + seed
			}
			return f32bytes(v)
		}
		type problem struct {
			k     *device.Kernel
			size  [3]int
			bufs  [][]byte
			args  []device.Arg
			teams int
		}
		const n = 4099
		problems := []problem{
			{kernels.Saxpy, [3]int{n, 1, 1}, [][]byte{nil, nil, rnd(n, 1), rnd(n, 2)}, []device.Arg{i64(n), {Bits: uint64(math.Float32bits(0.5))}, {}, {}}, 0},
			{kernels.Matmul, [3]int{37, 41, 1}, [][]byte{nil, nil, nil, rnd(41*17, 0), rnd(17*37, 0), rnd(41*37, -9)}, []device.Arg{i64(41), i64(37), i64(17), {}, {}, {}}, 0},
			{kernels.MatmulTiled, [3]int{4, 1, 1}, [][]byte{nil, nil, nil, nil, rnd(100*70, 0), rnd(70*90, 0), rnd(100*90, -9)}, []device.Arg{i64(4), i64(100), i64(90), i64(70), {}, {}, {}}, 0},
			{kernels.Dot, [3]int{n, 1, 1}, [][]byte{nil, rnd(n, 0), rnd(n, 1), make([]byte, 4*3)}, []device.Arg{i64(n), {}, {}, {}}, 3},
		}
		for _, p := range problems {
			f, err := d.Load(p.k)
			require.NoError(t, err)
			assert.Equal(t, !p.k.Checked(), opencl.Guarded(f), "%s: guarded %v, checked %v: the fault record is passed as its own argument exactly when the kernel has none", p.k.Name, opencl.Guarded(f), p.k.Checked())
			for _, shape := range []device.Shape{{Size: p.size, Teams: p.teams}, {Size: p.size, Teams: max(p.teams, 1), Threads: 5}} {
				if p.k == kernels.MatmulTiled {
					shape = device.Shape{Size: p.size, Teams: 4, Threads: 256}
				}
				got := run(t, d, q, f, shape, p.bufs, p.args)
				want := hostRun(p.k, shape.Size, shape.Teams*boolInt(p.k == kernels.Dot), p.bufs, p.args)
				for i, b := range want {
					if b != nil && p.k.Params[i].Kind == device.ParamBuffer {
						sameFloats(t, fmt.Sprintf("%s %+v (loop guard): %s", p.k.Name, shape, p.k.Params[i].Name), got[i], b, 1e-4)
					}
				}
			}
		}
		require.NoError(t, q.Release())
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
