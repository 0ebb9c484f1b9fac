package hostexec

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cover runs s on p and checks that every iteration was visited exactly once,
// every team was called exactly once, and chunks are contiguous in team order
// along the outermost dimension in use.
func cover(t *testing.T, p *Pool, s device.Shape) {
	t.Helper()
	sz := [3]int{max(s.Size[0], 1), max(s.Size[1], 1), max(s.Size[2], 1)}
	if s.Size[0] <= 0 {
		sz[0] = 0
	}
	hits := make([]atomic.Int32, sz[0]*sz[1]*sz[2])
	var mu sync.Mutex
	ranges := map[int]device.Range{}
	var calls atomic.Int32
	var gotTeams atomic.Int32
	f := func(a *device.HostArgs, r device.Range, team, teams int) {
		calls.Add(1)
		gotTeams.Store(int32(teams))
		mu.Lock()
		assert.NotContains(t, ranges, team, "team called twice")
		ranges[team] = r
		mu.Unlock()
		for k := r.Lo[2]; k < r.Hi[2]; k++ {
			for j := r.Lo[1]; j < r.Hi[1]; j++ {
				for i := r.Lo[0]; i < r.Hi[0]; i++ {
					hits[(k*sz[1]+j)*sz[0]+i].Add(1)
				}
			}
		}
	}
	teams := p.Run(f, nil, s)
	assert.Equal(t, p.Teams(&s, nil), teams, "Run(%+v)'s teams against Teams", s)
	if s.Teams > 0 {
		assert.Equal(t, s.Teams, teams, "Run(%+v): teams granted", s)
	}
	assert.Equal(t, teams, int(calls.Load()), "Run(%+v): calls", s)
	assert.Equal(t, teams, int(gotTeams.Load()), "Run(%+v): the teams argument", s)
	for i := range hits {
		if h := hits[i].Load(); h != 1 { // require only on failure: millions of iterations
			require.Equal(t, int32(1), h, "Run(%+v): visits of iteration %d", s, i)
		}
	}
	dim := s.Dims() - 1
	next := 0
	for team := 0; team < teams; team++ {
		r, ok := ranges[team]
		require.True(t, ok, "Run(%+v): team %d never called", s, team)
		require.Equal(t, next, r.Lo[dim], "Run(%+v): team %d's start in dim %d (%v..%v)", s, team, dim, r.Lo, r.Hi)
		require.GreaterOrEqual(t, r.Hi[dim], r.Lo[dim], "Run(%+v): team %d's end in dim %d", s, team, dim)
		next = r.Hi[dim]
		for d := 0; d < 3; d++ {
			if d != dim {
				require.Equal(t, [2]int{0, sz[d]}, [2]int{r.Lo[d], r.Hi[d]}, "Run(%+v): team %d's range in dim %d", s, team, d)
			}
		}
	}
	require.Equal(t, sz[dim], next, "Run(%+v): where the chunks end", s)
}

func TestRunCovers(t *testing.T) {
	p := New(4)
	defer p.Close()
	shapes := []device.Shape{
		{Size: [3]int{1}},
		{Size: [3]int{1000}},
		{Size: [3]int{1000}, Teams: 7},
		{Size: [3]int{3}, Teams: 10}, // more teams than iterations: empty chunks
		{Size: [3]int{100_000}},      // several teams chosen by the pool
		{Size: [3]int{17, 5}, Teams: 3},
		{Size: [3]int{17, 5, 9}, Teams: 4},
		{Size: [3]int{64, 64, 64}},
		{Size: [3]int{5, 1, 3}, Teams: 2}, // dimension 1 unused, 2 used
		{Size: [3]int{0}, Teams: 3},       // empty space: every team still called
	}
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%v/%d", s.Size, s.Teams), func(t *testing.T) { cover(t, p, s) })
	}
}

func TestTeams(t *testing.T) {
	p := New(8)
	defer p.Close()
	for _, c := range []struct {
		s    device.Shape
		want int
	}{
		{device.Shape{Size: [3]int{1}}, 1},
		{device.Shape{Size: [3]int{ChunkIterations}}, 1},
		{device.Shape{Size: [3]int{ChunkIterations + 1}}, 2},
		{device.Shape{Size: [3]int{1 << 30}}, 8},
		{device.Shape{Size: [3]int{1}, Teams: 5}, 5},
		{device.Shape{Size: [3]int{0}}, 1},
		{device.Shape{Size: [3]int{1}, Teams: math.MaxInt}, MaxTeams},
	} {
		assert.Equal(t, c.want, p.Teams(&c.s, nil), "Teams(%+v)", c.s)
	}
}

// A kernel's Work weighs its points: a few heavy points spread over the
// workers (at most one team per point), light ones stay together, and a
// Work that cannot be evaluated counts as one.
func TestTeamsWeighWork(t *testing.T) {
	p := New(8)
	defer p.Close()
	k := &device.Kernel{Name: "rows", Params: []device.Param{{Name: "n", Kind: device.ParamInt64}, {Name: "m", Kind: device.ParamInt32}}, Work: "n*m"}
	args := func(n, m int64) *device.HostArgs {
		return &device.HostArgs{Args: []device.Arg{{Bits: uint64(n)}, {Bits: uint64(m)}}, Kernel: k}
	}
	for _, c := range []struct {
		points int
		a      *device.HostArgs
		want   int
	}{
		{5000, args(1300, 1), 8},           // 5000 points of 1300 each
		{5000, args(1, 1), 1},              // light points: one team
		{3, args(1<<20, 1), 3},             // no more teams than points
		{4, args(ChunkIterations, 2), 4},   // each point two chunks: one team per point
		{100, args(-5, 7), 1},              // a negative work counts as one
		{100, args(1<<40, 1<<30), 8},       // n*m overflows: the most work
		{2, args(ChunkIterations/2, 1), 1}, // two half chunks: one team
	} {
		s := device.Shape{Size: [3]int{c.points, 1, 1}}
		assert.Equal(t, c.want, p.Teams(&s, c.a), "%d points of work %q = %d", c.points, k.Work, k.PointWork(s, func(j int) uint64 { return c.a.Args[j].Bits }))
	}
	// Run grants what Teams says.
	var seen atomic.Int32
	s := device.Shape{Size: [3]int{5000, 1, 1}}
	got := p.Run(func(_ *device.HostArgs, _ device.Range, _, _ int) { seen.Add(1) }, args(1300, 1), s)
	assert.Equal(t, 8, got)
	assert.Equal(t, int32(8), seen.Load())
	// Work without a kernel, or with one whose Work names no parameter.
	bad := &device.Kernel{Name: "bad", Work: "q"}
	assert.Equal(t, 1, p.Teams(&s, &device.HostArgs{Kernel: bad}))
	assert.Equal(t, 1, p.Teams(&s, &device.HostArgs{}))
}

func TestSplitLarge(t *testing.T) {
	// n*i would overflow 64 bits.
	n := uint64(1) << 62
	assert.Equal(t, int(3*(n/4)), split(n, 3, 4), "split(2^62, 3, 4)")
}

func TestConcurrentAndNested(t *testing.T) {
	p := New(2)
	defer p.Close()
	var wg sync.WaitGroup
	var total atomic.Int64
	for g := range 32 {
		wg.Go(func() {
			for range 20 {
				// Each team of the outer Run runs an inner Run of its own:
				// with 2 workers all busy, progress needs callers to run
				// unclaimed teams themselves.
				p.Run(func(_ *device.HostArgs, r device.Range, _, _ int) {
					for i := r.Lo[0]; i < r.Hi[0]; i++ {
						p.Run(func(_ *device.HostArgs, r device.Range, _, _ int) {
							total.Add(int64(r.Hi[0] - r.Lo[0]))
						}, nil, device.Shape{Size: [3]int{10 + g}, Teams: 3})
					}
				}, nil, device.Shape{Size: [3]int{4}, Teams: 4})
			}
		})
	}
	wg.Wait()
	var want int64
	for g := range 32 {
		want += int64(20 * 4 * (10 + g))
	}
	assert.Equal(t, want, total.Load(), "iterations the nested runs covered")
}

func TestPanicPropagates(t *testing.T) {
	p := New(3)
	defer p.Close()
	boom := errors.New("boom")
	for _, bad := range []int{0, 2, 5} {
		var ran atomic.Int32
		func() {
			defer func() {
				r := recover()
				tp, ok := r.(*TeamPanic)
				require.True(t, ok, "team %d panicked; Run panicked with %T %v, want *TeamPanic", bad, r, r)
				assert.Equal(t, bad, tp.Team, "TeamPanic.Team")
				assert.Equal(t, 6, tp.Teams, "TeamPanic.Teams")
				assert.ErrorIs(t, tp, boom, "TeamPanic's value")
				assert.NotEmpty(t, tp.Stack, "TeamPanic.Stack")
			}()
			p.Run(func(_ *device.HostArgs, _ device.Range, team, _ int) {
				ran.Add(1)
				if team == bad {
					panic(boom)
				}
			}, nil, device.Shape{Size: [3]int{60}, Teams: 6})
		}()
		assert.Equal(t, int32(6), ran.Load(), "team %d panicked: teams that ran", bad)
	}
	// The pool still works afterwards.
	cover(t, p, device.Shape{Size: [3]int{100}, Teams: 6})

	// One team: a direct call, the panic propagates as is.
	func() {
		defer func() {
			assert.Equal(t, boom, recover(), "single-team Run's panic")
		}()
		p.Run(func(*device.HostArgs, device.Range, int, int) { panic(boom) }, nil, device.Shape{Size: [3]int{1}})
	}()
}

func TestClosedPoolRunsInline(t *testing.T) {
	p := New(2)
	p.Close()
	p.Close()
	cover(t, p, device.Shape{Size: [3]int{1000}, Teams: 5})
}

func TestDefault(t *testing.T) {
	require.Same(t, Default(), Default(), "Default returned two pools")
	assert.Equal(t, runtime.GOMAXPROCS(0), Default().Workers(), "Default().Workers() against GOMAXPROCS")
}

func TestRunAllocatesNothing(t *testing.T) {
	p := New(4)
	defer p.Close()
	a := &device.HostArgs{}
	var sink atomic.Int64
	f := func(_ *device.HostArgs, r device.Range, _, _ int) { sink.Add(int64(r.Hi[0] - r.Lo[0])) }
	for _, s := range []device.Shape{
		{Size: [3]int{1}},
		{Size: [3]int{1 << 20}, Teams: 4},
		{Size: [3]int{100, 100}, Teams: 16},
	} {
		p.Run(f, a, s) // warm the job cache
		assert.Zero(t, testing.AllocsPerRun(200, func() { p.Run(f, a, s) }), "Run(%+v): allocations per run", s)
	}
}

func BenchmarkRunEmpty1Team(b *testing.B) {
	p := Default()
	f := func(*device.HostArgs, device.Range, int, int) {}
	s := device.Shape{Size: [3]int{1}, Teams: 1}
	b.ReportAllocs()
	for b.Loop() {
		p.Run(f, nil, s)
	}
}

func BenchmarkRunEmptyAllTeams(b *testing.B) {
	p := Default()
	f := func(*device.HostArgs, device.Range, int, int) {}
	s := device.Shape{Size: [3]int{1 << 20}, Teams: p.Workers()}
	b.ReportAllocs()
	for b.Loop() {
		p.Run(f, nil, s)
	}
}

const saxpyN = 1 << 24

func saxpyData() (x, y []float32) {
	x, y = make([]float32, saxpyN), make([]float32, saxpyN)
	for i := range x {
		x[i], y[i] = float32(i%100), 1
	}
	return x, y
}

func saxpy(a *device.HostArgs, r device.Range, _, _ int) {
	alpha := a.Float32(0)
	x, y := a.F32(1)[r.Lo[0]:r.Hi[0]], a.F32(2)[r.Lo[0]:r.Hi[0]]
	for i := range y {
		y[i] += alpha * x[i]
	}
}

func BenchmarkSaxpy(b *testing.B) {
	x, y := saxpyData()
	a := &device.HostArgs{
		Bufs: [][]byte{nil, device.Bytes(x), device.Bytes(y)},
		Args: []device.Arg{{Bits: uint64(0x3f000000)}, {}, {}}, // 0.5
	}
	s := device.Shape{Size: [3]int{saxpyN}}
	p := Default()
	b.SetBytes(saxpyN * 12)
	b.ReportAllocs()
	for b.Loop() {
		p.Run(saxpy, a, s)
	}
}

// BenchmarkSaxpyGoroutines is the baseline: a fresh goroutine per core and a
// WaitGroup on every call.
func BenchmarkSaxpyGoroutines(b *testing.B) {
	x, y := saxpyData()
	workers := runtime.GOMAXPROCS(0)
	b.SetBytes(saxpyN * 12)
	b.ReportAllocs()
	for b.Loop() {
		var wg sync.WaitGroup
		for w := range workers {
			lo, hi := w*saxpyN/workers, (w+1)*saxpyN/workers
			wg.Go(func() {
				xs, ys := x[lo:hi], y[lo:hi]
				for i := range ys {
					ys[i] += 0.5 * xs[i]
				}
			})
		}
		wg.Wait()
	}
}

//go:noinline
func directCall(f device.HostFunc, a *device.HostArgs, s device.Shape) int {
	f(a, fullRange(&s), 0, 1)
	return 1
}

// BenchmarkDirectCall is the floor BenchmarkRunEmpty1Team compares with: a
// plain call of f through a function that is not inlined.
func BenchmarkDirectCall(b *testing.B) {
	f := func(*device.HostArgs, device.Range, int, int) {}
	s := device.Shape{Size: [3]int{1}, Teams: 1}
	for b.Loop() {
		directCall(f, nil, s)
	}
}
