package target

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Shutdown under load: goroutines keep running constructs of every kind on
// every device while Shutdown is called. Every construct either completes
// with the right result or fails with the shut-down error, nothing else
// (no "queue already released", no lost free), and constructs after it
// are refused. Shutdown ends the process's runtime, so the test runs in a
// child process.
func TestShutdownUnderLoad(t *testing.T) {
	if os.Getenv("GOMPT_TEST_SHUTDOWN_CHILD") == "1" {
		shutdownUnderLoad()
		return
	}
	reportClass(t, "shutdown", "shutdown")
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestShutdownUnderLoad$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GOMPT_TEST_SHUTDOWN_CHILD=1", "GOMPT_PLUGINS=opencl,host", "GOMPT_HOST_DEVICES=2")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "round %d: child failed:\n%s", round, out)
		require.Contains(t, string(out), "shutdown-ok", "round %d: child", round)
		for _, l := range strings.Split(string(out), "\n") {
			var devs, done, refused int
			if _, err := fmt.Sscanf(l, "shutdown-ok: %d devices, %d constructs completed, %d refused", &devs, &done, &refused); err == nil {
				t.Logf("round %d: %s", round, l)
				countCheck(t, -99, done+refused) // every construct checked: right result or the shut-down error
			}
		}
	}
}

func shutdownUnderLoad() {
	fail := func(format string, a ...any) {
		fmt.Printf("FAIL: "+format+"\n", a...)
		os.Exit(1)
	}
	devs := NumDevices() + 1 // every offload device and the initial one
	var done, refused atomic.Int64
	var wg sync.WaitGroup
	check := func(g int, err error, y []float32, want float32) bool {
		if errors.Is(err, ErrShutdown) {
			refused.Add(1)
			return false
		}
		if err != nil {
			fail("goroutine %d: %v", g, err)
		}
		if y != nil && (y[0] != want || y[len(y)-1] != want) {
			fail("goroutine %d: y = %g...%g, want %g", g, y[0], y[len(y)-1], want)
		}
		done.Add(1)
		return true
	}
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dev := g % devs
			n := 4096 << (g % 4)
			x, y := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i] = 1
			}
			for k := 0; ; k++ {
				for i := range y {
					y[i] = 1
				}
				var err error
				switch k % 4 {
				case 0:
					err = Target(saxpyRegion(dev, n, 2, x, y, To(x), ToFrom(y)))
				case 1:
					err = TargetNowait(saxpyRegion(dev, n, 2, x, y, To(x), ToFrom(y))).Wait()
				case 2:
					if err = EnterDataNowait(dev, To(x), To(y)).Wait(); err == nil {
						err = Target(saxpyRegion(dev, n, 2, x, y))
						if xerr := ExitData(dev, Release(x), From(y)); err == nil {
							err = xerr
						}
					}
				case 3:
					var p DevicePtr
					if p, err = AllocMem(4*n, dev); err == nil {
						err = Memcpy(On(dev, p), Host(y), 4*n)
						if ferr := FreeMem(p, dev); err == nil {
							err = ferr
						}
						if !check(g, err, nil, 0) {
							return
						}
						continue
					}
				}
				if !check(g, err, y, 3) {
					return
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	if err := shutdownWithin(20 * time.Second); err != nil {
		fail("Shutdown: %v", err)
	}
	wg.Wait()
	if err := Target(saxpyRegion(0, 1, 1, []float32{1}, []float32{1})); !errors.Is(err, ErrShutdown) {
		fail("Target after Shutdown: %v, want the shut-down error", err)
	}
	if err := TargetNowait(saxpyRegion(0, 1, 1, []float32{1}, []float32{1})).Wait(); !errors.Is(err, ErrShutdown) {
		fail("TargetNowait after Shutdown: %v, want the shut-down error", err)
	}
	if _, err := AllocMem(8, 0); !errors.Is(err, ErrShutdown) {
		fail("AllocMem after Shutdown: %v, want the shut-down error", err)
	}
	fmt.Printf("shutdown-ok: %d devices, %d constructs completed, %d refused\n", devs, done.Load(), refused.Load())
}

// shutdownWithin is Shutdown for the tests' child processes, which exit
// with a failure when it has not returned after d: a Shutdown that never
// returns (as a program with nothing outstanding would find it) fails its
// test then, not at go test's timeout.
func shutdownWithin(d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- Shutdown() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		fmt.Printf("FAIL: Shutdown did not return within %v\n", d)
		os.Exit(3)
		return nil
	}
}
