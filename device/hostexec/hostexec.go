// Package hostexec runs a kernel's Go image (device.HostFunc) over a launch
// shape on a pool of persistent worker goroutines: the team executor shared
// by the host offload device, by the initial device in package target, and by
// devicetest's reference runs.
//
// Run splits the outermost dimension of the iteration space into contiguous
// chunks, one per team, runs team 0 on the calling goroutine and offers the
// others to idle workers. The caller keeps claiming chunks no worker has
// taken, so Run never waits for a worker to become free: many goroutines may
// call Run at once, and f may itself call Run (nested parallelism), without
// deadlock. In steady state a Run allocates nothing.
package hostexec

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device"
)

// ChunkIterations is the number of iterations per team Run aims for when the
// shape leaves the number of teams to it: below this, waking another
// goroutine costs more than it saves.
const ChunkIterations = 16 << 10

// MaxThreadsPerTeam is the largest Shape.Threads a launch of a Go image
// accepts, on the host device and the initial device. Threads within a
// team are not separate goroutines: a team's HostFunc call runs its whole
// chunk, so the value only bounds what a kernel may assume.
const MaxThreadsPerTeam = 1024

// MaxTeams is the largest number of teams one Run grants; a larger request
// is granted MaxTeams.
const MaxTeams = math.MaxInt32

// Pool is a set of persistent worker goroutines. All methods are safe for
// concurrent use.
type Pool struct {
	workers int
	tickets chan ticket
	jobs    sync.Pool
	closed  atomic.Bool
	once    sync.Once
}

// ticket offers the chunks of one job to a worker. gen tells a ticket for
// the job's current Run from a stale one left in the channel by an earlier
// Run whose chunks were all claimed before any worker looked.
type ticket struct {
	j     *job // nil asks the worker to stop
	gen   uint32
	teams int
}

// job is one Run in flight. It is reused across Runs (through Pool.jobs) so
// that a Run allocates nothing.
type job struct {
	f     device.HostFunc
	a     *device.HostArgs
	shape device.Shape
	dim   int // the dimension split between teams

	// state holds the generation in its high 32 bits and the next
	// unclaimed team in its low 32 bits; workers claim a team by CAS, so
	// a stale ticket can never claim a team of a later Run.
	state atomic.Uint64
	done  atomic.Int64  // teams finished
	wake  chan struct{} // the worker finishing the last team tells the caller
	pmu   sync.Mutex
	pan   *TeamPanic // the first panic among the teams
}

// TeamPanic is the value Run panics with, on the caller's goroutine, when f
// panicked in one of several teams: the panic is recovered on whichever
// goroutine ran the team, every other team still runs to completion, and then
// Run re-panics with the first one. A single-team Run is a plain call of f,
// and a panic in it propagates unchanged.
type TeamPanic struct {
	Value any    // the value f panicked with
	Team  int    // the team that panicked
	Teams int    // the number of teams of the Run
	Stack []byte // the stack of the panicking goroutine
	// PCs is that stack as runtime.Callers gives it, from the recovering
	// function down: device.GoFault finds the frame that failed in it.
	PCs []uintptr
}

// callers returns the program counters of the panicking goroutine's stack,
// called from a deferred function while the panic runs.
func callers() []uintptr {
	pcs := make([]uintptr, 64)
	return pcs[:runtime.Callers(2, pcs)]
}

// Error formats the panic with its team and stack.
func (p *TeamPanic) Error() string {
	return fmt.Sprintf("hostexec: team %d of %d panicked: %v\n\n%s", p.Team, p.Teams, p.Value, p.Stack)
}

// Unwrap returns the panic value if it is an error.
func (p *TeamPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

var (
	defaultOnce sync.Once
	defaultPool *Pool
)

// Default returns the process-wide pool, built on first use with
// runtime.GOMAXPROCS(0) workers. It is never closed.
func Default() *Pool {
	defaultOnce.Do(func() { defaultPool = New(runtime.GOMAXPROCS(0)) })
	return defaultPool
}

// New starts a pool of workers goroutines (at least 1). Close stops them.
func New(workers int) *Pool {
	if workers < 1 {
		workers = 1
	}
	p := &Pool{workers: workers, tickets: make(chan ticket, 4*workers)}
	p.jobs.New = func() any { return &job{wake: make(chan struct{}, 1)} }
	for range workers {
		go p.work()
	}
	return p
}

// Workers returns the number of worker goroutines.
func (p *Pool) Workers() int { return p.workers }

// Close stops the workers once they finish the teams they hold. Runs after
// Close still work: the caller runs every team itself. Close is idempotent.
func (p *Pool) Close() {
	p.once.Do(func() {
		p.closed.Store(true)
		for range p.workers {
			p.tickets <- ticket{}
		}
	})
}

// Teams returns the number of teams Run grants for s with arguments a
// (nil for none): s.Teams when it is positive (at most MaxTeams), otherwise
// one per ChunkIterations of work, at most one per worker and per
// iteration, and at least one. An iteration's work is one, or its
// kernel's PointWork where it declares Work: a point with an inner loop
// over n elements weighs n, so that 5,000 such points spread over the
// cores where 5,000 light ones would stay on one. s and a are read, not
// kept.
func (p *Pool) Teams(s *device.Shape, a *device.HostArgs) int {
	if s.Teams > 0 {
		return min(s.Teams, MaxTeams)
	}
	n := s.Iterations()
	if n > ChunkIterations*(p.workers-1) {
		return p.workers // enough work without weighing it
	}
	work := int64(n)
	if a != nil && a.Kernel != nil && a.Kernel.Work != "" {
		w := a.Kernel.PointWork(*s, func(j int) uint64 {
			if j < len(a.Args) {
				return a.Args[j].Bits
			}
			return 0
		})
		if hi, lo := bits.Mul64(uint64(n), uint64(w)); hi != 0 || lo > math.MaxInt64 {
			work = math.MaxInt64
		} else {
			work = int64(lo)
		}
	}
	t := work/ChunkIterations + min(work%ChunkIterations, 1)
	return int(max(1, min(t, int64(p.workers), int64(n))))
}

// Run calls f once per team over the shape s with arguments a and returns
// the number of teams granted (see Teams). The outermost dimension in use
// (s.Dims()-1) is split into that many contiguous chunks, in team order;
// the other dimensions in use get their full range, and unused dimensions
// the range [0, 1). When there are more teams than iterations some chunks are
// empty, and f is still called for them, so team-indexed outputs (one
// partial sum per team) are always written.
//
// Team 0 runs on the calling goroutine, the others on workers or, when none
// is free, on the caller too. Run returns when every team has returned. A
// Run with one team is a direct call of f. s is not validated: callers check
// it with Shape.Check first; a non-positive size gives empty chunks.
//
// If f panics in a Run of several teams, Run panics with a *TeamPanic after
// all teams finish (see TeamPanic).
func (p *Pool) Run(f device.HostFunc, a *device.HostArgs, s device.Shape) (teams int) {
	if s.Teams == 1 {
		f(a, fullRange(&s), 0, 1)
		return 1
	}
	return p.run(f, a, &s)
}

// Try is Run that returns a panic of f as an error instead: always a
// *TeamPanic (a panic of a single-team Run is team 0 of 1), for runtimes
// that must not let a kernel's panic take the program down. It takes the
// shape by pointer: a launch path that hands its shape down by value copies
// it at every step, each copy read back while still in flight.
func (p *Pool) Try(f device.HostFunc, a *device.HostArgs, s *device.Shape) (err error) {
	defer func() {
		if r := recover(); r != nil {
			tp, ok := r.(*TeamPanic)
			if !ok {
				tp = &TeamPanic{Value: r, Team: 0, Teams: 1, Stack: debug.Stack(), PCs: callers()}
			}
			err = tp
		}
	}()
	if s.Teams == 1 {
		f(a, fullRange(s), 0, 1)
	} else {
		p.run(f, a, s)
	}
	return nil
}

func (p *Pool) run(f device.HostFunc, a *device.HostArgs, s *device.Shape) (teams int) {
	teams = p.Teams(s, a)
	if teams == 1 {
		f(a, fullRange(s), 0, 1)
		return 1
	}
	j := p.jobs.Get().(*job)
	j.f, j.a, j.shape, j.dim = f, a, *s, s.Dims()-1
	j.done.Store(0)
	gen := uint32(j.state.Load()>>32) + 1
	j.state.Store(uint64(gen)<<32 | 1) // team 0 is the caller's

	if !p.closed.Load() {
		offers := min(teams-1, p.workers)
	offer:
		for range offers {
			select {
			case p.tickets <- ticket{j, gen, teams}:
			default:
				break offer // workers are busy; the caller runs the rest
			}
		}
	}

	last := j.run(0, teams)
	for {
		t, ok := j.claim(gen, teams)
		if !ok {
			break
		}
		last = j.run(t, teams) || last
	}
	if !last {
		<-j.wake
	}
	pan := j.pan
	j.pan, j.f, j.a = nil, nil, nil
	p.jobs.Put(j)
	if pan != nil {
		panic(pan)
	}
	return teams
}

// claim takes the next unclaimed team of the Run of generation gen, which
// has teams teams. It reads nothing of j but state: a job whose teams are
// all claimed may be reused by another Run at any moment.
func (j *job) claim(gen uint32, teams int) (team int, ok bool) {
	for {
		v := j.state.Load()
		if uint32(v>>32) != gen {
			return 0, false
		}
		t := int(uint32(v))
		if t >= teams {
			return 0, false
		}
		if j.state.CompareAndSwap(v, v+1) {
			return t, true
		}
	}
}

// run runs one claimed team and reports whether it was the last to finish.
// After the last team finishes, j belongs to the Run's caller again.
func (j *job) run(team, teams int) (last bool) {
	defer func() {
		if r := recover(); r != nil {
			j.pmu.Lock()
			if j.pan == nil {
				j.pan = &TeamPanic{Value: r, Team: team, Teams: teams, Stack: debug.Stack(), PCs: callers()}
			}
			j.pmu.Unlock()
		}
		last = j.done.Add(1) == int64(teams)
	}()
	j.f(j.a, chunk(j.shape, j.dim, team, teams), team, teams)
	return
}

// work is one worker goroutine: it takes tickets and runs the teams it can
// claim. The worker finishing the last team of a Run wakes its caller.
func (p *Pool) work() {
	for t := range p.tickets {
		if t.j == nil {
			return
		}
		for {
			team, ok := t.j.claim(t.gen, t.teams)
			if !ok {
				break
			}
			if t.j.run(team, t.teams) {
				t.j.wake <- struct{}{}
				break // the job may be reused from here on
			}
		}
	}
}

// fullRange is the whole iteration space of s.
//
// It builds the result as one composite literal, so the caller's copy of
// it into f's arguments reads it back as it was written, not 8 bytes at a
// time (which stalls the copy on store forwarding).
func fullRange(s *device.Shape) device.Range {
	h0, h1, h2 := s.Size[0], 1, 1
	switch {
	case s.Size[2] > 1:
		h1, h2 = s.Size[1], s.Size[2]
	case s.Size[1] > 1:
		h1 = s.Size[1]
	}
	return device.Range{Hi: [3]int{h0, h1, h2}}
}

// chunk is team's part of s when dimension dim is split into teams parts.
func chunk(s device.Shape, dim, team, teams int) device.Range {
	r := fullRange(&s)
	n := uint64(max(r.Hi[dim], 0))
	r.Lo[dim] = split(n, team, teams)
	r.Hi[dim] = split(n, team+1, teams)
	return r
}

// split returns n*i/teams without overflow (i <= teams).
func split(n uint64, i, teams int) int {
	hi, lo := bits.Mul64(n, uint64(i))
	q, _ := bits.Div64(hi, lo, uint64(teams))
	return int(q)
}
