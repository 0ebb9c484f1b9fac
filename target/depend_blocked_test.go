package target

import (
	"bufio"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tgtBlocker is a one-team kernel that, when it runs on its queue's own
// goroutine (after its construct has enqueued it and gone on), says it
// started and waits for release, then fails (panics). Run inline on the
// construct's goroutine it fails at once: the construct would not go on
// until it returned.
type tgtBlocker struct {
	k       *device.Kernel
	started chan struct{}
	release chan struct{}
	inline  atomic.Bool
}

func newTgtBlocker() *tgtBlocker {
	b := &tgtBlocker{started: make(chan struct{}), release: make(chan struct{})}
	b.k = &device.Kernel{Name: "tgt_block", Params: []device.Param{{Name: "n", Kind: device.ParamInt64}},
		Images: []device.Image{{Kind: device.ImageHost, Host: func(*device.HostArgs, device.Range, int, int) {
			buf := make([]byte, 64<<10)
			if strings.Contains(string(buf[:runtime.Stack(buf, false)]), "target.(*construct).launch") {
				b.inline.Store(true)
			} else {
				close(b.started)
				<-b.release
			}
			panic("tgt_block fails")
		}}}}
	return b
}

// region is the blocker's construct: an always copy of big (present, of
// several MiB) before the kernel keeps the queue busy, so the kernel is
// enqueued behind it rather than run inline.
func (b *tgtBlocker) region(big []float32, deps ...Map) Region {
	return Region{Device: Dev(0), Kernel: b.k, Shape: Shape{Size: [3]int{1, 1, 1}, Teams: 1}, Args: []Arg{Int(1)},
		Maps: append([]Map{To(big).Always()}, deps...)}
}

// tgtWatchStderr sends standard error's lines to see until the returned
// stop is called; stop restores standard error and returns the output.
func tgtWatchStderr(t *testing.T, see func(line string)) (stop func() string) {
	t.Helper()
	rd, wr, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stderr
	os.Stderr = wr
	done := make(chan string)
	go func() {
		var all strings.Builder
		sc := bufio.NewScanner(rd)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			see(sc.Text())
		}
		io.Copy(io.Discard, rd)
		done <- all.String()
	}()
	var once sync.Once
	var out string
	stop = func() string {
		once.Do(func() {
			os.Stderr = old
			wr.Close()
			out = <-done
		})
		return out
	}
	t.Cleanup(func() { stop() })
	return stop
}

// awaitStart waits for the blocker's kernel, of construct a, to start on
// its queue's goroutine: false when it ran inline instead (a ended
// first), and it fails the test when neither happens in 20s.
func (b *tgtBlocker) awaitStart(t *testing.T, a *Task) (async bool) {
	t.Helper()
	select {
	case <-b.started:
	case <-a.Done():
		require.True(t, b.inline.Load(), "the blocker's construct ended before its kernel started: %v", a.Wait())
		return false
	case <-time.After(20 * time.Second):
		require.FailNow(t, "the blocker's kernel did not start in 20s")
	}
	return true
}

// tgtStart starts the runtime of env, whose plugin must give a device
// (the faulty plugin's with no faults planned, before and after), and
// checks device memory for leaks at the end.
func tgtStart(t *testing.T, env map[string]string) {
	t.Helper()
	r := useRuntime(t, env)
	switch p := env["GOMPT_PLUGINS"]; p {
	case faultyPluginName:
		require.NotEmpty(t, r.devs, "no faulty host device: %s", r.why())
		faultPlan.Reset()
		t.Cleanup(faultPlan.Reset)
	case "host":
		require.NotEmpty(t, r.devs, "no host device: %s", r.why())
	default:
		require.NotEmpty(t, r.devs, "no %s device: %s", p, r.why())
	}
	noLeak(t, r)
}

// tgtWithBig starts the runtime of env (tgtStart) and runs body with big,
// a slice of several MiB allocated on device 0 for the blockers' copies,
// deleted after body.
func tgtWithBig(t *testing.T, env map[string]string, body func(big []float32)) {
	t.Helper()
	tgtStart(t, env)
	big := make([]float32, 4<<20)
	require.NoError(t, EnterData(0, Alloc(big)))
	body(big)
	require.NoError(t, ExitData(0, Delete(big)))
}

const tgtAllInline = "every round ran the blocker's kernel inline"

// tgtRounds runs round (0, 1, ...) until 3 of them have counted (returned
// true: the blocker's kernel ran on its queue, not inline) or 20 have run,
// and requires one counted (allInline, the message if none did).
func tgtRounds(t *testing.T, allInline string, round func(round int) (counted bool)) {
	t.Helper()
	rounds := 0
	for r := 0; r < 20 && rounds < 3; r++ {
		if round(r) {
			rounds++
		}
	}
	require.NotZero(t, rounds, allInline)
}

// tgtKeptY requires y to hold the values vecs gave it (2i at i); msg is a
// format of pre (the round) and i.
func tgtKeptY(t *testing.T, y []float32, msg string, pre int) {
	t.Helper()
	for i := range y {
		require.Equal(t, float32(2*i), y[i], msg, pre, i)
	}
}

// tgtAfterBlocked runs the blocker's construct (nowait, depend(out: dep))
// and, once its kernel waits on the device, the dependent construct
// begin() starts; when a line of standard error (GOMPT_INFO) shows the
// dependent at work (signal), the kernel is let go and fails. It returns
// both tasks' errors, and false for a round where the kernel ran inline
// (nothing to learn: the dependent began after the failure).
func tgtAfterBlocked(t *testing.T, big []float32, dep []float32, signal string, begin func() *Task) (async bool, errA, errB error) {
	t.Helper()
	b := newTgtBlocker()
	sig := newTgtSignals(signal)
	stop := tgtWatchStderr(t, sig.see)
	defer stop()
	a := TargetNowait(b.region(big, DependOut(dep)))
	if !b.awaitStart(t, a) {
		return false, nil, nil
	}
	d := begin()
	select {
	case <-sig.ch[signal]:
	case <-time.After(20 * time.Second):
		close(b.release)
		a.Wait()
		d.Wait()
		require.FailNow(t, "the dependent did not begin its work in 20s while its predecessor's kernel waited on the device: a construct releases its dependents once its device work is enqueued; output:\n"+stop())
	}
	close(b.release)
	return true, a.Wait(), d.Wait()
}

// On a device whose queues cannot wait for another queue's event (the
// wrapped host device of device/faulty), a construct that depends on one
// whose kernel fails on the device after the dependent has begun waits
// for that kernel on the host and fails with it: it copies nothing to or
// from its data, and the host sees no result.
func TestDependentWaitsOnHostForFailingKernel(t *testing.T) {
	tgtWithBig(t, map[string]string{"GOMPT_PLUGINS": faultyPluginName, "GOMPT_INFO": "1"}, func(big []float32) {
		tgtRounds(t, tgtAllInline, func(round int) bool {
			x, y := vecs(12) // 48 bytes: "alloc 48 bytes" is the dependent's first map
			async, errA, errB := tgtAfterBlocked(t, big, y, "alloc 48 bytes", func() *Task {
				return TargetNowait(saxpyRegion(0, 12, 2, x, y, To(x), ToFrom(y), DependIn(y)))
			})
			if !async {
				return false
			}
			require.ErrorContains(t, errA, "tgt_block fails", "round %d: the failing kernel's construct", round)
			require.ErrorIs(t, errB, ErrDependence, "round %d: the dependent of a kernel that failed on the device", round)
			require.ErrorContains(t, errB, "tgt_block fails", "round %d: the dependent of a kernel that failed on the device", round)
			tgtKeptY(t, y, "round %d: y[%d] after the refused dependent", round)
			assert.False(t, IsPresent(x, 0) || IsPresent(y, 0), "round %d: the dependent's data left mapped", round)
			return true
		})
	})
}

// A construct that fails on its own (its kernel launch is refused: a
// device pointer the device does not know) while it waits on the device
// for a predecessor whose kernel then fails reports both: its own failure
// and the dependence.
func TestOwnFailureAndDependenceBothReported(t *testing.T) {
	tgtWithBig(t, map[string]string{"GOMPT_PLUGINS": "host", "GOMPT_INFO": "2"}, func(big []float32) {
		tgtRounds(t, tgtAllInline, func(round int) bool {
			y := make([]float32, 8)
			bogus := DevicePtr(0x10)
			async, errA, errB := tgtAfterBlocked(t, big, y, "launch saxpy", func() *Task {
				return TargetNowait(Region{Device: Dev(0), Kernel: kernels.Saxpy, Shape: N(8),
					Args: []Arg{Int(8), Float32(2), Ptr(bogus), Ptr(bogus)}, Maps: []Map{DependIn(y)}})
			})
			if !async {
				return false
			}
			require.ErrorContains(t, errA, "tgt_block fails", "round %d: the failing kernel's construct", round)
			require.ErrorIs(t, errB, ErrDependence, "round %d: the dependent whose own launch failed too: %v", round, errB)
			require.Equal(t, device.CodeInvalidArgument, device.CodeOf(errB), "round %d: the dependent's own failure, a refused launch: %v", round, errB)
			return true
		})
	})
}

// A construct that finds its data still being copied to the device by
// another construct, and has no device work of its own on it (enter data
// of a present slice), leaves no wait behind: the next construct on the
// device, on other data, neither waits for that copy nor fails with it
// (here the copy fails, after a kernel it was queued behind).
func TestNoWaitLeftForTheNextConstruct(t *testing.T) {
	tgtWithBig(t, map[string]string{"GOMPT_PLUGINS": "host", "GOMPT_INFO": "1"}, func(big []float32) {
		tgtRounds(t, tgtAllInline, func(round int) bool {
			b := newTgtBlocker()
			x := make([]float32, 12) // 48 bytes: "copy 48 bytes host" is the copy of x
			sig := newTgtSignals("copy 48 bytes host")
			stop := tgtWatchStderr(t, sig.see)
			a := TargetNowait(b.region(big, DependOut(x)))
			if !b.awaitStart(t, a) {
				stop()
				return false
			}
			// c's copy of x waits on the device for a's kernel.
			c := EnterDataNowait(0, To(x), DependIn(x))
			select {
			case <-sig.ch["copy 48 bytes host"]:
			case <-time.After(20 * time.Second):
				close(b.release)
				require.FailNow(t, "enter data of x did not copy it in 20s; output:\n"+stop())
			}
			require.NoError(t, EnterData(0, To(x)), "round %d: enter data of x, present, its copy pending", round)
			close(b.release)
			require.ErrorContains(t, a.Wait(), "tgt_block fails", "round %d: the failing kernel's construct", round)
			require.ErrorIs(t, c.Wait(), ErrDependence, "round %d: the copy queued behind the failing kernel", round)
			stop()
			u, v := vecs(16)
			require.NoError(t, Target(saxpyRegion(0, 16, 2, u, v, To(u), ToFrom(v))), "round %d: the next construct, on other data", round)
			checkSaxpy(t, 2, u, v, func(i int) float32 { return float32(2 * i) })
			// x's device copy is the failed one: deleting it may report that
			// failure again, and unmaps it. (The second enter data holds it:
			// the first one, which did not run, mapped nothing.)
			if err := ExitData(0, Delete(x)); err != nil {
				require.ErrorContains(t, err, "the copy another construct made of shared data to the device failed", "round %d: exit data delete of x", round)
			}
			require.False(t, IsPresent(x, 0), "round %d: x after exit data delete", round)
			return true
		})
	})
}

// tgtSignals is a set of channels, each closed at the first line of
// standard error that contains its text.
type tgtSignals struct {
	mu     sync.Mutex
	ch     map[string]chan struct{}
	closed map[string]bool
}

func newTgtSignals(texts ...string) *tgtSignals {
	s := &tgtSignals{ch: map[string]chan struct{}{}, closed: map[string]bool{}}
	for _, x := range texts {
		s.ch[x] = make(chan struct{})
	}
	return s
}

func (s *tgtSignals) see(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for x, c := range s.ch {
		if !s.closed[x] && strings.Contains(line, x) {
			close(c)
			s.closed[x] = true
		}
	}
}

// wait returns once a line with text has been seen, or fails the test
// after 20s (calling onFail first).
func (s *tgtSignals) wait(t *testing.T, text, what string, onFail func()) {
	t.Helper()
	select {
	case <-s.ch[text]:
	case <-time.After(20 * time.Second):
		onFail()
		require.FailNow(t, what+" did not happen in 20s")
	}
}

// A construct whose kernel reads a slice another construct is still
// copying to the device, and which also depends on a third construct,
// is told when that copy fails: its error says the shared data's copy
// failed (its input on the device is wrong), besides the dependence.
func TestSharedCopyFailureReportedWithDependence(t *testing.T) {
	tgtWithBig(t, map[string]string{"GOMPT_PLUGINS": "host", "GOMPT_INFO": "1"}, func(big []float32) {
		tgtRounds(t, tgtAllInline, func(round int) bool {
			b := newTgtBlocker()
			key := make([]byte, 1)
			x := make([]float32, 12) // 48 bytes: its copy is "copy 48 bytes host"
			y := make([]float32, 16) // 64 bytes: its alloc is "alloc 64 bytes"
			sig := newTgtSignals("copy 48 bytes host", "alloc 64 bytes")
			stop := tgtWatchStderr(t, sig.see)
			a := TargetNowait(b.region(big, DependOut(key)))
			if !b.awaitStart(t, a) {
				stop()
				return false
			}
			letGo := func() { close(b.release) }
			// c copies x, on the device after a's kernel.
			c := EnterDataNowait(0, To(x), DependIn(key))
			sig.wait(t, "copy 48 bytes host", "enter data's copy of x", letGo)
			// d reads x, present, its copy pending; it depends on a too.
			d := TargetNowait(Region{Device: Dev(0), Kernel: kernels.Saxpy, Shape: N(12),
				Args: []Arg{Int(12), Float32(2), Slice(x), Slice(y)}, Maps: []Map{DependIn(key)}})
			sig.wait(t, "alloc 64 bytes", "the dependent's map of y", letGo)
			letGo()
			require.ErrorContains(t, a.Wait(), "tgt_block fails", "round %d: the failing kernel's construct", round)
			require.ErrorIs(t, c.Wait(), ErrDependence, "round %d: the copy of x queued behind the failing kernel", round)
			errD := d.Wait()
			stop()
			require.ErrorIs(t, errD, ErrDependence, "round %d: the dependent of the failing kernel", round)
			require.ErrorContains(t, errD, "the copy another construct made of shared data to the device failed", "round %d: the kernel on x whose copy failed", round)
			for i := range y {
				require.Zero(t, y[i], "round %d: y[%d] after the failed construct", round, i)
			}
			// The enter data that did not run mapped nothing (TestEnterDataNotRunMapsNothing).
			require.False(t, IsPresent(x, 0) || IsPresent(y, 0), "round %d: x or y left mapped", round)
			return true
		})
	})
}

// Whichever event a construct's queue fails to record (a device that
// cannot make one), its dependents still wait for its kernel and fail
// with it: they never run on its data before the kernel has run, nor
// after it failed.
func TestRecordFailureStillOrdersDependents(t *testing.T) {
	tgtWithBig(t, map[string]string{"GOMPT_PLUGINS": faultyPluginName}, func(big []float32) {
		fired := 0
		for n := 1; n <= 6; n++ {
			for try := 0; try < 10; try++ {
				b := newTgtBlocker()
				key := make([]byte, 1)
				x, y := vecs(16)
				before := faultPlan.Injected(faulty.Record)
				faultPlan.FailNth(faulty.Record, n, device.CodeUnknown)
				a := TargetNowait(b.region(big, DependOut(key)))
				select {
				case <-b.started:
				case <-a.Done():
				case <-time.After(20 * time.Second):
					require.FailNow(t, "the blocker's kernel did not start in 20s")
				}
				d := TargetNowait(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y), DependIn(key)))
				if !b.inline.Load() {
					close(b.release)
				}
				errA, errD := a.Wait(), d.Wait()
				faultPlan.Reset()
				if b.inline.Load() {
					continue // the kernel failed before the construct went on: try again
				}
				if faultPlan.Injected(faulty.Record) > before {
					fired++
				}
				require.ErrorContains(t, errA, "tgt_block fails", "record %d failing: the failing kernel's construct", n)
				require.ErrorIs(t, errD, ErrDependence, "record %d failing: the dependent of the failing kernel", n)
				tgtKeptY(t, y, "record %d failing: y[%d] after the refused dependent", n)
				break
			}
		}
		require.NotZero(t, fired, "no record failed")
	})
}

// A construct whose predecessor's kernel fails on the device after the
// construct has begun (waiting for it on the device) copies nothing back
// to the host: its tofrom slice keeps its host values, although the
// construct's own kernel and copy were enqueued behind the failure.
func TestDependentOfFailedKernelCopiesNothingBack(t *testing.T) {
	tgtWithBig(t, map[string]string{"GOMPT_PLUGINS": "host", "GOMPT_INFO": "2"}, func(big []float32) {
		tgtRounds(t, tgtAllInline, func(round int) bool {
			key := make([]float32, 1)
			x, y := vecs(16)
			async, errA, errB := tgtAfterBlocked(t, big, key, "launch saxpy", func() *Task {
				return TargetNowait(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y), DependIn(key)))
			})
			if !async {
				return false
			}
			require.ErrorContains(t, errA, "tgt_block fails", "round %d: the failing kernel's construct", round)
			require.ErrorIs(t, errB, ErrDependence, "round %d: the dependent of the failing kernel", round)
			tgtKeptY(t, y, "round %d: y[%d] on the host after the dependent of a failed kernel", round)
			assert.False(t, IsPresent(x, 0) || IsPresent(y, 0), "round %d: the dependent's data left mapped", round)
			return true
		})
	})
}

// tgtWaitFailName is a plugin of the host devices whose queues' device
// side waits (device.Waiter) fail when tgtWaitFail is set: the next
// WaitEvent fails, once.
const tgtWaitFailName = "host-waitfail"

var (
	tgtWaitFail atomic.Bool
	tgtErrWait  = errors.New("test: injected WaitEvent failure")
)

type tgtWaitFailPlugin struct{}

func (tgtWaitFailPlugin) Devices() ([]device.Device, error) {
	p, ok := device.Lookup(host.Name)
	if !ok {
		return nil, device.NoDevice(tgtWaitFailName, errors.New("host plugin not registered"))
	}
	ds, err := p.Devices()
	var out []device.Device
	for _, d := range ds {
		if hd, ok := d.(*host.Device); ok {
			out = append(out, tgtWaitFailDevice{hd})
		}
	}
	return out, err
}

type tgtWaitFailDevice struct{ *host.Device }

type tgtWaitFailQueue struct{ *host.Queue }

func (d tgtWaitFailDevice) NewQueue() (device.Queue, error) {
	q, err := d.Device.NewQueue()
	if err != nil {
		return nil, err
	}
	return tgtWaitFailQueue{q.(*host.Queue)}, nil
}

// tgtWaitDecline makes the nth WaitEvent from now decline (false, nil),
// as for an event the queue cannot wait on; 0: none.
var tgtWaitDecline atomic.Int32

func (q tgtWaitFailQueue) WaitEvent(ev device.Event) (bool, error) {
	if tgtWaitFail.CompareAndSwap(true, false) {
		return false, tgtErrWait
	}
	if tgtWaitDecline.Load() > 0 && tgtWaitDecline.Add(-1) == 0 {
		return false, nil
	}
	return q.Queue.WaitEvent(ev)
}

func init() { device.Register(tgtWaitFailName, tgtWaitFailPlugin{}) }

// A construct whose queue cannot wait on the device for its predecessor
// (WaitEvent fails) fails with that failure, its cause, and does not run:
// its data keeps its host values and is unmapped.
func TestDeviceWaitFailureIsTheConstructsError(t *testing.T) {
	t.Cleanup(func() { tgtWaitFail.Store(false) })
	tgtWithBig(t, map[string]string{"GOMPT_PLUGINS": tgtWaitFailName}, func(big []float32) {
		tgtRounds(t, tgtAllInline, func(round int) bool {
			b := newTgtBlocker()
			key := make([]float32, 1)
			a := TargetNowait(b.region(big, DependOut(key)))
			if !b.awaitStart(t, a) {
				return false
			}
			x, y := vecs(16)
			tgtWaitFail.Store(true)
			d := TargetNowait(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y), DependIn(key)))
			// The wait's failure is consumed once d has begun its device work.
			for deadline := time.Now().Add(20 * time.Second); tgtWaitFail.Load(); {
				if time.Now().After(deadline) {
					close(b.release)
					require.FailNow(t, "the dependent did not wait on the device in 20s")
				}
				runtime.Gosched()
			}
			close(b.release)
			require.ErrorContains(t, a.Wait(), "tgt_block fails", "round %d: the blocker's construct", round)
			require.ErrorIs(t, d.Wait(), tgtErrWait, "round %d: the construct whose wait on the device failed", round)
			tgtKeptY(t, y, "round %d: y[%d] after the failed construct", round)
			assert.False(t, IsPresent(x, 0) || IsPresent(y, 0), "round %d: the failed construct's data left mapped", round)
			return true
		})
	})
}

// The same on present data: a construct whose data is all present (no
// copy before its kernel) and whose predecessor's kernel fails on the
// device after it began fails with the dependence, on a device whose
// queues cannot wait on the device, and its kernel does not run.
func TestDependentOnPresentDataWaitsOnHostForFailingKernel(t *testing.T) {
	tgtWithBig(t, map[string]string{"GOMPT_PLUGINS": faultyPluginName, "GOMPT_INFO": "2"}, func(big []float32) {
		tgtRounds(t, tgtAllInline, func(round int) bool {
			x, y := vecs(16)
			require.NoError(t, EnterData(0, To(x), To(y)))
			async, errA, errB := tgtAfterBlocked(t, big, y, "launch saxpy", func() *Task {
				return TargetNowait(saxpyRegion(0, 16, 2, x, y, DependIn(y)))
			})
			if async {
				require.ErrorContains(t, errA, "tgt_block fails", "round %d: the failing kernel's construct", round)
				require.ErrorIs(t, errB, ErrDependence, "round %d: the dependent of a kernel that failed on the device", round)
			}
			require.NoError(t, ExitData(0, From(x), From(y)))
			tgtKeptY(t, y, "round %d: y[%d], copied back after the refused dependent", round)
			return async
		})
	})
}

// A construct depending on two constructs whose kernels both fail on the
// device after it began, one waited for by its queue on the device and
// one on the host (an event its queue declines), fails with the
// dependence, naming one failure once, not each.
func TestTwoFailedPredecessorsNamedOnce(t *testing.T) {
	t.Cleanup(func() { tgtWaitDecline.Store(0) })
	tgtStart(t, map[string]string{"GOMPT_PLUGINS": tgtWaitFailName, "GOMPT_INFO": "2"})
	big1, big2 := make([]float32, 4<<20), make([]float32, 4<<20)
	require.NoError(t, EnterData(0, Alloc(big1), Alloc(big2)))
	tgtRounds(t, "every round ran a blocker's kernel inline", func(round int) bool {
		k1, k2 := make([]float32, 1), make([]float32, 1)
		x, y := vecs(16)
		require.NoError(t, EnterData(0, To(x), To(y)))
		b1, b2 := newTgtBlocker(), newTgtBlocker()
		sig := newTgtSignals("launch saxpy")
		stop := tgtWatchStderr(t, sig.see)
		a1 := TargetNowait(b1.region(big1, DependOut(k1)))
		a2 := TargetNowait(b2.region(big2, DependOut(k2)))
		inline := false
		for i, b := range []*tgtBlocker{b1, b2} {
			select {
			case <-b.started:
			case <-[]*Task{a1, a2}[i].Done():
			case <-time.After(20 * time.Second):
				if !b.inline.Load() {
					require.FailNow(t, "a blocker's kernel did not start in 20s")
				}
			}
			inline = inline || b.inline.Load()
		}
		letGo := func() {
			for _, b := range []*tgtBlocker{b1, b2} {
				if !b.inline.Load() {
					close(b.release)
				}
			}
		}
		if inline {
			letGo()
			a1.Wait()
			a2.Wait()
			stop()
			require.NoError(t, ExitData(0, Delete(x), Delete(y)))
			return false
		}
		tgtWaitDecline.Store(2)
		d := TargetNowait(saxpyRegion(0, 16, 2, x, y, DependIn(k1), DependIn(k2)))
		sig.wait(t, "launch saxpy", "the dependent's launch", letGo)
		letGo()
		require.ErrorContains(t, a1.Wait(), "tgt_block fails", "round %d: the first failing kernel's construct", round)
		require.ErrorContains(t, a2.Wait(), "tgt_block fails", "round %d: the second failing kernel's construct", round)
		errD := d.Wait()
		stop()
		tgtWaitDecline.Store(0)
		require.ErrorIs(t, errD, ErrDependence, "round %d: the dependent of two failed kernels", round)
		assert.Equal(t, 1, strings.Count(errD.Error(), "depends on"), "round %d: the dependent of two failed kernels: %v", round, errD)
		require.NoError(t, ExitData(0, From(x), From(y)))
		tgtKeptY(t, y, "round %d: y[%d], copied back after the refused dependent", round)
		return true
	})
	require.NoError(t, ExitData(0, Delete(big1), Delete(big2)))
}
