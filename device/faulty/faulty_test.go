package faulty_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/devicetest"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/kernels"
)

func hostDevice(t *testing.T) device.Device {
	t.Helper()
	p, ok := device.Lookup(host.Name)
	if !ok {
		t.Fatal("host plugin not registered")
	}
	ds, err := p.Devices()
	if err != nil || len(ds) == 0 {
		t.Fatalf("host devices: %v", err)
	}
	return ds[0]
}

// TestConformance: with nothing armed, a wrapped device keeps the whole
// device contract (and so forwards MemInfo and Profiler faithfully).
func TestConformance(t *testing.T) {
	plan := new(faulty.Plan)
	d := faulty.Wrap(hostDevice(t), plan)
	devicetest.TestDevice(t, d, kernels.Saxpy, kernels.Fill)
	if plan.Calls(faulty.Alloc) == 0 || plan.Calls(faulty.CopyIn) == 0 || plan.Calls(faulty.Launch) == 0 {
		t.Errorf("the plan counted no calls: alloc %d copy in %d launch %d",
			plan.Calls(faulty.Alloc), plan.Calls(faulty.CopyIn), plan.Calls(faulty.Launch))
	}
}

func TestForwards(t *testing.T) {
	d := faulty.Wrap(hostDevice(t), nil)
	if _, ok := d.(device.MemInfo); !ok {
		t.Error("wrapped host device does not implement device.MemInfo")
	}
	q, err := d.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	if _, ok := q.(device.Profiler); !ok {
		t.Error("wrapped host queue does not implement device.Profiler")
	}
}

// TestFailNth arms each operation in turn for its 2nd call: the first call
// works, the second fails with a *device.Error naming the operation and
// device with the chosen code, the third works again, and nothing leaks.
func TestFailNth(t *testing.T) {
	plan := new(faulty.Plan)
	d := faulty.Wrap(hostDevice(t), plan)
	mi := d.(device.MemInfo)
	b0, n0 := mi.MemInUse()
	f, err := d.Load(kernels.Fill)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range faulty.Ops() {
		t.Run(op.String(), func(t *testing.T) {
			code := device.CodeOutOfResources
			if op%2 == 1 {
				code = device.CodeUnknown
			}
			plan.FailNth(op, 2, code)
			var errs []error
			for range 3 {
				errs = append(errs, doOp(t, d, f, op))
			}
			if errs[0] != nil || errs[2] != nil {
				t.Fatalf("calls 1 and 3 of %v: %v, %v; want no error", op, errs[0], errs[2])
			}
			var de *device.Error
			if !errors.As(errs[1], &de) || de.Op != op.String() || de.Code != code || de.Device != "host:0" ||
				!errors.Is(errs[1], faulty.ErrInjected) {
				t.Fatalf("call 2 of %v: %#v; want a *device.Error for %q on host:0 with code %v", op, errs[1], op, code)
			}
			if plan.Injected(op) != 1 || plan.Armed(op) {
				t.Fatalf("%v: injected %d, armed %v after firing", op, plan.Injected(op), plan.Armed(op))
			}
		})
	}
	if b, n := mi.MemInUse(); b != b0 || n != n0 {
		t.Errorf("memory in use %d bytes in %d allocations, was %d in %d", b, n, b0, n0)
	}
}

// doOp performs one call of op on d, cleaning up after itself.
func doOp(t *testing.T, d device.Device, f device.Function, op faulty.Op) error {
	t.Helper()
	switch op {
	case faulty.Alloc:
		b, err := d.Alloc(64)
		if err == nil {
			if err := d.Free(b.Ptr); err != nil {
				t.Fatal(err)
			}
		}
		return err
	case faulty.Free:
		b, err := d.Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		err = d.Free(b.Ptr)
		if err != nil {
			// The injected failure did not free it: free it for real.
			if err2 := d.Free(b.Ptr); err2 != nil {
				t.Fatalf("free after an injected failure: %v", err2)
			}
		}
		return err
	case faulty.NewQueue:
		q, err := d.NewQueue()
		if err == nil {
			q.Release()
		}
		return err
	}
	b, err := d.Alloc(256)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(b.Ptr)
	q, err := d.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	host := make([]byte, 128)
	switch op {
	case faulty.CopyIn:
		err = q.CopyIn(b.Ptr, host)
	case faulty.CopyOut:
		err = q.CopyOut(host, b.Ptr)
	case faulty.Copy:
		err = q.Copy(b.Ptr+128, b.Ptr, 128)
	case faulty.Launch:
		err = q.Launch(f, device.Shape{Size: [3]int{16, 1, 1}}, []device.Arg{{Bits: 16}, {Bits: 0}, {Ptr: b.Ptr}})
	case faulty.Record:
		var ev device.Event
		ev, err = q.Record()
		if err == nil {
			err = ev.Wait()
		}
	}
	if serr := q.Sync(); serr != nil && err == nil {
		err = serr
	}
	return err
}

func TestDelay(t *testing.T) {
	plan := new(faulty.Plan)
	d := faulty.Wrap(hostDevice(t), plan)
	q, err := d.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	plan.Delay(20 * time.Millisecond)
	start := time.Now()
	if _, err := q.Record(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Errorf("a delayed record took %v; want at least the 20ms delay", el)
	}
	plan.Reset()
	if plan.Armed(faulty.Record) {
		t.Error("armed after Reset")
	}
}
