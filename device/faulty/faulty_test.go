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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func hostDevice(t *testing.T) device.Device {
	t.Helper()
	p, ok := device.Lookup(host.Name)
	require.True(t, ok, "host plugin not registered")
	ds, err := p.Devices()
	require.NoError(t, err, "host devices")
	require.NotEmpty(t, ds, "host devices")
	return ds[0]
}

// TestConformance: with nothing armed, a wrapped device keeps the whole
// device contract (and so forwards MemInfo and Profiler faithfully).
func TestConformance(t *testing.T) {
	plan := new(faulty.Plan)
	d := faulty.Wrap(hostDevice(t), plan)
	devicetest.TestDevice(t, d, kernels.Saxpy, kernels.Fill)
	for _, op := range []faulty.Op{faulty.Alloc, faulty.CopyIn, faulty.Launch} {
		assert.NotZero(t, plan.Calls(op), "calls of %v the plan counted", op)
	}
}

func TestForwards(t *testing.T) {
	d := faulty.Wrap(hostDevice(t), nil)
	assert.Implements(t, (*device.MemInfo)(nil), d, "the wrapped host device")
	q, err := d.NewQueue()
	require.NoError(t, err)
	defer q.Release()
	assert.Implements(t, (*device.Profiler)(nil), q, "the wrapped host queue")
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
	require.NoError(t, err)
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
			require.NoError(t, errs[0], "call 1 of %v", op)
			require.NoError(t, errs[2], "call 3 of %v", op)
			var de *device.Error
			require.ErrorAs(t, errs[1], &de, "call 2 of %v", op)
			assert.Equal(t, op.String(), de.Op, "call 2's error: the operation")
			assert.Equal(t, code, de.Code, "call 2's error: the code")
			assert.Equal(t, "host:0", de.Device, "call 2's error: the device")
			assert.ErrorIs(t, errs[1], faulty.ErrInjected, "call 2 of %v", op)
			assert.Equal(t, 1, plan.Injected(op), "%v: failures injected", op)
			assert.False(t, plan.Armed(op), "%v: armed after firing", op)
		})
	}
	b, n := mi.MemInUse()
	assert.Equal(t, b0, b, "bytes in use")
	assert.Equal(t, n0, n, "allocations in use")
}

// doOp performs one call of op on d, cleaning up after itself.
func doOp(t *testing.T, d device.Device, f device.Function, op faulty.Op) error {
	t.Helper()
	switch op {
	case faulty.Alloc:
		b, err := d.Alloc(64)
		if err == nil {
			require.NoError(t, d.Free(b.Ptr))
		}
		return err
	case faulty.Free:
		b, err := d.Alloc(64)
		require.NoError(t, err)
		err = d.Free(b.Ptr)
		if err != nil {
			// The injected failure did not free it: free it for real.
			require.NoError(t, d.Free(b.Ptr), "free after an injected failure")
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
		require.NoError(t, err)
		defer d.Free(b.Ptr)
		q, err := d.NewQueue()
		require.NoError(t, err)
		require.NoError(t, q.CopyIn(b.Ptr, make([]byte, 64)))
		if op == faulty.Release {
			require.NoError(t, q.Sync())
			return q.Release()
		}
		err = q.Sync()
		q.Release()
		return err
	case faulty.Close:
		c, ok := d.(device.Closer)
		require.True(t, ok, "wrapped device implements device.Closer")
		return c.Close()
	}
	b, err := d.Alloc(256)
	require.NoError(t, err)
	defer d.Free(b.Ptr)
	q, err := d.NewQueue()
	require.NoError(t, err)
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
	require.NoError(t, err)
	defer q.Release()
	plan.Delay(20 * time.Millisecond)
	start := time.Now()
	_, err = q.Record()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond, "a delayed record's time")
	plan.Reset()
	assert.False(t, plan.Armed(faulty.Record), "armed after Reset")
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
	require.NoError(t, err)
	defer d.Free(b.Ptr)
	q, err := d.NewQueue()
	require.NoError(t, err)
	src := make([]byte, 1<<16)
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	back := make([]byte, len(src))
	plan.FailNth(faulty.Sync, 1, device.CodeUnknown)
	require.NoError(t, q.CopyIn(b.Ptr, src))
	require.NoError(t, q.CopyOut(back, b.Ptr))
	require.ErrorIs(t, q.Sync(), faulty.ErrInjected, "armed Sync")
	require.True(t, bytes.Equal(back, src), "a failed Sync returned before the queue's copies finished")
	require.NoError(t, q.Sync(), "the Sync after the failed one (the failure fires once)")
	_, n0 := mi.MemInUse()
	plan.FailNth(faulty.Release, 1, device.CodeUnknown)
	require.ErrorIs(t, q.Release(), faulty.ErrInjected, "armed Release")
	assert.Equal(t, 1, plan.Calls(faulty.Release), "releases counted")
	assert.Equal(t, 2, plan.Calls(faulty.Sync), "syncs counted")
	_, n := mi.MemInUse()
	assert.Equal(t, n0, n, "allocations after the failed Release")

	// A device with a Close of its own: its error is returned when no
	// failure is injected, the injected one when it is, and it is closed
	// either way.
	cd := &closing{Device: hostDevice(t), err: errors.New("the device's own close error")}
	w := faulty.Wrap(cd, plan)
	require.Equal(t, cd.err, w.(device.Closer).Close(), "Close with no failure injected: the device's own error")
	require.Equal(t, 1, cd.closed, "times closed")
	plan.FailNth(faulty.Close, 1, device.CodeUnknown)
	var de *device.Error
	err = w.(device.Closer).Close()
	require.ErrorAs(t, err, &de, "armed Close")
	assert.Equal(t, "close", de.Op, "armed Close's operation")
	assert.Equal(t, 2, cd.closed, "times closed: the injected failure still closes")
}

type closing struct {
	device.Device
	err    error
	closed int
}

func (c *closing) Close() error { c.closed++; return c.err }
