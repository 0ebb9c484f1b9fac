package target

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/device/host"
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
	if len(r.devs) == 0 {
		t.Fatalf("no faulty host device: %s", r.why())
	}
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
		t.Fatal("closing the device did not return in 20s: a construct's queue was never given back")
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
					if err != nil {
						t.Fatalf("with sync %d never reached: %v", n, err)
					}
					break
				}
				fired++
				if !isInjected(err, faulty.Sync) {
					t.Fatalf("sync %d of %s failed: %s returned %v; want the sync failure", n, call.name, call.name, err)
				}
				if es := mappingEntries(0); len(es) != 0 {
					t.Fatalf("after the failed sync %d the present table holds %v", n, es)
				}
				x, y := vecs(8)
				if err := Target(saxpyRegion(0, 8, 3, x, y, To(x), ToFrom(y))); err != nil {
					t.Fatalf("the construct after the failed sync %d: %v", n, err)
				}
				if y[5] != 3*5+2*5 {
					t.Fatalf("the construct after the failed sync %d computed y[5] = %v, want 25", n, y[5])
				}
			}
			if fired == 0 {
				t.Fatalf("%s waited for no queue", call.name)
			}
		})
	}
	// Every construct came back: the device closes, and closes cleanly,
	// and every queue it made, also those that failed, was released.
	if err := closeWithin(t, r.devs[0]); err != nil {
		t.Fatalf("close after the failures: %v", err)
	}
	if m, rel := faultPlan.Calls(faulty.NewQueue)-made, faultPlan.Calls(faulty.Release)-released; m != rel {
		t.Errorf("the device made %d queues and released %d", m, rel)
	}
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
		if !isInjectedIn(err, faulty.Launch) {
			t.Errorf("launch failed, then sync %d: Target returned %v; want the launch failure among its errors", n, err)
		}
		if es := mappingEntries(0); len(es) != 0 {
			t.Fatalf("after the failed construct the present table holds %v", es)
		}
	}
	if fired == 0 {
		t.Fatal("no wait for a queue after a failed launch")
	}
}

// TestDeviceCloseReportsEveryFailure: closing a device releases its queues,
// frees what the program left allocated and closes the device; each step's
// failure is reported, none hides another, and the steps after a failure
// still run (the memory is freed).
func TestDeviceCloseReportsEveryFailure(t *testing.T) {
	r := faultRuntime(t)
	x, y := vecs(16)
	if err := Target(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y))); err != nil {
		t.Fatal(err)
	}
	b0, n0 := memInUse(t, r)
	var ps []DevicePtr
	for range 2 {
		p, err := AllocMem(128, 0)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	faultPlan.FailNth(faulty.Release, 1, device.CodeUnknown)
	faultPlan.FailNth(faulty.Free, 1, device.CodeOutOfResources)
	faultPlan.FailNth(faulty.Close, 1, device.CodeUnknown)
	err := closeWithin(t, r.devs[0])
	for _, op := range []faulty.Op{faulty.Release, faulty.Free, faulty.Close} {
		found := false
		for _, e := range joined(err) {
			found = found || isInjected(e, op)
		}
		if !found {
			t.Errorf("close: %v; want the injected %s failure among its errors", err, op)
		}
	}
	if faultPlan.Injected(faulty.Close) != 1 {
		t.Errorf("the device was closed %d times with the close failure armed; want once", faultPlan.Injected(faulty.Close))
	}
	// The free that did not fail freed its block; the failed one is the
	// device's to account for (faulty frees nothing when it fails).
	if b, n := memInUse(t, r); n != n0+1 || b != b0+128 {
		t.Errorf("after close, device memory in use is %d bytes in %d allocations; want %d in %d (the unfailed free done)", b, n, b0+128, n0+1)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	faultPlan.FailNth(faulty.Free, 1, device.CodeInvalidArgument)
	if err := FreeMem(p, 0); !isInjected(err, faulty.Free) {
		t.Fatalf("FreeMem whose device free failed: %v; want the free failure", err)
	}
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
		err := Shutdown()
		fmt.Printf("SHUTDOWN: close %v release %v: %v\n", isInjectedIn(err, faulty.Close), isInjectedIn(err, faulty.Release), err)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestShutdownReportsCloseFailure$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOMPT_TEST_FAULT_SHUTDOWN=1", "GOMPT_PLUGINS="+faultyPluginName, "GOMPT_HOST_DEVICES=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "SHUTDOWN: close true release true: ") || strings.Contains(string(out), "TARGET-ERROR") {
		t.Fatalf("child's output:\n%s\nwant Shutdown to return the device's close and release failures", out)
	}
}

func isInjectedIn(err error, op faulty.Op) bool {
	for _, e := range joined(err) {
		if isInjected(e, op) {
			return true
		}
	}
	return false
}
