package soak

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
	"github.com/gompt/gompt/target/internal/inspect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModel runs random concurrent programs on every device (each offload
// device, then the initial device) and compares every host slice with a
// sequential model of the same program after each construct and each Wait.
//
// Each round, GOMPT_MODEL_GOROUTINES goroutines (default 8) run
// GOMPT_MODEL_STEPS constructs each (default 48), in epochs: target regions
// (saxpy, fill, vecadd on whole slices or sub-slices) with random map types,
// modifiers and implicit maps, nowait or not; enter data, exit data and
// update, nowait or not; data regions whose body runs constructs of its own
// and then returns nil, returns an error or panics (the test recovers the
// panic); host writes; and bad inputs (the present modifier on an absent
// item, exit of an absent item), which must fail with a not-found error and
// change nothing. The data:
//
//   - shared inputs, read by every goroutine at once and mapped by all of
//     them (map to, or held with enter data by several goroutines);
//   - per-goroutine outputs, each a chunk of an array the goroutines share
//     (neighbouring chunks are mapped at the same time);
//   - shared outputs ("batons") passed between goroutines through a
//     channel, possibly still mapped (their dynamic reference taken by one
//     goroutine and dropped by another);
//   - at each epoch's end the shared inputs of the next epoch are computed
//     on the device by some goroutines, each writing one of them while
//     reading the others, and then read by all;
//   - one array mapped once per round, which every goroutine writes at
//     once, each in its own chunk, through sub-slices at offsets in every
//     alignment class (model_disjoint_test.go).
//
// Kernel arguments are sub-slices at any offset, so on OpenCL many go
// through the plugin's staged copies.
//
// After each construct and each Wait, every slice the goroutine owns must
// hold the model's values, be present exactly when the model says so, with
// the model's reference counts; after the round nothing the round mapped is
// left in the present table, and after each device's rounds its memory in
// use is back to where it started.
//
// A failed comparison is counted against the class of the construct that
// last changed the slice; the slice is then unmapped and re-read into the
// model so the round goes on (a slice that cannot be unmapped is replaced),
// and the test fails at the end with a table of failures per class and the
// seed. GOMPT_MODEL_SEED fixes the seed (default: the time);
// GOMPT_MODEL_ROUNDS (default 2) rounds per device, or GOMPT_MODEL_TIME=60s
// runs rounds on each device until that much time has passed (the long form
// ci/reliability.sh runs); GOMPT_MODEL_PANICS=0 leaves out the bodies that
// panic. Last, in a child process, Shutdown is called from a Go task and
// from two goroutines at once while goroutines run constructs on every
// device (model_shutdown_test.go). Odd rounds on the host device use slices of more than 256 KiB,
// which it copies asynchronously.
func TestModel(t *testing.T) {
	cfg := readModelConfig(t)
	t.Logf("seed %d (GOMPT_MODEL_SEED=%d reruns these programs), %d goroutines x %d steps, %s",
		cfg.seed, cfg.seed, cfg.goroutines, cfg.steps, cfg.bound())
	var devs []modelDevice
	for _, d := range target.Devices() {
		devs = append(devs, modelDevice{num: d.Num, name: d.ID, plugin: d.Plugin, zeroCopy: d.ZeroCopy})
	}
	devs = append(devs, modelDevice{num: target.InitialDeviceNum(), name: "initial", initial: true})
	all := newModelStats()
	var per []string
	for _, d := range devs {
		t.Run(d.name, func(t *testing.T) {
			st := runModel(t, cfg, d)
			all.merge(st)
			per = append(per, fmt.Sprintf("%s %d rounds in %v", d.name, st.rounds, st.elapsed.Round(time.Millisecond)))
		})
	}
	t.Run("shutdown from a Go task and two goroutines", func(t *testing.T) { modelShutdown(t, cfg) })
	t.Logf("constructs by class (wrong results and wrong errors of constructs run):\n%s", all.table(devs))
	writeReport(t, "model.md", fmt.Sprintf("seed %d, %d goroutines x %d constructs per round (%s): %s",
		cfg.seed, cfg.goroutines, cfg.steps, strings.Join(per, ", "), all.summary()))
	writeClasses(t, "model", all.classRows(devs))
	assert.False(t, all.failed(), "seed %d: %s; rerun the same programs with GOMPT_MODEL_SEED=%d go test -race -run 'TestModel' ./target/soak",
		cfg.seed, all.summary(), cfg.seed)
}

type modelConfig struct {
	seed       uint64
	goroutines int
	steps      int           // constructs per goroutine per round
	rounds     int           // rounds per device when dur is 0
	dur        time.Duration // run rounds on each device until this much time has passed
	panics     bool          // data region bodies may panic
}

func readModelConfig(t *testing.T) modelConfig {
	c := modelConfig{
		goroutines: envInt("GOMPT_MODEL_GOROUTINES", 8),
		steps:      envInt("GOMPT_MODEL_STEPS", 48),
		rounds:     envInt("GOMPT_MODEL_ROUNDS", 2),
		seed:       uint64(time.Now().UnixNano()),
		panics:     os.Getenv("GOMPT_MODEL_PANICS") != "0",
	}
	if s := os.Getenv("GOMPT_MODEL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "GOMPT_MODEL_SEED=%q: want a whole number", s)
		c.seed = v
	}
	if s := os.Getenv("GOMPT_MODEL_TIME"); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, "GOMPT_MODEL_TIME=%q: want a duration such as 60s", s)
		require.Positive(t, d, "GOMPT_MODEL_TIME=%q: want a duration such as 60s", s)
		c.dur = d
	}
	return c
}

func (c modelConfig) bound() string {
	if c.dur > 0 {
		return fmt.Sprintf("rounds for %v per device", c.dur)
	}
	return fmt.Sprintf("%d rounds per device", c.rounds)
}

type modelDevice struct {
	num      int
	name     string
	plugin   string
	initial  bool
	zeroCopy bool // maps use the program's memory (GOMPT_ZERO_COPY=on)
}

// runModel runs the rounds of one device and checks its memory in use
// afterwards.
func runModel(t *testing.T, cfg modelConfig, d modelDevice) *modelStats {
	st := newModelStats()
	b0, a0, memOK := memInUse(d.num)
	start := time.Now()
	for i := 0; ; i++ {
		if cfg.dur > 0 && time.Since(start) >= cfg.dur || cfg.dur == 0 && i >= cfg.rounds {
			break
		}
		r := newRound(cfg, d, i, st)
		r.run()
		st.rounds++
	}
	st.run(d.name, classLeakMem)
	if b, a, _ := memInUse(d.num); memOK && (b != b0 || a != a0) {
		st.fail(d.name, 0, -1, 0, classLeakMem, false, fmt.Sprintf("device memory in use: %d bytes in %d allocations after the rounds, %d in %d before", b, a, b0, a0))
	}
	st.elapsed = time.Since(start)
	t.Logf("%d rounds in %v: %s", st.rounds, st.elapsed.Round(time.Millisecond), st.summary())
	assert.Empty(t, st.first, "the first failures")
	assert.LessOrEqual(t, st.nfail, len(st.first), "failures beyond the first")
	return st
}

const (
	nShared = 3 // shared inputs
	nOwn    = 3 // slices each goroutine owns: two chunks of shared arrays and one of its own
)

// round is one random program on one device.
type round struct {
	cfg     modelConfig
	dev     int
	devName string
	initial bool
	// zeroCopy: the device's maps use the program's memory in place
	// (GOMPT_ZERO_COPY=on), with unified-shared-memory semantics: counts
	// and presence as on any device, but a kernel works on the host's
	// slice and no map, exit or update moves data.
	zeroCopy bool
	num      int    // round number, for messages
	seed     uint64 // this round's seed
	n        int    // length of every slice
	epochs   int
	st       *modelStats

	x     [2][nShared][]float32 // shared inputs, double-buffered: epoch e reads x[e%2]
	xWant [2][nShared][]float32 // what they must hold
	outs  [nOwn - 1][]float32   // shared arrays whose chunks the goroutines own

	batons chan *slot
	nbaton int
	bar    *barrier
	dis    *disjoint // model_disjoint_test.go
}

func newRound(cfg modelConfig, d modelDevice, i int, st *modelStats) *round {
	seed := cfg.seed + uint64(i)
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c))
	r := &round{cfg: cfg, dev: d.num, devName: d.name, initial: d.initial, zeroCopy: d.zeroCopy, num: i, seed: seed, st: st}
	// Odd rounds on the host device: more than host.InlineCopyMax (256
	// KiB) per slice, so its copies go through its queues' goroutines and
	// overlap with other queues' work, as a GPU's do at any size.
	if i%2 == 1 && (d.plugin == "host" || d.plugin == "faulty") {
		r.n = 65536 + 1 + rng.IntN(8192)
	} else {
		r.n = 1 + rng.IntN(6000)
	}
	r.epochs = min(8, max(1, cfg.steps/8)) // x doubles at most each epoch: stays exact
	for b := range 2 {
		for k := range nShared {
			r.x[b][k] = make([]float32, r.n)
		}
	}
	for k := range nShared {
		randomInts(rng, r.x[0][k])
		r.xWant[0][k] = slices.Clone(r.x[0][k])
	}
	for k := range r.outs {
		r.outs[k] = make([]float32, cfg.goroutines*r.n)
	}
	r.nbaton = max(1, cfg.goroutines/2)
	r.batons = make(chan *slot, r.nbaton)
	for k := range r.nbaton {
		s := newSlot(fmt.Sprintf("baton %d", k), make([]float32, r.n))
		randomInts(rng, s.host)
		copy(s.want, s.host)
		r.batons <- s
	}
	r.bar = newBarrier(cfg.goroutines)
	r.dis = newDisjoint(rng, cfg.goroutines)
	return r
}

// randomInts fills s with small whole numbers, so every sum the kernels make
// is exact in float32 and the model can compare with ==.
func randomInts(rng *rand.Rand, s []float32) {
	for i := range s {
		s[i] = float32(rng.IntN(17) - 8)
	}
}

func (r *round) run() {
	before := len(inspect.MappingEntries(r.dev))
	r.disjointBegin()
	var wg sync.WaitGroup
	for w := range r.cfg.goroutines {
		wk := newWorker(r, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk.run()
		}()
	}
	wg.Wait()
	r.disjointEnd()
	// The batons' last holders may have left them mapped: unmap and check.
	wk := newWorker(r, -1)
	close(r.batons)
	for b := range r.batons {
		wk.slots = []*slot{b}
		wk.clean(b)
		wk.check()
	}
	r.st.run(r.devName, classLeakTable)
	if after := inspect.MappingEntries(r.dev); len(after) != before {
		r.st.fail(r.devName, r.num, -1, 0, classLeakTable, false, fmt.Sprintf("%d entries in the present table after the round, %d before: %v",
			len(after), before, after))
	}
}

// slot is one host slice a goroutine owns (or holds, for a baton) with the
// model of its values and of its device copy.
type slot struct {
	name      string
	host      []float32 // the program's slice
	want      []float32 // the values host must hold
	hostUndef bool      // want is unknown: undefined device data was copied in

	present  bool      // on the device (offload devices only)
	s, d     int       // structured and dynamic reference counts
	dev      []float32 // the device copy's values
	devUndef bool      // the device copy is undefined (map alloc or from)

	baton   bool   // a shared output passed between goroutines
	busy    bool   // a nowait construct of the owner uses it
	tainted bool   // a check failed: resync at the top level
	last    string // class of the last construct that changed it
	lastID  uint64 // and its number (worker.seq)
	devBy   string // class of the last construct that changed the device copy
	devSet  bool   // the model changed the device copy since the last touch
}

func newSlot(name string, host []float32) *slot {
	return &slot{name: name, host: host, want: slices.Clone(host), dev: make([]float32, len(host)), last: "initial values"}
}

type mtype uint8

const (
	mTo mtype = iota + 1
	mFrom
	mToFrom
	mAlloc
	mRelease
	mDelete
)

func (m mtype) in() bool  { return m == mTo || m == mToFrom }
func (m mtype) out() bool { return m == mFrom || m == mToFrom }

// item is one list item: a slot's range, or a whole shared input.
type item struct {
	s               *slot
	x               int // shared input, when s is nil
	typ             mtype
	always, present bool
	lo, hi          int
}

const (
	kSaxpy = iota
	kFill
	kVecAdd
)

// kcall is one kernel launch over [lo, lo+m): saxpy out += a*x, fill out =
// a, vecadd out = x + b.
type kcall struct {
	k     int
	lo, m int
	a     float32
	x     int   // shared input read (saxpy, vecadd)
	b     *slot // vecadd's second input when private
	xb    int   // vecadd's second input when shared (b nil)
	out   *slot
}

// task is a nowait construct in flight.
type task struct {
	t       *target.Task
	class   string
	wantErr bool
	slots   []*slot
	done    func() // model changes that take effect when it has finished
	pins    []int  // shared inputs it uses unmapped, relying on the goroutine's references
}

// worker is one goroutine of a round.
type worker struct {
	r     *round
	w     int
	rng   *rand.Rand
	slots []*slot
	baton *slot
	holds [nShared]int // dynamic references it holds on the shared inputs
	tasks []task
	depth int // data regions the current step is inside
	cur   int // which x buffer the epoch reads
	step  int

	seq    uint64          // constructs issued
	failed map[uint64]bool // constructs already counted as failed
}

var (
	errBody   = errors.New("soak: the data region's body fails")
	panicBody = errors.New("soak: the data region's body panics")
)

func newWorker(r *round, w int) *worker {
	wk := &worker{r: r, w: w, rng: rand.New(rand.NewPCG(r.seed, uint64(w)+1)), failed: map[uint64]bool{}}
	if w < 0 {
		return wk
	}
	n := r.n
	for k := range r.outs {
		wk.slots = append(wk.slots, newSlot(fmt.Sprintf("out%d[%d:%d]", k, w*n, (w+1)*n), r.outs[k][w*n:(w+1)*n:(w+1)*n]))
	}
	wk.slots = append(wk.slots, newSlot("own", make([]float32, n)))
	for _, s := range wk.slots {
		randomInts(wk.rng, s.host)
		copy(s.want, s.host)
	}
	return wk
}

func (wk *worker) fail(class string, wrong bool, format string, args ...any) {
	wk.r.st.fail(wk.r.devName, wk.r.num, wk.w, wk.step, class, wrong, fmt.Sprintf(format, args...))
}

// failSlot reports a wrong s against the construct that last changed it,
// counting each construct once however many of its slices are wrong.
func (wk *worker) failSlot(s *slot, format string, args ...any) {
	s.tainted = true
	if wk.failed[s.lastID] {
		return
	}
	wk.failed[s.lastID] = true
	wk.fail(s.last, true, format, args...)
}

func (wk *worker) run() {
	defer func() {
		if v := recover(); v != nil {
			wk.fail("goroutine", false, "unexpected panic: %v\n%s", v, debug.Stack())
			wk.r.bar.abort()
		}
	}()
	per := max(1, wk.r.cfg.steps/wk.r.epochs)
	if !wk.r.bar.wait() {
		return
	}
	for e := range wk.r.epochs {
		wk.burst(e)
		for range per {
			wk.step++
			wk.op()
			if wk.rng.IntN(3) == 0 {
				wk.waitAll()
			}
			wk.resync()
		}
		if !wk.epochEnd(e) {
			return
		}
	}
	wk.finish()
}

// burst starts each epoch: every goroutine at once starts two target
// nowait regions reading the same shared input, which nothing holds yet,
// into two of its own slices, and waits for them.
func (wk *worker) burst(e int) {
	f := wk.free()
	wk.rng.Shuffle(len(f), func(i, j int) { f[i], f[j] = f[j], f[i] })
	x := e % nShared
	for _, out := range f[:min(2, len(f))] {
		kc := kcall{k: kSaxpy, out: out, m: wk.r.n, a: 2, x: x}
		items := []item{{x: x, typ: mTo}, wk.whole(out, mToFrom)}
		cl := class("target nowait", items, &kc)
		wk.enter(items, true)
		wk.kernel(kc)
		wk.exit(items, true)
		ss := wk.touch(cl, items, &kc)
		for _, s := range ss {
			s.busy = true
		}
		wk.tasks = append(wk.tasks, task{t: target.TargetNowait(wk.region(kc, wk.tmaps(items))), class: cl, slots: ss})
	}
	wk.waitAll()
}

// op runs one random construct.
func (wk *worker) op() {
	nowait := wk.rng.IntN(5) < 2
	switch c := wk.rng.IntN(100); {
	case c < 28:
		wk.opTarget(false)
	case c < 48:
		wk.opTarget(true)
	case c < 58:
		wk.opEnter(nowait)
	case c < 68:
		wk.opExit(nowait)
	case c < 76:
		wk.opUpdate(nowait)
	case c < 88:
		if wk.depth < 2 {
			wk.opData()
		}
	case c < 91:
		wk.opWrite()
	case c < 96:
		wk.opDisjoint(nowait)
	default:
		if wk.depth == 0 {
			wk.opBaton()
		}
	}
}

// free returns the slots no construct in flight uses, waiting for the
// constructs in flight if there are none. A tainted slot (a check failed,
// and its model is no longer known) is left out until resync: inside a
// data region's body there may be none.
func (wk *worker) free() []*slot {
	var f []*slot
	for _, s := range wk.slots {
		if !s.busy && !s.tainted {
			f = append(f, s)
		}
	}
	if len(f) == 0 && len(wk.tasks) > 0 {
		wk.waitAll()
		return wk.free()
	}
	return f
}

func (wk *worker) pick(f []*slot) *slot { return f[wk.rng.IntN(len(f))] }

func (wk *worker) hostOf(it item) []float32 {
	if it.s != nil {
		return it.s.host[it.lo:it.hi]
	}
	return wk.r.x[wk.cur][it.x]
}

func (wk *worker) tmap(it item) target.Map {
	h := wk.hostOf(it)
	var m target.Map
	switch it.typ {
	case mTo:
		m = target.To(h)
	case mFrom:
		m = target.From(h)
	case mToFrom:
		m = target.ToFrom(h)
	case mAlloc:
		m = target.Alloc(h)
	case mRelease:
		m = target.Release(h)
	case mDelete:
		m = target.Delete(h)
	}
	if it.always {
		m = m.Always()
	}
	if it.present {
		m = m.Present()
	}
	return m
}

func (wk *worker) tmaps(items []item) []target.Map {
	ms := make([]target.Map, len(items))
	for i, it := range items {
		ms[i] = wk.tmap(it)
	}
	return ms
}

func (wk *worker) whole(s *slot, typ mtype) item {
	return item{s: s, typ: typ, hi: len(s.host)}
}

// class names a construct for the tables: its kind and the data it shares.
func class(kind string, items []item, kc *kcall) string {
	var in, out bool
	for _, it := range items {
		if it.s == nil {
			in = true
		} else if it.s.baton {
			out = true
		}
	}
	if kc != nil {
		in = in || kc.k != kFill
		out = out || kc.out.baton || kc.b != nil && kc.b.baton
	}
	switch {
	case in && out:
		return kind + " (shared input, shared output)"
	case in:
		return kind + " (shared input)"
	case out:
		return kind + " (shared output)"
	}
	return kind + " (private)"
}

// bad reports whether the items must make the construct fail: the present
// modifier on an absent item, or (exit) any absent item.
func (wk *worker) bad(items []item, exit bool) bool {
	if wk.r.initial {
		return false
	}
	for _, it := range items {
		if it.s != nil && !it.s.present && (it.present || exit) {
			return true
		}
	}
	return false
}

func (wk *worker) touch(cl string, items []item, kc *kcall) []*slot {
	var ss []*slot
	wk.seq++
	add := func(s *slot) {
		if s != nil && !slices.Contains(ss, s) {
			s.last, s.lastID = cl, wk.seq
			if s.devSet {
				s.devBy, s.devSet = cl, false
			}
			ss = append(ss, s)
		}
	}
	for _, it := range items {
		add(it.s)
	}
	if kc != nil {
		add(kc.out)
		add(kc.b)
	}
	return ss
}

// expect checks a construct's error against the model's expectation.
func (wk *worker) expect(cl string, err error, wantErr bool, ss []*slot) {
	wk.r.st.run(wk.r.devName, cl)
	var msg string
	switch {
	case wantErr && err == nil:
		msg = "no error; want a not-found error (the present modifier on an absent item, or exit of an absent item)"
	case wantErr && !errors.Is(err, device.ErrNotFound):
		msg = fmt.Sprintf("error %q; want a not-found error", err)
	case !wantErr && err != nil:
		msg = fmt.Sprintf("unexpected error: %v", err)
	default:
		return
	}
	wk.fail(cl, false, "%s", msg)
	for _, s := range ss {
		s.tainted = true
	}
}

// enter is the model of mapping items (structured or dynamic).
func (wk *worker) enter(items []item, structured bool) {
	if wk.r.initial {
		return
	}
	for _, it := range items {
		s := it.s
		if s == nil {
			continue
		}
		s.devSet = true
		if wk.r.zeroCopy {
			if !s.present {
				s.present, s.s, s.d = true, 0, 0
			}
		} else if !s.present {
			s.present, s.s, s.d = true, 0, 0
			if it.typ.in() {
				copy(s.dev, s.want)
				s.devUndef = s.hostUndef
			} else {
				s.devUndef = true
			}
		} else if it.always && it.typ.in() {
			copy(s.dev, s.want)
			s.devUndef = s.hostUndef
		}
		if structured {
			s.s++
		} else {
			s.d++
		}
	}
}

// exit is the model of unmapping items.
func (wk *worker) exit(items []item, structured bool) {
	if wk.r.initial {
		return
	}
	for _, it := range items {
		s := it.s
		if s == nil {
			continue
		}
		switch {
		case it.typ == mDelete:
			s.d = 0
		case structured:
			s.s = max(s.s-1, 0)
		default:
			s.d = max(s.d-1, 0)
		}
	}
	for _, it := range items {
		if s := it.s; s != nil && it.typ.out() && (it.always || s.s == 0 && s.d == 0) && !wk.r.zeroCopy {
			copy(s.want, s.dev)
			s.hostUndef = s.devUndef
		}
	}
	for _, it := range items {
		if s := it.s; s != nil && s.s == 0 && s.d == 0 {
			s.present = false
		}
	}
}

// view is where a kernel sees s: its device copy when present, else the
// host slice (the initial device, or an implicit tofrom map, which has the
// same effect).
func (wk *worker) view(s *slot) ([]float32, *bool) {
	if !wk.r.initial && !wk.r.zeroCopy && s.present {
		return s.dev, &s.devUndef
	}
	return s.want, &s.hostUndef
}

func (wk *worker) kernel(kc kcall) {
	out, undef := wk.view(kc.out)
	kc.out.devSet = kc.out.present
	x := wk.r.xWant[wk.cur][kc.x]
	lo, hi := kc.lo, kc.lo+kc.m
	switch kc.k {
	case kSaxpy:
		for i := lo; i < hi; i++ {
			out[i] = kc.a*x[i] + out[i]
		}
	case kFill:
		for i := lo; i < hi; i++ {
			out[i] = kc.a
		}
		if lo == 0 && hi == len(out) {
			*undef = false
		}
	case kVecAdd:
		b := wk.r.xWant[wk.cur][kc.xb]
		if kc.b != nil {
			var bu *bool
			b, bu = wk.view(kc.b)
			if *bu {
				*undef = true
			}
		}
		for i := lo; i < hi; i++ {
			out[i] = x[i] + b[i]
		}
	}
}

func (wk *worker) region(kc kcall, maps []target.Map) target.Region {
	x := wk.r.x[wk.cur]
	lo, hi := kc.lo, kc.lo+kc.m
	out := target.Slice(kc.out.host[lo:hi])
	r := target.Region{Device: target.Dev(wk.r.dev), Shape: target.N(kc.m), Maps: maps}
	switch kc.k {
	case kSaxpy:
		r.Kernel = kernels.Saxpy
		r.Args = []target.Arg{target.Int(kc.m), target.Float32(kc.a), target.Slice(x[kc.x][lo:hi]), out}
	case kFill:
		r.Kernel = kernels.Fill
		r.Args = []target.Arg{target.Int(kc.m), target.Float32(kc.a), out}
	case kVecAdd:
		b := target.Slice(x[kc.xb][lo:hi])
		if kc.b != nil {
			b = target.Slice(kc.b.host[lo:hi])
		}
		r.Kernel = kernels.VecAdd
		r.Args = []target.Arg{target.Int(kc.m), target.Slice(x[kc.x][lo:hi]), b, out}
	}
	return r
}

// privateMap picks a map clause for a private operand of a region, or none
// (implicit tofrom when absent).
func (wk *worker) privateMap(s *slot) (item, bool) {
	it := wk.whole(s, 0)
	switch wk.rng.IntN(6) {
	case 0:
		return it, false
	case 1:
		it.typ = mTo
	case 2:
		it.typ = mFrom
	case 3, 4:
		it.typ = mToFrom
	case 5:
		it.typ = mAlloc
	}
	it.always = it.typ != mAlloc && wk.rng.IntN(7) == 0
	it.present = wk.rng.IntN(12) == 0
	return it, true
}

func (wk *worker) opTarget(nowait bool) {
	f := wk.free()
	if len(f) == 0 {
		return
	}
	n := wk.r.n
	kc := kcall{out: wk.pick(f), lo: 0, m: n, x: wk.rng.IntN(nShared)}
	if wk.rng.IntN(10) < 3 {
		kc.lo = wk.rng.IntN(n) // any offset: on OpenCL, often not aligned
		kc.m = 1 + wk.rng.IntN(n-kc.lo)
	}
	switch c := wk.rng.IntN(10); {
	case c < 4:
		kc.k, kc.a = kSaxpy, float32([]int{-2, -1, 1, 2, 3}[wk.rng.IntN(5)])
	case c < 6:
		kc.k, kc.a = kFill, float32(wk.rng.IntN(9)-4)
	default:
		kc.k, kc.xb = kVecAdd, wk.rng.IntN(nShared)
		if others := slices.DeleteFunc(slices.Clone(f), func(s *slot) bool { return s == kc.out }); len(others) > 0 && wk.rng.IntN(2) == 0 {
			kc.b = wk.pick(others)
		}
	}
	var items []item
	var xs []int
	if kc.k != kFill {
		xs = append(xs, kc.x)
		if kc.k == kVecAdd && kc.b == nil && kc.xb != kc.x {
			xs = append(xs, kc.xb)
		}
	}
	var pins []int
	for _, k := range xs {
		// A shared input the goroutine holds is present: it may go
		// unnamed. Otherwise it is mapped to (an implicit tofrom would
		// copy back into memory other goroutines read).
		if wk.holds[k] == 0 || wk.rng.IntN(2) == 0 {
			items = append(items, item{x: k, typ: mTo})
		} else {
			pins = append(pins, k)
		}
	}
	for _, s := range []*slot{kc.out, kc.b} {
		if s == nil {
			continue
		}
		if it, ok := wk.privateMap(s); ok {
			items = append(items, it)
		}
	}
	wk.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	kind := "target"
	if nowait {
		kind = "target nowait"
	}
	cl := class(kind, items, &kc)
	wantErr := wk.bad(items, false)
	if wantErr {
		cl = "bad input: present modifier on an absent item"
	}
	r := wk.region(kc, wk.tmaps(items))
	if !wantErr {
		wk.enter(items, true)
		wk.kernel(kc)
		wk.exit(items, true)
	}
	ss := wk.touch(cl, items, &kc)
	if nowait {
		for _, s := range ss {
			s.busy = true
		}
		wk.tasks = append(wk.tasks, task{t: target.TargetNowait(r), class: cl, wantErr: wantErr, slots: ss, pins: pins})
		return
	}
	wk.expect(cl, target.Target(r), wantErr, ss)
	wk.check()
}

// pickSome returns up to k distinct slots of f, at least one if f has one.
func (wk *worker) pickSome(f []*slot, k int) []*slot {
	if len(f) == 0 {
		return nil
	}
	f = slices.Clone(f)
	wk.rng.Shuffle(len(f), func(i, j int) { f[i], f[j] = f[j], f[i] })
	return f[:min(len(f), 1+wk.rng.IntN(k))]
}

func kindName(kind string, nowait bool) string {
	if nowait {
		return kind + " nowait"
	}
	return kind
}

// dataTask issues a data construct (enter data, exit data, update): run
// runs it; start, when not nil, starts its nowait form instead. done holds
// the model's changes that take effect only once it has finished.
func (wk *worker) dataTask(cl string, items []item, wantErr bool, run func(...target.Map) error, start func(...target.Map) *target.Task, done func()) {
	ss := wk.touch(cl, items, nil)
	maps := wk.tmaps(items)
	if start != nil {
		for _, s := range ss {
			s.busy = true
		}
		wk.tasks = append(wk.tasks, task{t: start(maps...), class: cl, wantErr: wantErr, slots: ss, done: done})
		return
	}
	err := run(maps...)
	wk.expect(cl, err, wantErr, ss)
	if err == nil && !wantErr && done != nil {
		done()
	}
	wk.check()
}

func (wk *worker) enterData(ms ...target.Map) error { return target.EnterData(wk.r.dev, ms...) }
func (wk *worker) exitData(ms ...target.Map) error  { return target.ExitData(wk.r.dev, ms...) }
func (wk *worker) update(ms ...target.Map) error    { return target.Update(wk.r.dev, ms...) }

func (wk *worker) nowaitForm(nowait bool, f func(int, ...target.Map) *target.Task) func(...target.Map) *target.Task {
	if !nowait {
		return nil
	}
	return func(ms ...target.Map) *target.Task { return f(wk.r.dev, ms...) }
}

func (wk *worker) shuffle(items []item) {
	wk.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
}

const (
	classPresentAbsent = "bad input: present modifier on an absent item"
	classExitAbsent    = "bad input: exit data of an absent item"
	classHandoff       = "shared output handed to another goroutine"
	classEpoch         = "next epoch's shared inputs computed on the device"
	classLeakTable     = "leak check: present table after a round"
	classLeakShared    = "leak check: shared input mapped after every goroutine released it"
	classLeakMem       = "leak check: device memory after the rounds"
)

func (wk *worker) opEnter(nowait bool) {
	var items []item
	for _, s := range wk.pickSome(wk.free(), 2) {
		it := wk.whole(s, mTo)
		if wk.rng.IntN(5) < 2 {
			it.typ = mAlloc
		} else {
			it.always = wk.rng.IntN(7) == 0
		}
		it.present = wk.rng.IntN(20) == 0
		items = append(items, it)
	}
	var held []int
	if k := wk.rng.IntN(nShared); wk.rng.IntN(3) == 0 && wk.holds[k] < 2 {
		items = append(items, item{x: k, typ: mTo})
		held = append(held, k)
	}
	if len(items) == 0 {
		return
	}
	wk.shuffle(items)
	wantErr := wk.bad(items, false)
	cl := class(kindName("enter data", nowait), items, nil)
	if wantErr {
		cl = classPresentAbsent
	} else {
		wk.enter(items, false)
	}
	wk.dataTask(cl, items, wantErr, wk.enterData, wk.nowaitForm(nowait, target.EnterDataNowait), func() {
		for _, k := range held {
			wk.holds[k]++
		}
	})
}

// pinned counts the constructs in flight that use shared input k unmapped.
func (wk *worker) pinned(k int) int {
	n := 0
	for _, t := range wk.tasks {
		n += len(slices.DeleteFunc(slices.Clone(t.pins), func(p int) bool { return p != k }))
	}
	return n
}

func (wk *worker) opExit(nowait bool) {
	f := wk.free()
	var cands []*slot
	for _, s := range f {
		if s.present || wk.r.initial {
			cands = append(cands, s)
		}
	}
	var items []item
	if len(cands) > 0 {
		for _, s := range wk.pickSome(cands, 2) {
			it := wk.whole(s, mFrom)
			switch c := wk.rng.IntN(20); {
			case c < 8:
				it.always = wk.rng.IntN(7) == 0
			case c < 15:
				it.typ = mRelease
			default:
				it.typ = mDelete
			}
			items = append(items, it)
		}
	}
	if wk.rng.IntN(10) == 0 {
		for _, s := range f {
			if !s.present && !slices.ContainsFunc(items, func(it item) bool { return it.s == s }) {
				items = append(items, wk.whole(s, mFrom))
				break
			}
		}
	}
	var released []int
	for k := range nShared {
		// A reference a nowait construct in flight relies on stays.
		if wk.holds[k] > wk.pinned(k) && wk.rng.IntN(2) == 0 {
			items = append(items, item{x: k, typ: mRelease})
			released = append(released, k)
		}
	}
	if len(items) == 0 {
		return
	}
	wk.shuffle(items)
	wantErr := wk.bad(items, true)
	cl := class(kindName("exit data", nowait), items, nil)
	if wantErr {
		cl = classExitAbsent
	} else {
		wk.exit(items, false)
		// The references are gone for this goroutine's later constructs
		// as soon as it is issued.
		for _, k := range released {
			wk.holds[k]--
		}
	}
	wk.dataTask(cl, items, wantErr, wk.exitData, wk.nowaitForm(nowait, target.ExitDataNowait), nil)
}

func (wk *worker) opUpdate(nowait bool) {
	n := wk.r.n
	var items []item
	for _, s := range wk.pickSome(wk.free(), 2) {
		it := wk.whole(s, mTo)
		if wk.rng.IntN(2) == 0 {
			it.typ = mFrom
		}
		if wk.rng.IntN(10) < 3 {
			it.lo = wk.rng.IntN(n)
			it.hi = it.lo + 1 + wk.rng.IntN(n-it.lo)
		}
		it.present = wk.rng.IntN(10) == 0
		items = append(items, it)
	}
	if len(items) == 0 {
		return
	}
	wantErr := wk.bad(items, false)
	cl := class(kindName("update", nowait), items, nil)
	if wantErr {
		cl = classPresentAbsent
	} else if !wk.r.initial && !wk.r.zeroCopy {
		for _, it := range items {
			s := it.s
			if !s.present {
				continue
			}
			whole := it.lo == 0 && it.hi == n
			if it.typ == mTo {
				s.devSet = true
				copy(s.dev[it.lo:it.hi], s.want[it.lo:it.hi])
				s.devUndef = whole && s.hostUndef || !whole && (s.devUndef || s.hostUndef)
			} else {
				copy(s.want[it.lo:it.hi], s.dev[it.lo:it.hi])
				s.hostUndef = whole && s.devUndef || !whole && (s.hostUndef || s.devUndef)
			}
		}
	}
	wk.dataTask(cl, items, wantErr, wk.update, wk.nowaitForm(nowait, target.UpdateNowait), nil)
}

func isBodyPanic(v any) bool {
	err, ok := v.(error)
	return ok && errors.Is(err, panicBody)
}

// opData runs a data region whose body runs a few constructs, waits for
// them, and returns nil, returns an error or panics.
func (wk *worker) opData() {
	f := wk.free()
	if len(f) == 0 {
		return
	}
	var items []item
	for _, s := range wk.pickSome(f, 2) {
		it := wk.whole(s, []mtype{mTo, mFrom, mToFrom, mToFrom, mAlloc}[wk.rng.IntN(5)])
		it.always = it.typ != mAlloc && wk.rng.IntN(8) == 0
		it.present = wk.rng.IntN(20) == 0
		items = append(items, it)
	}
	if wk.rng.IntN(2) == 0 {
		items = append(items, item{x: wk.rng.IntN(nShared), typ: mTo})
	}
	wk.shuffle(items)
	end := wk.rng.IntN(3)
	if end == 2 && !wk.r.cfg.panics {
		end = 1
	}
	cl := class([]string{"data region, body returns nil", "data region, body returns an error", "data region, body panics"}[end], items, nil)
	wantErr := wk.bad(items, false)
	if wantErr {
		cl = classPresentAbsent
	} else {
		wk.enter(items, true)
	}
	ss := wk.touch(cl, items, nil)
	id := wk.seq
	maps := wk.tmaps(items)
	ran := false
	var err error
	var rec any
	func() {
		defer func() { rec = recover() }()
		err = target.Data(wk.r.dev, maps, func() error {
			ran = true
			wk.depth++
			defer func() { wk.depth-- }()
			for range 1 + wk.rng.IntN(3) {
				wk.op()
			}
			wk.waitAll()
			switch end {
			case 1:
				return errBody
			case 2:
				panic(panicBody)
			}
			return nil
		})
	}()
	if !wantErr {
		wk.exit(items, true)
		for _, s := range ss {
			s.last, s.lastID = cl, id
		}
	}
	wk.r.st.run(wk.r.devName, cl)
	var msg string
	switch {
	case wantErr:
		if ran || rec != nil || !errors.Is(err, device.ErrNotFound) {
			msg = fmt.Sprintf("body ran %v, error %v, panic %v; want a not-found error and no body", ran, err, rec)
		}
	case !ran:
		msg = fmt.Sprintf("the body did not run; error %v, panic %v", err, rec)
	case end == 2:
		if !isBodyPanic(rec) {
			msg = fmt.Sprintf("recovered %v (error %v); want the body's panic %q to reach the caller", rec, err, panicBody)
		}
	case rec != nil:
		msg = fmt.Sprintf("unexpected panic %v", rec)
	case end == 1 && (err == nil || err.Error() != errBody.Error()):
		msg = fmt.Sprintf("error %v; want the body's error %q alone", err, errBody)
	case end == 0 && err != nil:
		msg = fmt.Sprintf("unexpected error: %v", err)
	}
	if msg != "" {
		wk.fail(cl, false, "%s", msg)
		for _, s := range ss {
			s.tainted = true
		}
	}
	wk.check()
}

func (wk *worker) opWrite() {
	f := wk.free()
	if len(f) == 0 {
		return
	}
	s := wk.pick(f)
	randomInts(wk.rng, s.host)
	copy(s.want, s.host)
	s.hostUndef = false
}

// opBaton hands the shared output the goroutine holds to the pool, mapped
// or not, or takes one from it.
func (wk *worker) opBaton() {
	if b := wk.baton; b != nil {
		if b.busy {
			wk.waitAll()
			wk.resync()
		}
		wk.slots = slices.DeleteFunc(wk.slots, func(s *slot) bool { return s == b })
		wk.baton = nil
		wk.r.batons <- b
		return
	}
	select {
	case b := <-wk.r.batons:
		wk.baton = b
		wk.slots = append(wk.slots, b)
		b.baton = true
		wk.seq++
		b.last, b.lastID = classHandoff, wk.seq
		wk.r.st.run(wk.r.devName, classHandoff)
		wk.checkSlot(b)
	default:
	}
}

// waitAll waits for every construct in flight and checks every slot.
func (wk *worker) waitAll() {
	tasks := wk.tasks
	wk.tasks = nil
	for _, tk := range tasks {
		err := tk.t.Wait()
		for _, s := range tk.slots {
			s.busy = false
		}
		wk.expect(tk.class, err, tk.wantErr, tk.slots)
		if err == nil && !tk.wantErr && tk.done != nil {
			tk.done()
		}
	}
	wk.check()
}

// check compares every slot no construct in flight uses with the model,
// and checks the shared inputs the goroutine holds are present.
func (wk *worker) check() {
	for _, s := range wk.slots {
		wk.checkSlot(s)
	}
	if wk.r.initial {
		return
	}
	for k, h := range wk.holds {
		if h > 0 && !target.IsPresent(wk.r.x[wk.cur][k], wk.r.dev) {
			wk.fail("enter data (shared input)", true, "shared input %d: not present, but this goroutine holds %d references from enter data", k, h)
			wk.holds[k] = 0
		}
	}
}

func (wk *worker) checkSlot(s *slot) {
	if s.busy || s.tainted {
		return
	}
	if !wk.r.initial {
		p := target.IsPresent(s.host, wk.r.dev)
		if p != s.present {
			wk.failSlot(s, "%s: present on the device %v, want %v", s.name, p, s.present)
			return
		}
		if p {
			if msg := wk.entryCounts(s); msg != "" {
				wk.failSlot(s, "%s", msg)
				return
			}
		}
	}
	if s.hostUndef {
		return
	}
	if i, bad := diff(s.host, s.want); bad > 0 {
		by := ""
		if s.devBy != "" {
			by = "; its device copy was last changed by a " + s.devBy
		}
		wk.failSlot(s, "%s[%d] = %v, want %v (%d of %d elements differ%s)", s.name, i, s.host[i], s.want[i], bad, len(s.host), by)
	}
}

// entryCounts compares the reference counts of s's entry with the model;
// "" when they agree.
func (wk *worker) entryCounts(s *slot) string {
	for _, e := range inspect.MappingEntries(wk.r.dev) {
		if e.Host == addrOf(s.host) && e.Size == 4*len(s.host) {
			if e.Structured != s.s || e.Dynamic != s.d {
				return fmt.Sprintf("%s: reference counts structured %d dynamic %d, want %d and %d", s.name, e.Structured, e.Dynamic, s.s, s.d)
			}
			return ""
		}
	}
	return fmt.Sprintf("%s: present, but not as an entry of its own", s.name)
}

// diff returns the first index where a and b differ, bit for bit, and
// how many do.
func diff(a, b []float32) (first, n int) {
	first = -1
	if bytes.Equal(device.Bytes(a), device.Bytes(b)) {
		return first, 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			if n == 0 {
				first = i
			}
			n++
		}
	}
	return first, n
}

// resync brings tainted slots back to a known state at the top level:
// unmapped, and the model reads the host values. A slice that cannot be
// unmapped (a reference no construct can drop) is replaced by a new one.
func (wk *worker) resync() {
	if wk.depth > 0 {
		return
	}
	for _, s := range wk.slots {
		if !s.tainted || s.busy {
			continue
		}
		if !wk.r.initial {
			for i := 0; i < 4 && target.IsPresent(s.host, wk.r.dev); i++ {
				_ = target.ExitData(wk.r.dev, target.Delete(s.host))
			}
			if target.IsPresent(s.host, wk.r.dev) {
				s.host = slices.Clone(s.host)
				s.name += " (replaced: the old one stays mapped)"
			}
		}
		copy(s.want, s.host)
		s.hostUndef, s.devUndef, s.present, s.s, s.d, s.tainted, s.devBy = false, false, false, 0, 0, false, ""
	}
}

// clean unmaps s with exit data from, one dynamic reference at a time, so
// its device values come back and are checked.
func (wk *worker) clean(s *slot) {
	for !wk.r.initial && s.present && s.d > 0 && !s.tainted {
		items := []item{wk.whole(s, mFrom)}
		cl := class("exit data", items, nil)
		wk.exit(items, false)
		wk.touch(cl, items, nil)
		wk.expect(cl, target.ExitData(wk.r.dev, wk.tmap(items[0])), false, []*slot{s})
		wk.checkSlot(s)
	}
}

func (wk *worker) releaseHolds() {
	for k := range wk.holds {
		for ; wk.holds[k] > 0; wk.holds[k]-- {
			it := item{x: k, typ: mRelease}
			wk.expect(class("exit data", []item{it}, nil), target.ExitData(wk.r.dev, wk.tmap(it)), false, nil)
		}
	}
}

// epochEnd ends an epoch: every goroutine drops its references to the
// shared inputs; goroutine 0 checks none is left mapped and none changed;
// goroutines 0..nShared-1 each compute one shared input of the next epoch
// on the device from two of this epoch's; then all go on with those.
func (wk *worker) epochEnd(e int) bool {
	r := wk.r
	wk.waitAll()
	wk.resync()
	wk.releaseHolds()
	if !r.bar.wait() {
		return false
	}
	if wk.w == 0 {
		r.st.run(r.devName, classLeakShared)
		var mapped []int
		for k, x := range r.x[wk.cur] {
			if !r.initial && target.IsPresent(x, r.dev) {
				mapped = append(mapped, k)
			}
			if i, bad := diff(x, r.xWant[wk.cur][k]); bad > 0 {
				wk.fail(classEpoch, true, "shared input %d changed on the host while only read: [%d] = %v, want %v (%d differ)", k, i, x[i], r.xWant[wk.cur][k][i], bad)
				copy(x, r.xWant[wk.cur][k])
			}
		}
		if len(mapped) > 0 {
			wk.fail(classLeakShared, false, "shared inputs %v still present after every goroutine released them", mapped)
		}
	}
	if !r.bar.wait() {
		return false
	}
	next := 1 - wk.cur
	if wk.w < nShared {
		wk.computeInput(next)
	}
	if !r.bar.wait() {
		return false
	}
	wk.cur = next
	return true
}

// computeInput computes shared input w of the next epoch on the device:
// x[next][w] = x[cur][w+1] + x[cur][w+2], each of those read by two
// goroutines at once.
func (wk *worker) computeInput(next int) {
	r, w := wk.r, wk.w
	a, b := r.x[wk.cur][(w+1)%nShared], r.x[wk.cur][(w+2)%nShared]
	dst := r.x[next][w]
	randomInts(wk.rng, dst) // overwritten: the map is from
	want := make([]float32, r.n)
	wa, wb := r.xWant[wk.cur][(w+1)%nShared], r.xWant[wk.cur][(w+2)%nShared]
	for i := range want {
		want[i] = wa[i] + wb[i]
	}
	reg := target.Region{Device: target.Dev(r.dev), Kernel: kernels.VecAdd, Shape: target.N(r.n),
		Args: []target.Arg{target.Int(r.n), target.Slice(a), target.Slice(b), target.Slice(dst)}}
	maps := []target.Map{target.To(a), target.To(b), target.From(dst)}
	var err error
	switch wk.rng.IntN(4) {
	case 0:
		reg.Maps = maps
		err = target.Target(reg)
	case 1:
		reg.Maps = maps
		err = target.TargetNowait(reg).Wait()
	case 2:
		err = target.Data(r.dev, maps, func() error { return target.Target(reg) })
	default:
		err = target.EnterData(r.dev, target.To(a), target.To(b), target.Alloc(dst))
		if err == nil {
			err = errors.Join(target.Target(reg), target.ExitData(r.dev, target.Release(a), target.Release(b), target.From(dst)))
		}
	}
	r.st.run(r.devName, classEpoch)
	if err != nil {
		wk.fail(classEpoch, false, "computing shared input %d: %v", w, err)
	}
	if i, bad := diff(dst, want); bad > 0 {
		wk.fail(classEpoch, true, "shared input %d of the next epoch: [%d] = %v, want %v (%d of %d differ)", w, i, dst[i], want[i], bad, r.n)
		copy(dst, want)
	}
	r.xWant[next][w] = want
}

// finish ends the round for the goroutine: it waits, drops its references,
// unmaps its slices through exit data from (checking what comes back), and
// gives back the shared output it holds, which may stay mapped.
func (wk *worker) finish() {
	wk.waitAll()
	wk.resync()
	wk.releaseHolds()
	for _, s := range wk.slots {
		if s != wk.baton {
			wk.clean(s)
		}
	}
	wk.check()
	wk.resync()
	if wk.baton != nil {
		wk.r.batons <- wk.baton
		wk.baton = nil
	}
}
