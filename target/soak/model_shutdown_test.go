package soak

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModel's last part: Shutdown from a Go task and from two goroutines
// at once, while goroutines run random constructs on every device (nowait
// ones, chains of tasks joined by depend clauses, data regions, enter and
// exit data, Go tasks). Shutdown ends the process's runtime, so this runs
// in a child process (modelShutdownEnv).
//
// What it holds the runtime to:
//   - every Shutdown call returns nil (the first call's result), and only
//     once the shutdown is complete: the tool finalized, every device's
//     memory back to zero, and constructs refused with target.ErrShutdown;
//   - every construct either completes with the right result or fails with
//     target.ErrShutdown (or target.ErrDependence, behind one that did) and
//     changes nothing the program sees: a chain of dependent constructs
//     completes a prefix of its steps, and its slice holds exactly those;
//   - nothing hangs: the child ends itself after a minute, the parent kills
//     it after two.
const modelShutdownEnv = "GOMPT_MODEL_SHUTDOWN_CHILD"

var modelShutdownTool struct {
	finalized atomic.Bool
}

func init() {
	if os.Getenv(modelShutdownEnv) == "" {
		return
	}
	ompt.RegisterTool("model-shutdown", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int { return 1 },
			Finalize: func(*ompt.Data) { modelShutdownTool.finalized.Store(true) }}
	})
}

// modelShutdown runs TestModelShutdownChild in a child process.
func modelShutdown(t *testing.T, cfg modelConfig) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestModelShutdownChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), modelShutdownEnv+"=1", childEnv+"=1", "GOMPT_MODEL_SEED="+strconv.FormatUint(cfg.seed, 10))
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the shutdown child hung (killed after 2 minutes):\n%s", out)
	}
	require.NoError(t, err, "the shutdown child failed (GOMPT_MODEL_SEED=%d reruns it):\n%s", cfg.seed, out)
	require.Contains(t, string(out), "--- PASS: TestModelShutdownChild", "the child's output")
	t.Logf("child:\n%s", out)
}

// chainStep is one step of a goroutine's construct: its task (nil for a
// synchronous construct: err is then its error), and what the slice holds
// once it and the steps before it are done.
type chainStep struct {
	t    *target.Task
	err  error
	want []float32
}

func TestModelShutdownChild(t *testing.T) {
	if os.Getenv(modelShutdownEnv) == "" {
		t.Skip("run by TestModel in a child process")
	}
	watchdog := time.AfterFunc(time.Minute, func() {
		// Every goroutine's stack, so that a hang says where it is.
		fmt.Println("FAIL: the shutdown child did not end within a minute; its goroutines:")
		_ = pprof.Lookup("goroutine").WriteTo(os.Stdout, 2)
		os.Exit(3)
	})
	defer watchdog.Stop()
	cfg := readModelConfig(t)
	devs := []int{target.InitialDeviceNum()}
	for n := range target.NumDevices() {
		devs = append(devs, n)
	}
	g := cfg.goroutines
	var (
		wg      sync.WaitGroup
		ops     = make([]atomic.Int64, g)
		stop    atomic.Bool
		mu      sync.Mutex
		refused int
		done    int
	)
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.seed, uint64(w)+100))
			for !stop.Load() {
				r, d := modelShutdownOp(t, rng, devs[rng.IntN(len(devs))])
				ops[w].Add(1)
				mu.Lock()
				refused += r
				done += d
				mu.Unlock()
			}
		}()
	}
	// Shutdown once every goroutine has run a few constructs: from a Go
	// task and from two goroutines, all at once.
	rng := rand.New(rand.NewPCG(cfg.seed, 99))
	least := int64(2 + rng.IntN(6))
	for w := range g {
		for ops[w].Load() < least {
			time.Sleep(100 * time.Microsecond)
		}
	}
	go1 := make(chan struct{})
	results := make(chan error, 3)
	check := func(who string, err error) {
		// Complete when it returns: tools finalized, memory freed,
		// constructs refused.
		assert.NoError(t, err, "Shutdown from %s", who)
		assert.True(t, modelShutdownTool.finalized.Load(), "Shutdown from %s returned before the tool was finalized", who)
		for n := range target.NumDevices() {
			if b, a, ok := memInUse(n); ok {
				assert.Zero(t, b, "Shutdown from %s returned with device %d's memory in use (%d allocations)", who, n, a)
			}
		}
		x, y := make([]float32, 4), make([]float32, 4)
		assert.ErrorIs(t, target.Target(target.Region{Kernel: kernels.Saxpy, Shape: target.N(4),
			Args: []target.Arg{target.Int(4), target.Float32(1), target.Slice(x), target.Slice(y)}}), target.ErrShutdown,
			"a construct after Shutdown from %s returned", who)
	}
	task := target.Go(func() error { <-go1; err := target.Shutdown(); check("a Go task", err); return err })
	for k := range 2 {
		go func() { <-go1; err := target.Shutdown(); check(fmt.Sprintf("goroutine %d", k), err); results <- err }()
	}
	close(go1)
	require.NoError(t, task.Wait(), "the Go task calling Shutdown")
	for range 2 {
		<-results
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d goroutines on %d devices: %d constructs completed, %d refused by Shutdown", g, len(devs), done, refused)
	assert.Positive(t, done, "constructs completed before Shutdown")
}

// modelShutdownOp runs one random construct (or a chain of them) on dev
// and checks that it completed with the right result or was refused with
// the shut-down error and changed nothing; it returns how many steps were
// refused and how many completed.
func modelShutdownOp(t *testing.T, rng *rand.Rand, dev int) (refused, done int) {
	n := 1 + rng.IntN(4096)
	x, y := make([]float32, n), make([]float32, n)
	randomInts(rng, x)
	randomInts(rng, y)
	y0 := slices.Clone(y)
	saxpyWant := func(a float32, y []float32) []float32 {
		w := slices.Clone(y)
		for i := range w {
			w[i] = a*x[i] + w[i]
		}
		return w
	}
	region := func(a float32, maps ...target.Map) target.Region {
		return target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n), Maps: maps,
			Args: []target.Arg{target.Int(n), target.Float32(a), target.Slice(x), target.Slice(y)}}
	}
	var steps []chainStep
	what := ""
	switch rng.IntN(5) {
	case 0:
		what = "target"
		steps = append(steps, chainStep{err: target.Target(region(2, target.To(x), target.ToFrom(y))), want: saxpyWant(2, y0)})
	case 1:
		// A chain: target nowait, a Go task on the host, target nowait,
		// each depending on the one before.
		what = "target nowait, Go task, target nowait (depend)"
		w1 := saxpyWant(1, y0)
		w2 := slices.Clone(w1)
		for i := range w2 {
			w2[i]++
		}
		w3 := saxpyWant(-1, w2)
		steps = append(steps,
			chainStep{t: target.TargetNowait(region(1, target.To(x), target.ToFrom(y), target.DependOut(y))), want: w1},
			chainStep{t: target.Go(func() error {
				for i := range y {
					y[i]++
				}
				return nil
			}, target.DependInOut(y)), want: w2},
			chainStep{t: target.TargetNowait(region(-1, target.To(x), target.ToFrom(y), target.DependInOut(y))), want: w3})
	case 2:
		what = "data region with a target inside"
		steps = append(steps, chainStep{err: target.Data(dev, []target.Map{target.To(x), target.ToFrom(y)}, func() error {
			return target.Target(region(3))
		}), want: saxpyWant(3, y0)})
	case 3:
		// Enter data, target, exit data from: on an offload device y
		// comes back only with the exit; a refused step refuses the
		// ones after it.
		// On the initial device, and where maps use the program's
		// memory (GOMPT_ZERO_COPY=on), the target runs on y itself, so y
		// holds its result even when the exit is then refused.
		what = "enter data, target, exit data"
		wantT := y0
		if dev == target.InitialDeviceNum() || zeroCopy(dev) {
			wantT = saxpyWant(2, y0)
		}
		err := target.EnterData(dev, target.To(x), target.To(y))
		steps = append(steps, chainStep{err: err, want: y0})
		if err == nil {
			steps = append(steps,
				chainStep{err: target.Target(region(2)), want: wantT},
				chainStep{err: target.ExitData(dev, target.Release(x), target.From(y)), want: saxpyWant(2, y0)})
		}
	default:
		what = "target nowait"
		steps = append(steps, chainStep{t: target.TargetNowait(region(2, target.To(x), target.ToFrom(y))), want: saxpyWant(2, y0)})
	}
	// A prefix of the steps completes; the rest are refused.
	have := y0
	failed := false
	for i, s := range steps {
		err := s.err
		if s.t != nil {
			err = s.t.Wait()
		}
		switch {
		case err == nil && !failed:
			have = s.want
			done++
		case err == nil:
			assert.Fail(t, "a step completed after one before it failed", "%s on device %d: step %d", what, dev, i)
		case errors.Is(err, target.ErrShutdown) || failed && errors.Is(err, target.ErrDependence):
			failed = true
			refused++
		default:
			assert.NoError(t, err, "%s on device %d: step %d: want success or the shut-down error", what, dev, i)
			failed = true
		}
	}
	if i, bad := diff(y, have); bad > 0 {
		assert.Fail(t, "wrong result", "%s on device %d (%d of %d steps completed): y[%d] = %v, want %v (%d of %d differ)",
			what, dev, done, len(steps), i, y[i], have[i], bad, n)
	}
	return refused, done
}

// zeroCopy reports whether offload device dev's maps use the program's
// memory in place (GOMPT_ZERO_COPY=on).
func zeroCopy(dev int) bool {
	for _, d := range target.Devices() {
		if d.Num == dev {
			return d.ZeroCopy
		}
	}
	return false
}
