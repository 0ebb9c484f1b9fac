//go:build cgo

package opencl_test

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run launches f over shape with args on q, each buffer parameter given
// its own allocation holding bufs[i] (scalars as in args), and returns
// the buffers after the launch, which must succeed.
func run(t *testing.T, d device.Device, q device.Queue, f device.Function, shape device.Shape, bufs [][]byte, args []device.Arg) [][]byte {
	t.Helper()
	out, err := tryRun(t, d, q, f, shape, bufs, args)
	require.NoError(t, err, "%s %+v: Sync", f.Kernel().Name, shape)
	return out
}

// tryRun is run for a launch that may fail at Sync: the buffers after it,
// or the error of its Sync. The allocations are freed either way.
func tryRun(t *testing.T, d device.Device, q device.Queue, f device.Function, shape device.Shape, bufs [][]byte, args []device.Arg) ([][]byte, error) {
	t.Helper()
	k := f.Kernel()
	args = append([]device.Arg(nil), args...)
	ptrs := make([]device.DevicePtr, len(k.Params))
	defer func() {
		for _, p := range ptrs {
			if p != 0 {
				require.NoError(t, d.Free(p))
			}
		}
	}()
	for i, p := range k.Params {
		if p.Kind != device.ParamBuffer {
			continue
		}
		buf, err := d.Alloc(max(len(bufs[i]), 1))
		require.NoError(t, err)
		ptrs[i] = buf.Ptr
		args[i] = device.Arg{Ptr: buf.Ptr}
		require.NoError(t, q.CopyIn(buf.Ptr, bufs[i]))
	}
	require.NoError(t, q.Launch(f, shape, args), "%s %+v", k.Name, shape)
	out := make([][]byte, len(bufs))
	for i, p := range ptrs {
		if p != 0 {
			out[i] = make([]byte, len(bufs[i]))
			require.NoError(t, q.CopyOut(out[i], p))
		}
	}
	if err := q.Sync(); err != nil {
		return nil, err
	}
	return out, nil
}

// hostRun runs k's Go image over the whole space as one team, or, with
// teams > 0, over each team's share of dimension 0 (Dot's split).
func hostRun(k *device.Kernel, size [3]int, teams int, bufs [][]byte, args []device.Arg) [][]byte {
	a := &device.HostArgs{Args: args, Kernel: k}
	for _, b := range bufs {
		a.Bufs = append(a.Bufs, append([]byte{}, b...))
	}
	var r device.Range
	for d := range 3 {
		r.Hi[d] = max(size[d], 1)
	}
	if teams == 0 {
		k.Host()(a, r, 0, 1)
		return a.Bufs
	}
	for team := range teams {
		r.Lo[0], r.Hi[0] = kernels.Chunk(size[0], teams, team)
		k.Host()(a, r, team, teams)
	}
	return a.Bufs
}

func sameFloats(t *testing.T, what string, got, want []byte, tol float64) {
	t.Helper()
	g, w := bytesf32(got), bytesf32(want)
	for i := range w {
		d := math.Abs(float64(g[i] - w[i]))
		require.LessOrEqual(t, d, tol*max(1, math.Abs(float64(w[i]))), "%s: element %d of %d", what, i, len(w))
		require.False(t, math.IsNaN(float64(g[i])), "%s: element %d of %d = %g, want %g", what, i, len(w), g[i], w[i])
	}
}

// The library's kernels compute the Go image's result for any launch
// shape: sizes that are not multiples of any work-group size, 2-D spaces
// narrow in dimension 0 or 1, any number of teams (spread over the
// dimensions) and threads, on both the one-item-per-point and the
// grid-stride paths of the device code.
func TestLibraryKernelsAnyShape(t *testing.T) {
	for _, d := range devices(t) {
		q, err := d.NewQueue()
		require.NoError(t, err)
		type problem struct {
			k    *device.Kernel
			size [3]int
			bufs [][]byte
			args []device.Arg
			tol  float64
			body int // turns of the body's loops per point
		}
		rnd := func(n int, seed float32) []byte {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(i%101)/101 + seed
			}
			return f32bytes(v)
		}
		i64 := func(v int) device.Arg { return device.Arg{Bits: uint64(v)} }
		var problems []problem
		for _, n := range []int{1, 33, 4099, 100003} {
			problems = append(problems,
				problem{kernels.Saxpy, [3]int{n, 1, 1}, [][]byte{nil, nil, rnd(n, 1), rnd(n, 2)}, []device.Arg{i64(n), {Bits: uint64(math.Float32bits(0.5))}, {}, {}}, 1e-6, 0},
				problem{kernels.VecAdd, [3]int{n, 1, 1}, [][]byte{nil, rnd(n, 1), rnd(n, 2), rnd(n, -9)}, []device.Arg{i64(n), {}, {}, {}}, 1e-6, 0},
				problem{kernels.Fill, [3]int{n, 1, 1}, [][]byte{nil, nil, rnd(n, -9)}, []device.Arg{i64(n), {Bits: uint64(math.Float32bits(3))}, {}}, 0, 0},
				problem{kernels.Copy32, [3]int{n, 1, 1}, [][]byte{nil, rnd(n, 1), rnd(n, -9)}, []device.Arg{i64(n), {}, {}}, 0, 0},
			)
		}
		for _, s := range [][2]int{{3, 3}, {4, 3001}, {3001, 4}, {37, 41}, {130, 67}} {
			nx, ny := s[0], s[1]
			problems = append(problems,
				problem{kernels.Jacobi, [3]int{nx, ny, 1}, [][]byte{nil, nil, rnd(nx*ny, 1), rnd(nx*ny, -9)}, []device.Arg{i64(nx), i64(ny), {}, {}}, 1e-6, 0},
				// C is ny x nx (Size = [n, m]) with an inner dimension of 17.
				problem{kernels.Matmul, [3]int{nx, ny, 1}, [][]byte{nil, nil, nil, rnd(ny*17, 0), rnd(17*nx, 0), rnd(ny*nx, -9)},
					[]device.Arg{i64(ny), i64(nx), i64(17), {}, {}, {}}, 1e-5, 18},
			)
		}
		for _, p := range problems {
			f, err := d.Load(p.k)
			require.NoError(t, err)
			want := hostRun(p.k, p.size, 0, p.bufs, p.args)
			for _, teams := range []int{0, 1, 3, 7, 64} {
				for _, threads := range []int{0, 5, 100} {
					shape := device.Shape{Size: p.size, Teams: teams, Threads: threads}
					got, err := tryRun(t, d, q, f, shape, p.bufs, p.args)
					g, l, _ := opencl.LaunchGeometry(f, shape)
					if err != nil {
						// Each work-item loops over its points grid-stride.
						points := 1
						for i := range 3 {
							points *= (max(p.size[i], 1) + g[i] - 1) / g[i]
						}
						acceptLoopFault(t, d, err, points*(p.body+1), fmt.Sprintf("%s size %v teams %d threads %d (global %v local %v)", p.k.Name, p.size, teams, threads, g, l))
						continue
					}
					for i, b := range want {
						if b != nil && p.k.Params[i].Kind == device.ParamBuffer {
							sameFloats(t, fmt.Sprintf("%s size %v teams %d threads %d (global %v local %v): %s",
								p.k.Name, p.size, teams, threads, g, l, p.k.Params[i].Name), got[i], b, p.tol)
						}
					}
				}
			}
		}
		// Dot: one partial per team, whatever the team count, including
		// more teams than elements and teams of one element per thread.
		f, err := d.Load(kernels.Dot)
		require.NoError(t, err)
		for _, n := range []int{1, 1000, 65537} {
			for _, teams := range []int{1, 3, 7, 257, 1100} {
				for _, threads := range []int{1, 5, 64, 256} {
					bufs := [][]byte{nil, rnd(n, 0), rnd(n, 1), make([]byte, 4*teams)}
					args := []device.Arg{i64(n), {}, {}, {}}
					shape := device.Shape{Size: [3]int{n, 1, 1}, Teams: teams, Threads: threads}
					got, err := tryRun(t, d, q, f, shape, bufs, args)
					if err != nil {
						// Each work-item combines its share of its team's.
						_, l, _ := opencl.LaunchGeometry(f, shape)
						share := (n + teams - 1) / teams
						acceptLoopFault(t, d, err, (share+l[0]-1)/l[0], fmt.Sprintf("dot n %d teams %d threads %d", n, teams, threads))
						continue
					}
					want := hostRun(kernels.Dot, shape.Size, teams, bufs, args)
					sameFloats(t, fmt.Sprintf("dot n %d teams %d threads %d", n, teams, threads), got[3], want[3], 1e-4)
				}
			}
		}
		require.NoError(t, q.Release())
	}
}

// acceptLoopFault passes a launch that failed with a device.FaultLoopLimit
// on a device whose driver ends a work-item's loops after 65535 turns in
// all (Mesa's llvmpipe), where its work-items loop turns times (an
// estimate) and that is at least half the limit; any other failure fails
// the test.
func acceptLoopFault(t *testing.T, d device.Device, err error, turns int, what string) {
	t.Helper()
	limited, why := opencl.LoopsLimited(d)
	require.True(t, limited && loopFault(err), "%s: %v (device limits loops: %v, %s)", what, err, limited, why)
	require.GreaterOrEqual(t, turns, 65535/2, "%s: failed with a FaultLoopLimit, but its work-items loop about %d times", what, turns)
	t.Logf("%s on %s: its work-items loop about %d times: %v", what, d.Info().Name, turns, err)
}

// Many goroutines launch the same kernel on several queues at once, each
// with its own arguments, half of them through interior pointers into
// shared buffers (cached sub-buffers), while other goroutines allocate
// and free buffers (which empties sub-buffer cache entries): every result
// is right. Run with -race.
func TestConcurrentLaunchesOfOneKernel(t *testing.T) {
	for _, d := range devices(t) {
		f, err := d.Load(kernels.Saxpy)
		require.NoError(t, err)
		align := baseAlign(t, d)
		const (
			workers = 8
			queues  = 3
			rounds  = 40
			n       = 1000
		)
		seg := (4*n + align - 1) / align * align // bytes per worker in the shared buffers, aligned
		shared := [2]device.Buffer{}
		for i := range shared {
			shared[i], err = d.Alloc(workers * seg)
			require.NoError(t, err)
		}
		qs := make([]device.Queue, queues)
		for i := range qs {
			qs[i], err = d.NewQueue()
			require.NoError(t, err)
		}
		var qmu [queues]sync.Mutex // one goroutine enqueues on a queue at a time
		stop := make(chan struct{})
		var churn sync.WaitGroup
		churn.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				b, err := d.Alloc(4096)
				if !assert.NoError(t, err) {
					return
				}
				if !assert.NoError(t, d.Free(b.Ptr)) {
					return
				}
			}
		})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				interior := w%2 == 1
				var x, y device.DevicePtr
				if interior {
					x = shared[0].Ptr + device.DevicePtr(w*seg)
					y = shared[1].Ptr + device.DevicePtr(w*seg)
				} else {
					bx, err := d.Alloc(4 * n)
					if !assert.NoError(t, err) {
						return
					}
					by, err := d.Alloc(4 * n)
					if !assert.NoError(t, err) {
						return
					}
					defer d.Free(bx.Ptr)
					defer d.Free(by.Ptr)
					x, y = bx.Ptr, by.Ptr
				}
				xs, ys := make([]float32, n), make([]float32, n)
				for i := range xs {
					xs[i], ys[i] = float32(i), float32(w)
				}
				for r := range rounds {
					qi := (w + r) % queues
					q := qs[qi]
					a := float32(r%5 + 1)
					got := make([]byte, 4*n)
					qmu[qi].Lock()
					err := q.CopyIn(x, f32bytes(xs))
					if err == nil {
						err = q.CopyIn(y, f32bytes(ys))
					}
					if err == nil {
						err = q.Launch(f, device.Shape{Size: [3]int{n}, Threads: []int{0, 5, 64}[r%3]},
							[]device.Arg{{Bits: n}, {Bits: uint64(math.Float32bits(a))}, {Ptr: x}, {Ptr: y}})
					}
					if err == nil {
						err = q.CopyOut(got, y)
					}
					if err == nil {
						err = q.Sync()
					}
					qmu[qi].Unlock()
					if !assert.NoError(t, err, "worker %d round %d", w, r) {
						return
					}
					for i, v := range bytesf32(got) {
						if !assert.Equal(t, a*xs[i]+ys[i], v, "worker %d round %d (queue %d, interior %v): y[%d]", w, r, qi, interior, i) {
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		churn.Wait()
		for _, q := range qs {
			require.NoError(t, q.Release())
		}
		for _, b := range shared {
			require.NoError(t, d.Free(b.Ptr))
		}
	}
}

// Launches through the same interior pointer reuse one sub-buffer, kept
// until the buffer is freed, instead of creating and releasing one per
// launch.
func TestSubBufferReused(t *testing.T) {
	for _, d := range devices(t) {
		align := baseAlign(t, d)
		f, err := d.Load(kernels.Fill)
		require.NoError(t, err)
		q, err := d.NewQueue()
		require.NoError(t, err)
		trimCache(t, d) // no block of an earlier test, with its sub-buffers
		buf, err := d.Alloc(4 * align)
		require.NoError(t, err)
		before := cl.Live().Mems
		n := align / 4 // floats from the interior pointer to the end
		for i := range 100 {
			v := float32(i)
			require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{n}}, []device.Arg{{Bits: uint64(n)}, {Bits: uint64(math.Float32bits(v))}, {Ptr: buf.Ptr + device.DevicePtr(3*align)}}))
		}
		got := make([]byte, 4*align)
		require.NoError(t, q.CopyOut(got, buf.Ptr))
		require.NoError(t, q.Sync())
		for i, v := range bytesf32(got) {
			if want := float32(0); i >= 3*align/4 {
				want = 99
				require.Equal(t, want, v, "element %d", i)
			}
		}
		// With the loop guard (llvmpipe), the queue's fault record too,
		// made at its first launch and kept until it is released.
		record := int64(0)
		if opencl.Guarded(f) {
			record = 1
		}
		before += record
		live := cl.Live().Mems
		assert.Equal(t, before+1, live, "live memory objects after 100 launches through one interior pointer, want %d (one cached sub-buffer)", before+1)
		assert.EqualValues(t, 1, opencl.CachedSubBuffers(d), "cached sub-buffers, want 1")
		require.NoError(t, d.Free(buf.Ptr))
		trimCache(t, d)
		live = cl.Live().Mems
		assert.Equal(t, before-1, live, "live memory objects after Free and Trim, want %d: the buffer and its sub-buffer released", before-1)
		assert.Zero(t, opencl.CachedSubBuffers(d), "cached sub-buffers after Free, want 0")
		require.NoError(t, q.Release())
	}
}
