//go:build cgo && linux

package cuda

// Tests of queue.WaitEvent (device.Waiter, cuStreamWaitEvent) against the
// fake driver (see fault_test.go), whose cuStreamWaitEvent really holds the
// waiting stream until the event's record has run, in both of its modes:
// lazily (a stream runs when something waits for it) and with
// FAKECUDA_ASYNC (a worker per stream runs it at once).

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
	"github.com/gompt/gompt/device/devicetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fillPTX's kernel writes a byte over a range (fill(p, n, v)); on the fake
// driver the marker makes the kernels of the module do so when their
// stream runs them.
const fillPTX = `.version 6.3
.target sm_75
.address_size 64
// FAKECUDA_FILL
.visible .entry gompt_test_fill(.param .u64 p, .param .u64 n, .param .u32 v)
{
	.reg .pred %p<2>;
	.reg .b32 %r<2>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [p];
	ld.param.u64 %rd2, [n];
	ld.param.u32 %r1, [v];
	mov.u64 %rd3, 0;
LOOP:
	setp.ge.u64 %p1, %rd3, %rd2;
	@%p1 bra DONE;
	add.u64 %rd4, %rd1, %rd3;
	st.global.u8 [%rd4], %r1;
	add.u64 %rd3, %rd3, 1;
	bra LOOP;
DONE:
	ret;
}
`

var fillParams = []device.Param{
	{Name: "p", Kind: device.ParamBuffer},
	{Name: "n", Kind: device.ParamInt64},
	{Name: "v", Kind: device.ParamUint32},
}

// fillKernel fills a range with a byte; fillGateKernel does too once the
// fake's gate opens (see gateKernel).
var (
	fillKernel = &device.Kernel{Name: "gompt_test_fill", Params: fillParams,
		Images: []device.Image{{Kind: ImagePTX, Source: fillPTX}}}
	fillGateKernel = &device.Kernel{Name: "gompt_test_fill", Params: fillParams,
		Images: []device.Image{{Kind: ImagePTX, Source: strings.Replace(fillPTX, "// FAKECUDA_FILL", "// FAKECUDA_FILL FAKECUDA_GATE", 1)}}}
)

func fillArgs(p device.DevicePtr, n int, v byte) []device.Arg {
	return []device.Arg{{Ptr: p}, {Bits: uint64(n)}, {Bits: uint64(v)}}
}

var one = device.Shape{Size: [3]int{1, 1, 1}}

func waiter(t *testing.T, q device.Queue) device.Waiter {
	t.Helper()
	w, ok := q.(device.Waiter)
	require.True(t, ok, "the CUDA queue (%T) does not implement device.Waiter", q)
	return w
}

// TestFaultWaitEvent: a kernel on one queue, an event recorded after it, a
// second queue that waits for the event on the device and then copies
// what the kernel wrote: the copy sees the kernel's result, and neither
// WaitEvent nor the copy waits for the kernel on the host. Without the
// wait, the fake runs the second queue's copy before the kernel (checked
// first, so the test can tell).
func TestFaultWaitEvent(t *testing.T) {
	for _, async := range []bool{true, false} {
		name := "lazy"
		if async {
			name = "async"
		}
		t.Run(name, func(t *testing.T) {
			f := fakeDriverIn(t)
			k := fillKernel
			if async {
				t.Setenv("FAKECUDA_ASYNC", "1")
				f.closeGate(t)
				k = fillGateKernel
			}
			d := f.open(t)[0]
			fn, err := d.Load(k)
			must(t, "Load", err)
			const n = 4096
			a, err := d.Alloc(n)
			must(t, "Alloc", err)
			q1, q2 := twoQueues(t, d)
			w := waiter(t, q2)
			must(t, "CopyIn", q1.CopyIn(a.Ptr, fill(n, 0)))
			must(t, "Sync", q1.Sync())

			// Without a wait, q2 copies before q1's kernel has run.
			must(t, "Launch", q1.Launch(fn, one, fillArgs(a.Ptr, n, 0x11)))
			got := fill(n, 0xee)
			must(t, "CopyOut", q2.CopyOut(got, a.Ptr))
			must(t, "Sync", q2.Sync())
			require.True(t, bytes.Equal(got, fill(n, 0)), "the fake ran the kernel of one stream before a copy of another that did not wait for it")

			must(t, "Launch", q1.Launch(fn, one, fillArgs(a.Ptr, n, 0x5a)))
			ev, err := q1.Record()
			must(t, "Record", err)
			waits := f.read().StreamWaits
			done := make(chan error, 1)
			go func() { // another goroutine, as a dependent construct's
				ok, err := w.WaitEvent(ev)
				if err == nil && !ok {
					err = errors.New("WaitEvent declined an event of another queue of its device")
				}
				if err == nil {
					err = q2.CopyOut(got, a.Ptr)
				}
				done <- err
			}()
			select {
			case err := <-done:
				must(t, "WaitEvent and CopyOut", err)
			case <-time.After(20 * time.Second):
				f.openGate()
				<-done
				require.Fail(t, "WaitEvent or the copy after it waited on the host for the kernel before the event")
			}
			assert.EqualValues(t, 1, f.read().StreamWaits-waits, "cuStreamWaitEvent calls, want 1")
			f.openGate()
			must(t, "Sync", q2.Sync())
			if i := firstDiff(got, fill(n, 0x5a)); i >= 0 {
				require.Failf(t, "the copy after WaitEvent did not see the kernel's result", "from byte %d (%#x)", i, got[i])
			}
			must(t, "Wait", ev.Wait())
			must(t, "Sync", q1.Sync())
			must(t, "Release", q1.Release())
			must(t, "Release", q2.Release())
			must(t, "Free", d.Free(a.Ptr))
		})
	}
}

// otherEvent is an event of no plugin.
type otherEvent struct{}

func (otherEvent) Wait() error          { return nil }
func (otherEvent) Time() (int64, error) { return 0, nil }

// TestFaultWaitEventDecline: WaitEvent reports false, calling no driver
// function, for what it cannot wait for on the device (another device's
// event, another plugin's, one already waited for), so that the caller
// waits itself; it reports true for its own queue's event without a
// call, and fails on a released queue.
func TestFaultWaitEventDecline(t *testing.T) {
	f := fakeDriverIn(t)
	t.Setenv("FAKECUDA_DEVICES", "2")
	devs := f.open(t)
	a, err := devs[0].Alloc(4096)
	must(t, "Alloc", err)
	b, err := devs[1].Alloc(4096)
	must(t, "Alloc", err)
	q0, err := devs[0].NewQueue()
	must(t, "NewQueue", err)
	q0b, err := devs[0].NewQueue()
	must(t, "NewQueue", err)
	q1, err := devs[1].NewQueue()
	must(t, "NewQueue", err)
	w := waiter(t, q0)
	waits := f.read().StreamWaits

	must(t, "CopyIn", q1.CopyIn(b.Ptr, pattern(4096, 1)))
	other, err := q1.Record()
	must(t, "Record", err)
	if ok, err := w.WaitEvent(other); assert.False(t, ok, "WaitEvent(an event of another device) = %v, %v; want false, nil", ok, err) {
		assert.NoError(t, err, "WaitEvent(an event of another device) = %v, %v; want false, nil", ok, err)
	}
	if ok, err := w.WaitEvent(otherEvent{}); assert.False(t, ok, "WaitEvent(an event of no plugin) = %v, %v; want false, nil", ok, err) {
		assert.NoError(t, err, "WaitEvent(an event of no plugin) = %v, %v; want false, nil", ok, err)
	}
	if ok, err := w.WaitEvent(nil); assert.False(t, ok, "WaitEvent(nil) = %v, %v; want false, nil", ok, err) {
		assert.NoError(t, err, "WaitEvent(nil) = %v, %v; want false, nil", ok, err)
	}
	must(t, "CopyIn", q0.CopyIn(a.Ptr, pattern(4096, 2)))
	own, err := q0.Record()
	must(t, "Record", err)
	if ok, err := w.WaitEvent(own); assert.True(t, ok, "WaitEvent(an event of its own queue) = %v, %v; want true, nil", ok, err) {
		assert.NoError(t, err, "WaitEvent(an event of its own queue) = %v, %v; want true, nil", ok, err)
	}
	must(t, "CopyIn", q0b.CopyIn(a.Ptr, pattern(4096, 3)))
	waited, err := q0b.Record()
	must(t, "Record", err)
	must(t, "Wait", waited.Wait())
	if ok, err := w.WaitEvent(waited); assert.False(t, ok, "WaitEvent(an event already waited for) = %v, %v; want false, nil", ok, err) {
		assert.NoError(t, err, "WaitEvent(an event already waited for) = %v, %v; want false, nil", ok, err)
	}
	assert.Zero(t, f.read().StreamWaits-waits, "cuStreamWaitEvent calls for events WaitEvent declined or had no need to wait for")
	must(t, "Sync", q1.Sync())
	must(t, "Sync", q0.Sync())
	must(t, "Release", q0.Release())
	_, err = w.WaitEvent(own)
	wantErr(t, "WaitEvent on a released queue", err, device.CodeInvalidArgument, "released")
	must(t, "Release", q0b.Release())
	must(t, "Release", q1.Release())
	must(t, "Free", devs[0].Free(a.Ptr))
	must(t, "Free", devs[1].Free(b.Ptr))
}

// TestFaultWaitEventOuts: an event recorded after a small CopyOut whose
// slice is written only at a Wait or Sync (bounce.go) is declined while
// the copy is pending, so that the caller's Wait writes the slice before
// the dependent work reads it: here a CopyIn from that slice on the
// waiting queue, which reads it at the call. Once the copy is finished
// (the queue synced), the same event is waited for on the device.
func TestFaultWaitEventOuts(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	const n = 8192
	a, err := d.Alloc(n)
	must(t, "Alloc", err)
	b, err := d.Alloc(n)
	must(t, "Alloc", err)
	q1, q2 := twoQueues(t, d)
	w := waiter(t, q2)
	want := pattern(n, 7)
	must(t, "CopyIn", q1.CopyIn(a.Ptr, want))
	must(t, "Sync", q1.Sync())

	x := fill(n, 0)
	must(t, "CopyOut", q1.CopyOut(x, a.Ptr)) // deferred into x
	ev, err := q1.Record()
	must(t, "Record", err)
	ok, err := w.WaitEvent(ev)
	must(t, "WaitEvent", err)
	if assert.False(t, ok, "WaitEvent took an event whose small CopyOut has not written its slice yet") {
		must(t, "Wait", ev.Wait()) // the caller waits itself, as target's awaitDevice does
	}
	must(t, "CopyIn", q2.CopyIn(b.Ptr, x)) // reads x now
	back := make([]byte, n)
	must(t, "CopyOut", q2.CopyOut(back, b.Ptr))
	must(t, "Sync", q2.Sync())
	i := firstDiff(back, want)
	assert.Negative(t, i, "a CopyIn of the slice after the wait read it before the CopyOut into it had written it (byte %d)", i)

	// Finished copies out: nothing is left for the host to do.
	y := fill(n, 0)
	must(t, "CopyOut", q1.CopyOut(y, a.Ptr))
	ev2, err := q1.Record()
	must(t, "Record", err)
	must(t, "Sync", q1.Sync()) // writes y
	waits := f.read().StreamWaits
	if ok, err := w.WaitEvent(ev2); assert.True(t, ok, "WaitEvent(an event whose copies out are finished) = %v, %v; want true, nil", ok, err) {
		assert.NoError(t, err, "WaitEvent(an event whose copies out are finished) = %v, %v; want true, nil", ok, err)
	}
	assert.EqualValues(t, 1, f.read().StreamWaits-waits, "cuStreamWaitEvent calls, want 1")
	must(t, "Sync", q2.Sync())
	must(t, "Wait", ev2.Wait())
	assert.True(t, bytes.Equal(y, want), "the CopyOut before the event did not write its slice")
	must(t, "Release", q1.Release())
	must(t, "Release", q2.Release())
	must(t, "Free", d.Free(a.Ptr))
	must(t, "Free", d.Free(b.Ptr))
}

// lostClean checks the fake after the Close of a device whose context a
// sticky error ended: what the plugin could not release went with the
// context. It takes a new baseline for open's own check.
func (f *fakeLib) lostClean(t *testing.T) {
	t.Helper()
	s := f.read()
	assert.Equal(t, (fakeState{}), s.live(), "the fake driver still holds")
	assert.Zero(t, s.Misuse-f.base.Misuse, "driver calls misused the driver")
	l, b := cu.LiveObjects(), f.bindBase
	assert.Equal(t, b, l, "the binding counts %v live driver objects, %v at the start", l, b)
	f.rebase()
}

// TestFaultWaitEventSticky: a queue that waits on the device for a kernel
// that ends the context fails at its next Sync with the driver's error,
// and the event's Wait too; WaitEvent on the broken device then fails at
// once with ErrContextLost, calling no driver function. A sticky failure
// of cuStreamWaitEvent itself breaks the device; another failure is
// returned and leaves the device working.
func TestFaultWaitEventSticky(t *testing.T) {
	f := fakeDriverIn(t)
	t.Run("kernel", func(t *testing.T) {
		d := f.open(t)[0]
		fn, err := d.Load(faultKernel)
		must(t, "Load", err)
		q1, q2 := twoQueues(t, d)
		w := waiter(t, q2)
		must(t, "Launch", q1.Launch(fn, one, []device.Arg{{Bits: 0}}))
		ev, err := q1.Record()
		must(t, "Record", err)
		ok, err := w.WaitEvent(ev)
		require.True(t, ok, "WaitEvent before the fault is known = %v, %v; want true, nil", ok, err)
		require.NoError(t, err, "WaitEvent before the fault is known = %v, %v; want true, nil", ok, err)
		wantErr(t, "Sync of the waiting queue", q2.Sync(), device.CodeInvalidDevice, "CUDA_ERROR_ILLEGAL_ADDRESS")
		wantErr(t, "Wait", ev.Wait(), device.CodeInvalidDevice, "CUDA_ERROR_ILLEGAL_ADDRESS")
		calls := f.read()
		ev2, _ := q1.Record()
		for _, e := range []device.Event{ev, ev2} {
			ok, err := w.WaitEvent(e)
			if assert.False(t, ok, "WaitEvent on a broken device = %v, %v; want false and ErrContextLost", ok, err) &&
				assert.ErrorIs(t, err, ErrContextLost, "WaitEvent on a broken device = %v, %v; want false and ErrContextLost", ok, err) {
				wantErr(t, "WaitEvent on a broken device", err, device.CodeInvalidDevice, "must be restarted", "CUDA_ERROR_ILLEGAL_ADDRESS")
			}
		}
		assert.Equal(t, calls.StreamWaits, f.read().StreamWaits, "WaitEvent on a broken device called cuStreamWaitEvent")
		must(t, "Release", q1.Release())
		must(t, "Release", q2.Release())
		must(t, "Close", d.(device.Closer).Close())
		f.lostClean(t)
	})
	for _, c := range []struct {
		spec, want string
		sticky     bool
	}{
		{"cuStreamWaitEvent:1:700", "CUDA_ERROR_ILLEGAL_ADDRESS", true},
		{"cuStreamWaitEvent:1:999", "CUDA_ERROR_UNKNOWN", false},
	} {
		t.Run(c.spec, func(t *testing.T) {
			d := f.open(t)[0]
			buf, err := d.Alloc(4096)
			must(t, "Alloc", err)
			q1, q2 := twoQueues(t, d)
			w := waiter(t, q2)
			must(t, "CopyIn", q1.CopyIn(buf.Ptr, pattern(4096, 5)))
			ev, err := q1.Record()
			must(t, "Record", err)
			f.arm(c.spec)
			ok, err := w.WaitEvent(ev)
			f.arm("")
			require.False(t, ok, "WaitEvent reported true when cuStreamWaitEvent failed")
			code := device.CodeUnknown
			if c.sticky {
				code = device.CodeInvalidDevice
			}
			wantErr(t, "WaitEvent", err, code, "cuStreamWaitEvent", c.want)
			if c.sticky {
				_, err = d.Alloc(10)
				wantErr(t, "Alloc after a sticky cuStreamWaitEvent failure", err, device.CodeInvalidDevice, "must be restarted", c.want)
				must(t, "Release", q1.Release())
				must(t, "Release", q2.Release())
				d.Free(buf.Ptr)
				must(t, "Close", d.(device.Closer).Close())
				f.lostClean(t)
				return
			}
			if ok, err := w.WaitEvent(ev); assert.True(t, ok, "WaitEvent after a failure that is not sticky = %v, %v; want true, nil", ok, err) {
				assert.NoError(t, err, "WaitEvent after a failure that is not sticky = %v, %v; want true, nil", ok, err)
			}
			roundTrip(t, q2, buf.Ptr, pattern(4096, 6))
			must(t, "Wait", ev.Wait())
			must(t, "Release", q1.Release())
			must(t, "Release", q2.Release())
			must(t, "Free", d.Free(buf.Ptr))
		})
	}
}

// TestFaultWaitEventConformance runs devicetest's WaitEvent check, lazily
// and with a worker per stream.
func TestFaultWaitEventConformance(t *testing.T) {
	for _, async := range []string{"0", "1"} {
		t.Run("async="+async, func(t *testing.T) {
			f := fakeDriverIn(t)
			t.Setenv("FAKECUDA_ASYNC", async)
			waits := f.read().StreamWaits
			devicetest.TestWaitEvent(t, f.open(t)[0])
			assert.NotEqual(t, waits, f.read().StreamWaits, "the check passed without a cuStreamWaitEvent call")
		})
	}
}

// noWaitEnv marks the child process of TestFakeDriverNoStreamWait.
const noWaitEnv = "GOMPT_FAKECUDA_NO_STREAM_WAIT"

// TestFakeDriverNoStreamWait runs TestFaultNoStreamWait in a child process
// whose fake driver lacks cuStreamWaitEvent.
func TestFakeDriverNoStreamWait(t *testing.T) {
	needCgo(t)
	if os.Getenv(fakeChildEnv) != "" {
		t.Skip("in the child")
	}
	lib := buildFakeDriver(t, "-DFAKECUDA_NO_STREAM_WAIT")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultNoStreamWait$", "-test.v", "-test.timeout=1m")
	cmd.Env = append(os.Environ(), fakeChildEnv+"=1", noWaitEnv+"=1", EnvLibrary+"="+lib)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "TestFaultNoStreamWait did not pass in the child (%v):\n%s", err, out)
	require.Contains(t, string(out), "--- PASS: TestFaultNoStreamWait ", "TestFaultNoStreamWait did not pass in the child (%v):\n%s", err, out)
}

// TestFaultNoStreamWait: on a driver without cuStreamWaitEvent (an
// optional entry point) the devices open, and WaitEvent reports false so
// that the caller waits for the event itself.
func TestFaultNoStreamWait(t *testing.T) {
	f := fakeDriverIn(t)
	if os.Getenv(noWaitEnv) == "" {
		t.Skip("runs in the child of TestFakeDriverNoStreamWait, whose fake lacks cuStreamWaitEvent")
	}
	d := f.open(t)[0]
	require.False(t, cu.HasStreamWaitEvent(), "HasStreamWaitEvent is true on a driver without cuStreamWaitEvent")
	buf, err := d.Alloc(4096)
	must(t, "Alloc", err)
	q1, q2 := twoQueues(t, d)
	want := pattern(4096, 9)
	must(t, "CopyIn", q1.CopyIn(buf.Ptr, want))
	ev, err := q1.Record()
	must(t, "Record", err)
	assert.ErrorIs(t, cu.StreamWaitEvent(d.(*gpu).ctx, q2.(*queue).s, ev.(*event).h.e), cu.ErrMissingSymbol, "cu.StreamWaitEvent without the entry point")
	ok, err := waiter(t, q2).WaitEvent(ev)
	require.False(t, ok, "WaitEvent without cuStreamWaitEvent = %v, %v; want false, nil", ok, err)
	require.NoError(t, err, "WaitEvent without cuStreamWaitEvent = %v, %v; want false, nil", ok, err)
	must(t, "Wait", ev.Wait()) // the caller's own wait
	got := make([]byte, 4096)
	must(t, "CopyOut", q2.CopyOut(got, buf.Ptr))
	must(t, "Sync", q2.Sync())
	assert.True(t, bytes.Equal(got, want), "the copy after the caller's wait read wrong data")
	must(t, "Release", q1.Release())
	must(t, "Release", q2.Release())
	must(t, "Free", d.Free(buf.Ptr))
}

// twoQueues opens two queues of d.
func twoQueues(t testing.TB, d device.Device) (q1, q2 device.Queue) {
	t.Helper()
	q1, err := d.NewQueue()
	must(t, "NewQueue", err)
	q2, err = d.NewQueue()
	must(t, "NewQueue", err)
	return q1, q2
}
