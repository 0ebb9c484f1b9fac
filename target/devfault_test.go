package target

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/device/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Device faults the runtime must report rather than drop: a queue whose
// work fails only when it is waited for (Sync), a queue that cannot be
// released, a device that cannot be freed from or closed. The devices are
// the host plugin's, wrapped by device/faulty under a plugin name of the
// tests' own ("host-faulty": it sorts after "host", so the plugin lists
// other tests expect are unchanged).

const faultyPluginName = "host-faulty"

var faultPlan = new(faulty.Plan)

type faultyPlugin struct{}

func (faultyPlugin) Devices() ([]device.Device, error) {
	p, ok := device.Lookup(host.Name)
	if !ok {
		return nil, device.NoDevice(faultyPluginName, errors.New("host plugin not registered"))
	}
	ds, err := p.Devices()
	out := make([]device.Device, len(ds))
	for i, d := range ds {
		out[i] = faulty.Wrap(d, faultPlan)
	}
	return out, err
}

func init() { device.Register(faultyPluginName, faultyPlugin{}) }

// faultRuntime is a runtime on one host device wrapped by faultPlan, with
// nothing armed; the plan is disarmed again when the test ends.
func faultRuntime(t *testing.T) *runtimeState {
	t.Helper()
	faultPlan.Reset()
	t.Cleanup(faultPlan.Reset)
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": faultyPluginName})
	require.NotEmpty(t, r.devs, "no faulty host device: %s", r.why())
	return r
}

func isInjected(err error, op faulty.Op) bool {
	var de *device.Error
	return errors.Is(err, faulty.ErrInjected) && errors.As(err, &de) && de.Op == op.String()
}

// closeWithin closes d, failing the test if that does not return in time
// (a construct that was never given back makes close wait for ever).
func closeWithin(t *testing.T, d *dev) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- d.close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		require.FailNow(t, "closing the device did not return in 20s: a construct's queue was never given back")
		return nil
	}
}

// TestFailedQueueWaitIsReported: whichever wait for a queue fails — the
// one before a mapped array's device copy is freed, the one at a
// construct's end, the one of a memory routine — the user's call returns
// that failure, the data that did arrive is right, nothing is left mapped
// or allocated, and the device keeps working: the next call succeeds on a
// queue that does not carry the old failure.
func TestFailedQueueWaitIsReported(t *testing.T) {
	r := faultRuntime(t)
	noLeak(t, r)
	made, released := faultPlan.Calls(faulty.NewQueue), faultPlan.Calls(faulty.Release)
	calls := []struct {
		name string
		run  func() error
	}{
		{"Target", func() error {
			x, y := vecs(64)
			return Target(saxpyRegion(0, 64, 2, x, y, To(x), ToFrom(y)))
		}},
		{"TargetNowait", func() error {
			x, y := vecs(64)
			return TargetNowait(saxpyRegion(0, 64, 2, x, y, To(x), ToFrom(y))).Wait()
		}},
		{"Memcpy", func() error {
			p, err := AllocMem(256, 0)
			if err != nil {
				return fmt.Errorf("setup AllocMem: %w", err)
			}
			defer FreeMem(p, 0)
			src := make([]byte, 256)
			return Memcpy(On(0, p), Host(src), 256)
		}},
		{"Memset", func() error {
			p, err := AllocMem(256, 0)
			if err != nil {
				return fmt.Errorf("setup AllocMem: %w", err)
			}
			defer FreeMem(p, 0)
			return Memset(On(0, p), 7, 256)
		}},
	}
	for _, call := range calls {
		t.Run(call.name, func(t *testing.T) {
			fired := 0
			for n := 1; n < 20; n++ {
				before := faultPlan.Injected(faulty.Sync)
				faultPlan.FailNth(faulty.Sync, n, device.CodeUnknown)
				err := call.run()
				faultPlan.FailNth(faulty.Sync, 0, 0)
				if faultPlan.Injected(faulty.Sync) == before {
					require.NoError(t, err, "with sync %d never reached", n)
					break
				}
				fired++
				require.True(t, isInjected(err, faulty.Sync), "sync %d of %s failed: %s returned %v; want the sync failure", n, call.name, call.name, err)
				require.Empty(t, mappingEntries(0), "the present table after the failed sync %d", n)
				x, y := vecs(8)
				require.NoError(t, Target(saxpyRegion(0, 8, 3, x, y, To(x), ToFrom(y))), "the construct after the failed sync %d", n)
				require.Equal(t, float32(3*5+2*5), y[5], "the construct after the failed sync %d: y[5]", n)
			}
			require.NotZero(t, fired, "%s waited for no queue", call.name)
		})
	}
	// Every construct came back: the device closes, and closes cleanly,
	// and every queue it made, also those that failed, was released.
	require.NoError(t, closeWithin(t, r.devs[0]), "close after the failures")
	assert.Equal(t, faultPlan.Calls(faulty.NewQueue)-made, faultPlan.Calls(faulty.Release)-released, "queues the device released against those it made")
}

// TestFirstFailureIsKept: a construct whose kernel launch failed, and whose
// queue then also fails a wait, returns the launch failure (the cause),
// not only the later one.
func TestFirstFailureIsKept(t *testing.T) {
	r := faultRuntime(t)
	noLeak(t, r)
	fired := 0
	for n := 1; n < 20; n++ {
		before := faultPlan.Injected(faulty.Sync)
		faultPlan.FailNth(faulty.Launch, 1, device.CodeUnknown)
		faultPlan.FailNth(faulty.Sync, n, device.CodeOutOfResources)
		x, y := vecs(32)
		err := Target(saxpyRegion(0, 32, 2, x, y, To(x), ToFrom(y)))
		faultPlan.Reset()
		if faultPlan.Injected(faulty.Sync) == before {
			break
		}
		fired++
		assert.True(t, isInjectedIn(err, faulty.Launch), "launch failed, then sync %d: Target returned %v; want the launch failure among its errors", n, err)
		require.Empty(t, mappingEntries(0), "the present table after the failed construct")
	}
	require.NotZero(t, fired, "no wait for a queue after a failed launch")
}

// TestDeviceCloseReportsEveryFailure: closing a device releases its queues,
// frees what the program left allocated and closes the device; each step's
// failure is reported, none hides another, and the steps after a failure
// still run (the memory is freed).
func TestDeviceCloseReportsEveryFailure(t *testing.T) {
	r := faultRuntime(t)
	x, y := vecs(16)
	require.NoError(t, Target(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y))))
	b0, n0 := memInUse(t, r)
	var ps []DevicePtr
	for range 2 {
		p, err := AllocMem(128, 0)
		require.NoError(t, err)
		ps = append(ps, p)
	}
	faultPlan.FailNth(faulty.Release, 1, device.CodeUnknown)
	faultPlan.FailNth(faulty.Free, 1, device.CodeOutOfResources)
	faultPlan.FailNth(faulty.Close, 1, device.CodeUnknown)
	closes := faultPlan.Injected(faulty.Close) // counts stay from earlier runs (-count)
	err := closeWithin(t, r.devs[0])
	for _, op := range []faulty.Op{faulty.Release, faulty.Free, faulty.Close} {
		found := false
		for _, e := range joined(err) {
			found = found || isInjected(e, op)
		}
		assert.True(t, found, "close: %v; want the injected %s failure among its errors", err, op)
	}
	assert.Equal(t, 1, faultPlan.Injected(faulty.Close)-closes, "closes of the device with the close failure armed")
	// The free that did not fail freed its block; the failed one is the
	// device's to account for (faulty frees nothing when it fails).
	b, n := memInUse(t, r)
	assert.Equal(t, n0+1, n, "allocations in use after close (the unfailed free done)")
	assert.Equal(t, b0+128, b, "bytes in use after close (the unfailed free done)")
	// The block whose free failed: free it on the device itself.
	for _, p := range ps {
		r.devs[0].d.Free(p)
	}
}

// joined lists the errors of an errors.Join tree, leaves first.
func joined(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, joined(e)...)
		}
	}
	return out
}

// TestFreeMemReportsDeviceFailure: FreeMem whose device free fails
// returns that failure, naming the operation.
func TestFreeMemReportsDeviceFailure(t *testing.T) {
	r := faultRuntime(t)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	faultPlan.FailNth(faulty.Free, 1, device.CodeInvalidArgument)
	err = FreeMem(p, 0)
	require.True(t, isInjected(err, faulty.Free), "FreeMem whose device free failed: %v; want the free failure", err)
	r.devs[0].d.Free(p) // what the failed free left
}

// TestShutdownReportsCloseFailure: Shutdown returns the failure of a
// device that cannot be closed (in a child process: Shutdown ends the
// runtime for good).
func TestShutdownReportsCloseFailure(t *testing.T) {
	if os.Getenv("GOMPT_TEST_FAULT_SHUTDOWN") == "1" {
		x, y := vecs(16)
		if err := Target(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y))); err != nil {
			fmt.Println("TARGET-ERROR:", err)
		}
		faultPlan.FailNth(faulty.Close, 1, device.CodeUnknown)
		faultPlan.FailNth(faulty.Release, 1, device.CodeUnknown)
		err := shutdownWithin(20 * time.Second)
		fmt.Printf("SHUTDOWN: close %v release %v: %v\n", isInjectedIn(err, faulty.Close), isInjectedIn(err, faulty.Release), err)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestShutdownReportsCloseFailure$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOMPT_TEST_FAULT_SHUTDOWN=1", "GOMPT_PLUGINS="+faultyPluginName, "GOMPT_HOST_DEVICES=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child:\n%s", out)
	assert.Contains(t, string(out), "SHUTDOWN: close true release true: ", "child's output: want Shutdown to return the device's close and release failures")
	assert.NotContains(t, string(out), "TARGET-ERROR", "child's output")
}

func isInjectedIn(err error, op faulty.Op) bool {
	for _, e := range joined(err) {
		if isInjected(e, op) {
			return true
		}
	}
	return false
}
