//go:build cgo

package opencl

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBracketsKeepQueueOrder fixes the ends of a queue's operations in
// random order, each seen complete at a random time after its real end
// (real ends in queue order, as an in-order queue has them): every fixed
// end stays at or after its operation's real end, and the ends are in
// queue order whatever order they were fixed in, as tools and devicetest
// require of bracketing times.
func TestBracketsKeepQueueOrder(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 1 + r.IntN(40)
		real := make([]int64, n) // real completion times, in queue order
		for i := range real {
			real[i] = int64(i*10 + r.IntN(10))
		}
		seenAt := make([]int64, n) // when each was seen: any time after its end
		for i := range seenAt {
			seenAt[i] = real[i] + int64(r.IntN(500))
		}
		var b brackets
		ends := make([]int64, n)
		for _, i := range r.Perm(n) {
			key := uint64(2*i + r.IntN(2)) // an operation, or an event after it
			ends[i] = b.fix(key, seenAt[i])
			require.GreaterOrEqual(t, ends[i], real[i], "seed %d: operation %d ends at %d, before its real end %d", seed, i, ends[i], real[i])
		}
		for i := 1; i < n; i++ {
			require.LessOrEqual(t, ends[i-1], ends[i], "seed %d: ends %v out of queue order at %d", seed, ends, i)
		}
	}
}

// TestHostTimes checks a device whose driver gives no usable profiling
// times (POCL pretending so, as rusticl): it opens and runs, says so in
// Describe, reads the host's CLOCK_MONOTONIC as its clock, and its event
// times lie between readings of that clock taken before the work and
// after waiting for it.
func TestHostTimes(t *testing.T) {
	base := clDevices(t)[0]
	d := pretend(t, base, hooks{noTimes: true}, 0)
	require.True(t, d.hostTimes, "a device without usable times uses host times")
	desc, err := d.Describe()
	require.NoError(t, err)
	assert.True(t, desc.BracketTimes, "Describe: BracketTimes")
	assert.Contains(t, desc.TimeSource, "host CLOCK_MONOTONIC readings that bracket each operation")
	h0 := cl.HostClock(cl.CLOCK_MONOTONIC)
	now, err := d.Now()
	require.NoError(t, err)
	h1 := cl.HostClock(cl.CLOCK_MONOTONIC)
	assert.True(t, h0 <= now && now <= h1, "Now %d outside the host readings [%d, %d]", now, h0, h1)

	q, err := d.NewQueue()
	require.NoError(t, err)
	defer q.Release()
	a, err := d.Alloc(1 << 20)
	require.NoError(t, err)
	defer d.Free(a.Ptr)
	before, _ := d.Now()
	require.NoError(t, q.CopyIn(a.Ptr, make([]byte, 1<<20)))
	ev, err := q.Record()
	require.NoError(t, err)
	require.NoError(t, ev.Wait())
	after, _ := d.Now()
	et, err := ev.Time()
	require.NoError(t, err)
	assert.True(t, before <= et && et <= after, "event time %d outside [%d, %d]", et, before, after)
}

// TestOpenFailsAtEachStep makes a device's opening fail at each of its
// steps (creating the context, the internal queue, probing event
// profiling, calibrating the clock), as a driver might: each use then
// fails with the step's error, Close (what Shutdown calls) releases
// nothing twice and returns, and no OpenCL object is left behind. Before
// the opening released what it had made, a failed probe left the context
// and queue to Close, which released them again (rusticl: SIGSEGV in
// clReleaseCommandQueue).
func TestOpenFailsAtEachStep(t *testing.T) {
	base := clDevices(t)[0]
	for _, step := range initSteps {
		t.Run(step, func(t *testing.T) {
			before := cl.Live()
			d, err := newDevice(base.n+64, base.plat, "", base.dev)
			require.NoError(t, err)
			// The clock is calibrated only where the profiling timer runs
			// on no host clock and there is no host timer.
			d.hooks = hooks{failInit: step, noHostClock: true}
			d.timer = false
			d.initGeneric()
			err = d.init()
			if base.hostTimes && step == "calibrate clock" {
				require.NoError(t, err, "a device with host times calibrates no clock")
			} else {
				require.Error(t, err, "opening with %s failing", step)
				assert.True(t, errors.Is(err, errInjected), "open: %v, want the injected failure", err)
				assert.Contains(t, err.Error(), step, "open: %v names the step", err)
				_, qerr := d.NewQueue()
				assert.ErrorIs(t, qerr, errInjected, "NewQueue after the failed open")
				_, aerr := d.Alloc(64)
				assert.Error(t, aerr, "Alloc after the failed open")
				_, nerr := d.Now()
				assert.Error(t, nerr, "Now after the failed open")
			}
			require.NoError(t, d.Close(), "Close after %s failed", step)
			require.NoError(t, d.Close(), "a second Close")
			_, err = d.NewQueue()
			assert.Error(t, err, "NewQueue after Close")
			assert.Equal(t, before, cl.Live(), "OpenCL objects left behind by an opening that failed at %s", step)
		})
	}
	// The real device is untouched.
	q, err := base.NewQueue()
	require.NoError(t, err)
	require.NoError(t, q.Release())
}
