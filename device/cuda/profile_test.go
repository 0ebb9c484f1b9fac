//go:build cgo

package cuda

import (
	"errors"
	"math"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/cu"
	"github.com/gompt/gompt/kernels"
)

// TestProfileOffTouchesNothing runs without a GPU: a queue with profiling
// off makes no timing and never reaches for its device (it has none here),
// and Last is nil until an operation is timed.
func TestProfileOffTouchesNothing(t *testing.T) {
	q := &queue{}
	var p device.Profiler = q
	if p.Last() != nil {
		t.Fatalf("Last of a fresh queue = %v, want nil", p.Last())
	}
	tm := q.startTiming()
	if tm != nil {
		t.Fatalf("startTiming with profiling off = %v, want nil", tm)
	}
	q.endTiming(tm, typeHtoD, 0, nil)
	q.endTiming(tm, typeHtoD, 0, errors.New("enqueue failed"))
	if p.Last() != nil || len(q.timings) != 0 {
		t.Errorf("after an operation with profiling off: Last %v, %d timings; want nil, 0", p.Last(), len(q.timings))
	}
	q.finishTimings() // nothing to read
	p.Profile(true)
	if !q.prof {
		t.Error("Profile(true) did not switch profiling on")
	}
	p.Profile(false)
	if q.prof {
		t.Error("Profile(false) did not switch profiling off")
	}
}

// TestTimingError: a timing whose events could not be recorded reports
// that error from Times, every time, and holds no event.
func TestTimingError(t *testing.T) {
	want := device.Errorf("cuda:0", "profile", device.CodeOutOfResources, "no event")
	tm := &timing{q: &queue{}, typ: typeKernel, done: true, err: want}
	for range 2 {
		b, e, n, err := tm.Times()
		if err != want || b != 0 || e != 0 || n.Kind != device.NativeNone {
			t.Errorf("Times = %d, %d, %+v, %v; want zero times and %v", b, e, n, err, want)
		}
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
			if held := liveEvents(g) - base; held != 2*6 {
				t.Errorf("%d events held by 6 profiled operations before Sync, want 12", held)
			}
			must(t, "Sync", q.Sync())
			after, err := d.Now()
			must(t, "Now", err)
			if held := liveEvents(g) - base; held != 0 {
				t.Errorf("%d events held after Sync, want 0", held)
			}
			for i := range got {
				if want := 2*float32(i) + 1; got[i] != want {
					t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
				}
			}
			types := []string{typeHtoD, typeHtoD, typeKernel, typeDtoD, typeDtoH}
			teams := []int{0, 0, 7, 0, 0}
			var prevEnd int64
			for i, tm := range tms {
				begin, end, nat, err := tm.Times()
				must(t, types[i]+" Times", err)
				if begin <= 0 || end < begin || begin < before || end > after {
					t.Errorf("%s: [%d, %d], want 0 < begin <= end within the clock readings [%d, %d]", types[i], begin, end, before, after)
				}
				if begin < prevEnd {
					t.Errorf("%s begins at %d, before the previous operation ended at %d", types[i], begin, prevEnd)
				}
				prevEnd = end
				w, ok := device.RecordOf[device.CUDARecord](nat)
				if !ok || int64(w.Start) != begin || int64(w.End) != end || w.Stream == 0 || w.Context == 0 {
					t.Errorf("%s: native %+v, want NativeCUDA {begin, end, stream, context}", types[i], nat)
				}
				if nat.Type != types[i] || nat.Teams != teams[i] || nat.HWID != q.(*queue).num || nat.HWID == 0 {
					t.Errorf("%s: native type %q teams %d hwid %d, want %q, %d, %d", types[i], nat.Type, nat.Teams, nat.HWID,
						types[i], teams[i], q.(*queue).num)
				}
			}

			// Read before the queue syncs: Times waits and gives the events back.
			must(t, "CopyIn", q.CopyIn(by.Ptr, device.Bytes(y[:16])))
			tm := p.Last()
			if _, _, _, err := tm.Times(); err != nil {
				t.Fatal(err)
			}
			if held := liveEvents(g) - base; held != 0 {
				t.Errorf("%d events held after Times, want 0", held)
			}
			p.Profile(false)
			must(t, "CopyIn", q.CopyIn(by.Ptr, device.Bytes(y[:16])))
			if held := liveEvents(g) - base; held != 0 || p.Last() != tm {
				t.Errorf("profiling off: %d events held, Last changed: %v", held, p.Last() != tm)
			}
			must(t, "Sync", q.Sync())
		})
	}
}
