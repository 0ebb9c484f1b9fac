//go:build cgo

package cuda

import (
	"errors"
	"math"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProfileOffTouchesNothing runs without a GPU: a queue with profiling
// off makes no timing and never reaches for its device (it has none here),
// and Last is nil until an operation is timed.
func TestProfileOffTouchesNothing(t *testing.T) {
	q := &queue{}
	var p device.Profiler = q
	require.Nil(t, p.Last(), "Last of a fresh queue")
	tm := q.startTiming()
	require.Nil(t, tm, "startTiming with profiling off")
	q.endTiming(tm, typeHtoD, 0, nil)
	q.endTiming(tm, typeHtoD, 0, errors.New("enqueue failed"))
	assert.Nil(t, p.Last(), "after an operation with profiling off: Last %v, %d timings; want nil, 0", p.Last(), q.timings.Len())
	assert.Zero(t, q.timings.Len(), "after an operation with profiling off: Last %v, %d timings; want nil, 0", p.Last(), q.timings.Len())
	q.finishTimings() // nothing to read
	p.Profile(true)
	assert.True(t, q.Profiling(), "Profile(true) did not switch profiling on")
	p.Profile(false)
	assert.False(t, q.Profiling(), "Profile(false) did not switch profiling off")
}

// TestTimingError: a timing whose events could not be recorded reports
// that error from Times, every time, and holds no event.
func TestTimingError(t *testing.T) {
	want := device.Errorf("cuda:0", "profile", device.CodeOutOfResources, "no event")
	tm := &timing{q: &queue{}, typ: typeKernel, done: true, err: want}
	for range 2 {
		b, e, n, err := tm.Times()
		assert.Same(t, want, err, "Times = %d, %d, %+v, %v; want zero times and %v", b, e, n, err, want)
		assert.Zero(t, b, "Times = %d, %d, %+v, %v; want zero times and %v", b, e, n, err, want)
		assert.Zero(t, e, "Times = %d, %d, %+v, %v; want zero times and %v", b, e, n, err, want)
		assert.Equal(t, device.NativeNone, n.Kind, "Times = %d, %d, %+v, %v; want zero times and %v", b, e, n, err, want)
	}
}

// liveEvents is the number of CUDA events made by the plugin that are
// neither in g's pool nor staging slots' (made on first use, one each):
// those in use.
func liveEvents(g *gpu) int64 {
	g.events.mu.Lock()
	defer g.events.mu.Unlock()
	live, _ := g.staging.Counts()
	return cu.LiveObjects().Events - int64(len(g.events.free)) - int64(live)
}

// TestProfile (GPU) times a small copy in, a staged copy in, a launch with
// 7 teams, a copy on the device and a copy out with profiling on: each
// timing lies within clock readings taken before the first enqueue and
// after the Sync, in stream order, with its native record (interval,
// stream, context, queue number, teams). Each operation holds two events
// until the queue syncs; with profiling off none is taken.
func TestProfile(t *testing.T) {
	for _, d := range gpus(t) {
		t.Run(d.Info().Name, func(t *testing.T) {
			g := d.(*gpu)
			f, err := d.Load(kernels.Saxpy)
			must(t, "Load", err)
			const n = 1 << 20 // 4 MiB: above stagingMin, so CopyIn of x is staged
			x, y := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], y[i] = float32(i), 1
			}
			bx, err := d.Alloc(4 * n)
			must(t, "Alloc", err)
			defer d.Free(bx.Ptr)
			by, err := d.Alloc(4 * n)
			must(t, "Alloc", err)
			defer d.Free(by.Ptr)
			bz, err := d.Alloc(4 * n)
			must(t, "Alloc", err)
			defer d.Free(bz.Ptr)
			q, err := d.NewQueue()
			must(t, "NewQueue", err)
			defer q.Release()
			p := q.(device.Profiler)
			base := liveEvents(g)

			p.Profile(true)
			before, err := d.Now()
			must(t, "Now", err)
			var tms []device.Timing
			step := func(what string, err error) {
				t.Helper()
				must(t, what, err)
				tms = append(tms, p.Last())
			}
			step("CopyIn", q.CopyIn(bx.Ptr, device.Bytes(x)))
			step("CopyIn", q.CopyIn(by.Ptr, device.Bytes(y[:1024]))) // direct
			must(t, "CopyIn", q.CopyIn(by.Ptr+4096, device.Bytes(y[1024:])))
			args := []device.Arg{{Bits: n}, {Bits: uint64(math.Float32bits(2))}, {Ptr: bx.Ptr}, {Ptr: by.Ptr}}
			step("Launch", q.Launch(f, device.Shape{Size: [3]int{n}, Teams: 7, Threads: 128}, args))
			step("Copy", q.Copy(bz.Ptr, by.Ptr, 4*n))
			got := make([]float32, n)
			step("CopyOut", q.CopyOut(device.Bytes(got), bz.Ptr))
			held := liveEvents(g) - base
			assert.Equal(t, 2*6, held, "events held by 6 profiled operations before Sync, want 12")
			must(t, "Sync", q.Sync())
			after, err := d.Now()
			must(t, "Now", err)
			held = liveEvents(g) - base
			assert.Zero(t, held, "events held after Sync, want 0")
			for i := range got {
				require.Equal(t, 2*float32(i)+1, got[i], "y[%d]", i)
			}
			types := []string{typeHtoD, typeHtoD, typeKernel, typeDtoD, typeDtoH}
			teams := []int{0, 0, 7, 0, 0}
			var prevEnd int64
			for i, tm := range tms {
				begin, end, nat, err := tm.Times()
				must(t, types[i]+" Times", err)
				assert.Positive(t, begin, "%s: [%d, %d], want 0 < begin <= end within the clock readings [%d, %d]", types[i], begin, end, before, after)
				assert.GreaterOrEqual(t, end, begin, "%s: [%d, %d], want 0 < begin <= end within the clock readings [%d, %d]", types[i], begin, end, before, after)
				assert.GreaterOrEqual(t, begin, before, "%s: [%d, %d], want 0 < begin <= end within the clock readings [%d, %d]", types[i], begin, end, before, after)
				assert.LessOrEqual(t, end, after, "%s: [%d, %d], want 0 < begin <= end within the clock readings [%d, %d]", types[i], begin, end, before, after)
				assert.GreaterOrEqual(t, begin, prevEnd, "%s begins at %d, before the previous operation ended at", types[i], begin)
				prevEnd = end
				w, ok := device.RecordOf[Record](nat)
				assert.True(t, ok, "%s: native %+v, want NativeCUDA {begin, end, stream, context}", types[i], nat)
				assert.Equal(t, begin, int64(w.Start), "%s: native %+v, want NativeCUDA {begin, end, stream, context}", types[i], nat)
				assert.Equal(t, end, int64(w.End), "%s: native %+v, want NativeCUDA {begin, end, stream, context}", types[i], nat)
				assert.NotZero(t, w.Stream, "%s: native %+v, want NativeCUDA {begin, end, stream, context}", types[i], nat)
				assert.NotZero(t, w.Context, "%s: native %+v, want NativeCUDA {begin, end, stream, context}", types[i], nat)
				assert.Equal(t, types[i], nat.Type, "%s: native type", types[i])
				assert.Equal(t, teams[i], nat.Teams, "%s: native teams", types[i])
				assert.Equal(t, q.(*queue).num, nat.HWID, "%s: native hwid", types[i])
				assert.NotZero(t, nat.HWID, "%s: native hwid", types[i])
			}

			// Read before the queue syncs: Times waits and gives the events back.
			must(t, "CopyIn", q.CopyIn(by.Ptr, device.Bytes(y[:16])))
			tm := p.Last()
			_, _, _, err = tm.Times()
			require.NoError(t, err)
			held = liveEvents(g) - base
			assert.Zero(t, held, "events held after Times, want 0")
			p.Profile(false)
			must(t, "CopyIn", q.CopyIn(by.Ptr, device.Bytes(y[:16])))
			if held := liveEvents(g) - base; assert.Zero(t, held, "profiling off: %d events held, Last changed: %v", held, p.Last() != tm) {
				assert.Same(t, tm, p.Last(), "profiling off: %d events held, Last changed: %v", held, p.Last() != tm)
			}
			must(t, "Sync", q.Sync())
		})
	}
}
