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
		if _, dup := ranges[team]; dup {
			t.Errorf("team %d called twice", team)
		}
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
	if want := p.Teams(s); teams != want {
		t.Errorf("Run(%+v) = %d teams, Teams says %d", s, teams, want)
	}
	if s.Teams > 0 && teams != s.Teams {
		t.Errorf("Run(%+v) granted %d teams, asked %d", s, teams, s.Teams)
	}
	if int(calls.Load()) != teams || int(gotTeams.Load()) != teams {
		t.Errorf("Run(%+v): %d calls with teams=%d, want %d", s, calls.Load(), gotTeams.Load(), teams)
	}
	for i := range hits {
		if h := hits[i].Load(); h != 1 {
			t.Fatalf("Run(%+v): iteration %d visited %d times", s, i, h)
		}
	}
	dim := s.Dims() - 1
	next := 0
	for team := 0; team < teams; team++ {
		r, ok := ranges[team]
		if !ok {
			t.Fatalf("Run(%+v): team %d never called", s, team)
		}
		if r.Lo[dim] != next || r.Hi[dim] < r.Lo[dim] {
			t.Fatalf("Run(%+v): team %d has %v..%v in dim %d, want to start at %d", s, team, r.Lo, r.Hi, dim, next)
		}
		next = r.Hi[dim]
		for d := 0; d < 3; d++ {
			if d != dim && (r.Lo[d] != 0 || r.Hi[d] != sz[d]) {
				t.Fatalf("Run(%+v): team %d has [%d,%d) in dim %d, want [0,%d)", s, team, r.Lo[d], r.Hi[d], d, sz[d])
			}
		}
	}
	if next != sz[dim] {
		t.Fatalf("Run(%+v): chunks end at %d, want %d", s, next, sz[dim])
	}
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
		if got := p.Teams(c.s); got != c.want {
			t.Errorf("Teams(%+v) = %d, want %d", c.s, got, c.want)
		}
	}
}

func TestSplitLarge(t *testing.T) {
	// n*i would overflow 64 bits.
	n := uint64(1) << 62
	if got, want := split(n, 3, 4), int(3*(n/4)); got != want {
		t.Errorf("split(2^62, 3, 4) = %d, want %d", got, want)
	}
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
	if got := total.Load(); got != want {
		t.Errorf("nested runs covered %d iterations, want %d", got, want)
	}
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
				if !ok {
					t.Fatalf("team %d panicked; Run panicked with %T %v, want *TeamPanic", bad, r, r)
				}
				if tp.Team != bad || tp.Teams != 6 || !errors.Is(tp, boom) || len(tp.Stack) == 0 {
					t.Errorf("TeamPanic = team %d of %d, value %v; want team %d of 6, boom, with stack", tp.Team, tp.Teams, tp.Value, bad)
				}
			}()
			p.Run(func(_ *device.HostArgs, _ device.Range, team, _ int) {
				ran.Add(1)
				if team == bad {
					panic(boom)
				}
			}, nil, device.Shape{Size: [3]int{60}, Teams: 6})
		}()
		if ran.Load() != 6 {
			t.Errorf("team %d panicked: %d teams ran, want all 6", bad, ran.Load())
		}
	}
	// The pool still works afterwards.
	cover(t, p, device.Shape{Size: [3]int{100}, Teams: 6})

	// One team: a direct call, the panic propagates as is.
	func() {
		defer func() {
			if r := recover(); r != boom {
				t.Errorf("single-team Run panicked with %v, want boom", r)
			}
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
	if Default() != Default() {
		t.Fatal("Default returned two pools")
	}
	if got, want := Default().Workers(), runtime.GOMAXPROCS(0); got != want {
		t.Errorf("Default().Workers() = %d, want GOMAXPROCS %d", got, want)
	}
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
		if n := testing.AllocsPerRun(200, func() { p.Run(f, a, s) }); n != 0 {
			t.Errorf("Run(%+v): %v allocations per run, want 0", s, n)
		}
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
	f(a, fullRange(s), 0, 1)
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
