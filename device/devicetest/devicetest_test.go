package devicetest_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/devicetest"
	_ "github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The suite is checked against the host device with one fault planted at a
// time: each fault must make the suite fail in the subtest that covers it,
// and the device without a fault must pass. The faulty runs happen in a
// child process (this test binary run again), since a failing subtest would
// fail this test.

const breakEnv = "DEVICETEST_BREAK"

// broken wraps a device and plants the fault named by mode.
type broken struct {
	device.Device
	mode string

	mu    sync.Mutex
	live  map[device.DevicePtr]bool // what Alloc returned, for "leak"
	frees int
}

func (b *broken) Alloc(n int) (device.Buffer, error) {
	buf, err := b.Device.Alloc(n)
	if err == nil && b.mode == "leak" {
		b.mu.Lock()
		if b.live == nil {
			b.live = map[device.DevicePtr]bool{}
		}
		b.live[buf.Ptr] = true
		b.mu.Unlock()
	}
	return buf, err
}

// MemInUse forwards device.MemInfo, which embedding does not.
func (b *broken) MemInUse() (int64, int) { return b.Device.(device.MemInfo).MemInUse() }

func (b *broken) Free(p device.DevicePtr) error {
	if b.mode == "leak" {
		b.mu.Lock()
		lose := false
		if b.live[p] {
			b.frees++
			lose = b.frees == 10 // past the Alloc subtest, which would free it twice
		}
		delete(b.live, p)
		b.mu.Unlock()
		if lose {
			return nil // one free of a live allocation is lost
		}
	}
	err := b.Device.Free(p)
	if b.mode == "double-free" {
		return nil
	}
	return err
}

func (b *broken) NewQueue() (device.Queue, error) {
	q, err := b.Device.NewQueue()
	return &brokenQueue{Queue: q, mode: b.mode}, err
}

type brokenQueue struct {
	device.Queue
	mode string
	n    int
}

func (q *brokenQueue) CopyOut(dst []byte, src device.DevicePtr) error {
	if q.mode == "short-copyout" && len(dst) > 1 {
		dst = dst[:len(dst)-1]
	}
	return q.Queue.CopyOut(dst, src)
}

func (q *brokenQueue) Launch(f device.Function, s device.Shape, args []device.Arg) error {
	if q.mode == "launch-arg" && len(args) > 1 {
		args = append([]device.Arg(nil), args...)
		args[1].Bits ^= 1 << 22 // saxpy's a, off by a high mantissa bit
	}
	if q.mode == "no-shape-check" && s.Check() != nil {
		return nil
	}
	return q.Queue.Launch(f, s, args)
}

func (q *brokenQueue) Record() (device.Event, error) {
	e, err := q.Queue.Record()
	q.n++
	if q.mode == "event-time" {
		return &brokenEvent{Event: e, skew: int64(q.n%2) * -1e9}, err // every other event a second early
	}
	return e, err
}

type brokenEvent struct {
	device.Event
	skew int64
}

func (e *brokenEvent) Time() (int64, error) {
	t, err := e.Event.Time()
	return t + e.skew, err
}

func hostDevice(t *testing.T) device.Device {
	p, ok := device.Lookup("host")
	require.True(t, ok, `plugin "host" is not registered`)
	devs, err := p.Devices()
	require.NoError(t, err)
	return devs[0]
}

// TestPlanted is the child: it runs the suite on the faulty device.
func TestPlanted(t *testing.T) {
	mode := os.Getenv(breakEnv)
	if mode == "" {
		t.Skip("run by TestSuiteFindsFaults")
	}
	saxpy := kernels.Saxpy
	switch mode {
	case "short-sample": // a user's kernel whose Sample gives too few buffers
		k := *kernels.Saxpy
		k.Sample = func(n int, seed int64) device.Sample {
			smp := kernels.Saxpy.Sample(n, seed)
			smp.Bufs = smp.Bufs[:3]
			return smp
		}
		saxpy = &k
	case "sample-shorter-than-len": // a Sample whose y is one element short of n
		k := *kernels.Saxpy
		k.Sample = func(n int, seed int64) device.Sample {
			smp := kernels.Saxpy.Sample(n, seed)
			smp.Bufs[3] = smp.Bufs[3][:len(smp.Bufs[3])-4]
			return smp
		}
		saxpy = &k
	case "bad-len": // a Len naming no parameter
		k := *kernels.Saxpy
		k.Params = slices.Clone(k.Params)
		k.Params[3].Len = "q"
		saxpy = &k
	case "undeclared-dims": // a 1-D kernel whose Sample is 2-D
		k := *kernels.Saxpy
		k.Sample = func(n int, seed int64) device.Sample {
			smp := kernels.Saxpy.Sample(n, seed)
			smp.Shape.Size[1] = 2
			return smp
		}
		saxpy = &k
	}
	devicetest.TestDevice(t, &broken{Device: hostDevice(t), mode: mode}, saxpy, kernels.Dot)
}

func TestSuiteFindsFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for _, c := range []struct{ mode, failing string }{
		{"none", ""},
		{"double-free", "--- FAIL: TestPlanted/Alloc"},
		{"short-copyout", "--- FAIL: TestPlanted/Copy"},
		{"launch-arg", "--- FAIL: TestPlanted/Kernels/saxpy"},
		{"no-shape-check", "--- FAIL: TestPlanted/Kernels/saxpy"},
		{"event-time", "--- FAIL: TestPlanted/Events"},
		{"leak", "--- FAIL: TestPlanted/NoLeak"},
		{"short-sample", "Sample has 3 buffers and 4 arguments"},
		{"sample-shorter-than-len", `buffer y has 0 elements; its Len "n" needs 1`},
		{"bad-len", `kernel saxpy parameter y: Len "q": "q" is not an integer scalar parameter`},
		{"undeclared-dims", "uses 2 dimensions; the kernel declares 1 (Kernel.Dims)"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPlanted$", "-test.v")
			cmd.Env = append(os.Environ(), breakEnv+"="+c.mode)
			out, err := cmd.CombinedOutput()
			if c.failing == "" {
				require.NoError(t, err, "the suite fails a sound device: %v\n%s", err, out)
				for _, sub := range []string{"Alloc", "Copy", "Kernels/saxpy", "Kernels/dot_partial", "Order", "Events", "Concurrent", "NoLeak"} {
					assert.Contains(t, string(out), "--- PASS: TestPlanted/"+sub+" ", "the sound run did not pass subtest %s:\n%s", sub, out)
				}
				return
			}
			require.Error(t, err, "fault %s went unnoticed:\n%s", c.mode, out)
			assert.Contains(t, string(out), c.failing, "fault %s: want %q in the output, and no panic:\n%s", c.mode, c.failing, out)
			assert.False(t, strings.Contains(string(out), "panic:"), "fault %s: want %q in the output, and no panic:\n%s", c.mode, c.failing, out)
		})
	}
}
