package faulty_test

import (
	"bytes"
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
	case faulty.Sync, faulty.Release:
		// One call of op (TestFinishingFailuresStillFinish checks what
		// a failed one did).
		b, err := d.Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Free(b.Ptr)
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		if err := q.CopyIn(b.Ptr, make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
		if op == faulty.Release {
			if err := q.Sync(); err != nil {
				t.Fatal(err)
			}
			return q.Release()
		}
		err = q.Sync()
		q.Release()
		return err
	case faulty.Close:
		c, ok := d.(device.Closer)
		if !ok {
			t.Fatal("wrapped device does not implement device.Closer")
		}
		return c.Close()
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

// TestFinishingFailuresStillFinish: a failed Sync has still finished the
// queue's work, a failed Release has still released the queue, and a failed
// Close reports the device's own Close error too, so a test of a failing
// runtime shutdown leaks nothing and sees the device's real result.
func TestFinishingFailuresStillFinish(t *testing.T) {
	plan := new(faulty.Plan)
	d := faulty.Wrap(hostDevice(t), plan)
	mi := d.(device.MemInfo)
	b, err := d.Alloc(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(b.Ptr)
	q, err := d.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 1<<16)
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	back := make([]byte, len(src))
	plan.FailNth(faulty.Sync, 1, device.CodeUnknown)
	if err := q.CopyIn(b.Ptr, src); err != nil {
		t.Fatal(err)
	}
	if err := q.CopyOut(back, b.Ptr); err != nil {
		t.Fatal(err)
	}
	if err := q.Sync(); !errors.Is(err, faulty.ErrInjected) {
		t.Fatalf("armed Sync: %v; want the injected failure", err)
	}
	if !bytes.Equal(back, src) {
		t.Fatal("a failed Sync returned before the queue's copies finished")
	}
	if err := q.Sync(); err != nil {
		t.Fatalf("the Sync after the failed one: %v; want none (the failure fires once)", err)
	}
	_, n0 := mi.MemInUse()
	plan.FailNth(faulty.Release, 1, device.CodeUnknown)
	if err := q.Release(); !errors.Is(err, faulty.ErrInjected) {
		t.Fatalf("armed Release: %v; want the injected failure", err)
	}
	if plan.Calls(faulty.Release) != 1 || plan.Calls(faulty.Sync) != 2 {
		t.Errorf("counted %d releases and %d syncs; want 1 and 2", plan.Calls(faulty.Release), plan.Calls(faulty.Sync))
	}
	if _, n := mi.MemInUse(); n != n0 {
		t.Errorf("allocations %d after the failed Release, %d before", n, n0)
	}

	// A device with a Close of its own: its error is returned when no
	// failure is injected, the injected one when it is, and it is closed
	// either way.
	cd := &closing{Device: hostDevice(t), err: errors.New("the device's own close error")}
	w := faulty.Wrap(cd, plan)
	if err := w.(device.Closer).Close(); err != cd.err || cd.closed != 1 {
		t.Fatalf("Close: %v, device closed %d times; want its own error, closed once", err, cd.closed)
	}
	plan.FailNth(faulty.Close, 1, device.CodeUnknown)
	var de *device.Error
	if err := w.(device.Closer).Close(); !errors.As(err, &de) || de.Op != "close" || cd.closed != 2 {
		t.Fatalf("armed Close: %v, device closed %d times; want the injected close failure, closed again", err, cd.closed)
	}
}

type closing struct {
	device.Device
	err    error
	closed int
}

func (c *closing) Close() error { c.closed++; return c.err }
