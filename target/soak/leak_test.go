package soak

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err, "child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestShutdownChild", "the child's output")
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
		require.NoError(t, saxpy(n, s.x, s.y, target.To(s.x), target.ToFrom(s.y)), "device %d", n)
		require.NoError(t, target.TargetNowait(target.Region{Device: target.Dev(n), Kernel: saxpyKernel(), Shape: target.N(fn),
			Args: saxpyArgs(s.x, s.z)}).Wait(), "device %d: nowait", n)
		p, err := target.AllocMem(4096, n)
		require.NoError(t, err)
		// Left allocated on purpose: Shutdown frees it.
		_ = p
		require.NoError(t, target.EnterData(n, target.To(s.x)))
		require.NoError(t, target.ExitData(n, target.Release(s.x)))
	}
	running := runtime.NumGoroutine()
	require.NoError(t, target.Shutdown(), "Shutdown")
	for n := range nd {
		if b, a, ok := memInUse(n); ok {
			assert.Zero(t, b, "device %d: bytes in use after Shutdown", n)
			assert.Zero(t, a, "device %d: allocations after Shutdown", n)
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
		pool := strings.Count(string(buf), "device/hostexec.(*Pool).work")
		assert.LessOrEqual(t, g, base, "goroutines 5s after Shutdown against before the runtime started (%d while running), %d of them host kernel pool workers:\n%s",
			running, pool, buf)
	} else {
		t.Logf("goroutines: %d before, %d while running, %d after Shutdown", base, running, g)
	}
}
