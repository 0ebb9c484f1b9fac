package soak

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gompt/gompt/target"
)

// childEnv marks the child process of TestShutdownLeaks.
const childEnv = "GOMPT_SOAK_CHILD"

// TestShutdownLeaks runs a workload and target.Shutdown in a child process
// (Shutdown is final for a process) and checks there that the goroutine
// count returns to its value before the runtime started and that every
// device's memory in use is back to zero.
func TestShutdownLeaks(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in the child")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestShutdownChild$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestShutdownChild")) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("child:\n%s", out)
}

func TestShutdownChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestShutdownLeaks in a child process")
	}
	base := runtime.NumGoroutine()
	nd := target.NumDevices()
	for n := range nd {
		s := newState()
		if err := saxpy(n, s.x, s.y, target.To(s.x), target.ToFrom(s.y)); err != nil {
			t.Fatalf("device %d: %v", n, err)
		}
		if err := target.TargetNowait(target.Region{Device: target.Dev(n), Kernel: saxpyKernel(), Shape: target.N(fn),
			Args: saxpyArgs(s.x, s.z)}).Wait(); err != nil {
			t.Fatalf("device %d: nowait: %v", n, err)
		}
		p, err := target.AllocMem(4096, n)
		if err != nil {
			t.Fatal(err)
		}
		// Left allocated on purpose: Shutdown frees it.
		_ = p
		if err := target.EnterData(n, target.To(s.x)); err != nil {
			t.Fatal(err)
		}
		if err := target.ExitData(n, target.Release(s.x)); err != nil {
			t.Fatal(err)
		}
	}
	running := runtime.NumGoroutine()
	if err := target.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for n := range nd {
		if b, a, ok := memInUse(n); ok && (b != 0 || a != 0) {
			t.Errorf("device %d: %d bytes in %d allocations after Shutdown", n, b, a)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		runtime.GC()
	}
	if g := runtime.NumGoroutine(); g > base {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		pool := strings.Count(string(buf), "internal/hostexec.(*Pool).work")
		msg := fmt.Sprintf("%d goroutines 5s after Shutdown, %d before the runtime started (%d while running), %d of them host kernel pool workers:\n%s",
			g, base, running, pool, buf)
		t.Error(msg)
	} else {
		t.Logf("goroutines: %d before, %d while running, %d after Shutdown", base, running, g)
	}
}
