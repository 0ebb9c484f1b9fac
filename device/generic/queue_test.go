package generic

import (
	"errors"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeQueue is a Launcher that records what Queue asked of it.
type fakeQueue struct {
	Queue
	targetErr error // KernelOf's
	implErr   error // EnqueueLaunch's
	faults    bool  // EnqueueLaunch's
	calls     []string
	shape     device.Shape // as EnqueueLaunch saw it
}

type fakeFn struct{ k *device.Kernel }

func (f fakeFn) Kernel() *device.Kernel  { return f.k }
func (f fakeFn) Image() device.ImageKind { return "fake" }
func (f fakeFn) Bytes() int              { return 1 }

func (q *fakeQueue) KernelOf(f device.Function) (*device.Kernel, error) {
	q.calls = append(q.calls, "kernel")
	if q.targetErr != nil {
		return nil, q.targetErr
	}
	return f.Kernel(), nil
}

func (q *fakeQueue) EnqueueLaunch(f device.Function, k *device.Kernel, shape *device.Shape, args []device.Arg) (bool, error) {
	q.calls = append(q.calls, "impl "+k.Name)
	q.shape = *shape
	return q.faults, q.implErr
}

var queueInfo = device.Info{MaxThreadsPerTeam: 256, MaxTeams: 1000}

func newFakeQueue(exact bool) *fakeQueue {
	q := &fakeQueue{}
	q.Init(q, QueueConfig{ID: "d:0", Info: &queueInfo, ExactThreads: exact})
	return q
}

// Launch asks the plugin for the function's kernel first, then makes the
// launch checks (CheckLaunch), and calls EnqueueLaunch only for a launch
// that passes them; CheckTrusted checks only the number of arguments.
func TestQueueLaunchChecks(t *testing.T) {
	k := &device.Kernel{Name: "k", Params: []device.Param{device.BufferParam("x", device.ParamFloat32, ""), device.ScalarParam("n", device.ParamInt32)}, MaxThreads: 128}
	f := fakeFn{k}
	good := []device.Arg{{Ptr: 0x100}, {Bits: 4}}
	shape := device.Shape{Size: [3]int{4}, Teams: 10, Threads: 512}

	q := newFakeQueue(false)
	require.NoError(t, q.Launch(f, shape, good), "threads past the limits: the plugin's to lower")
	assert.Equal(t, []string{"kernel", "impl k"}, q.calls)
	assert.Equal(t, shape, q.shape, "the shape EnqueueLaunch saw")

	q.calls, q.targetErr = nil, errors.New("released")
	assert.EqualError(t, q.Launch(f, device.Shape{}, nil), "released", "KernelOf's error comes first")
	assert.Equal(t, []string{"kernel"}, q.calls)
	q.targetErr = nil

	for _, c := range []struct {
		shape device.Shape
		args  []device.Arg
		want  string
	}{
		{shape, good[:1], "kernel k takes 2 arguments"},
		{shape, []device.Arg{{}, {Bits: 4}}, "nil device pointer"},
		{device.Shape{}, good, "dimension 0 must be at least 1"},
		{device.Shape{Size: [3]int{4}, Teams: 1001}, good, "1001 teams: want at most 1000"},
	} {
		q.calls = nil
		err := q.Launch(f, c.shape, c.args)
		if assert.Error(t, err, "%+v %v", c.shape, c.args) {
			assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err))
			assert.Contains(t, err.Error(), "d:0: launch k: invalid argument: ")
			assert.Contains(t, err.Error(), c.want)
		}
		assert.Equal(t, []string{"kernel"}, q.calls, "EnqueueLaunch called for a launch that fails the checks")
	}

	require.NoError(t, q.CheckTrusted(k, []device.Arg{{}, {}}), "CheckTrusted: the caller checked for nil pointers")
	err := q.CheckTrusted(k, good[:1])
	assert.ErrorContains(t, err, "d:0: launch k: invalid argument: kernel k takes 2 arguments", "CheckTrusted checks the number of arguments")
	assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err))

	// ExactThreads: more threads per team than the device or the kernel
	// runs is refused, as the host device refuses it.
	e := newFakeQueue(true)
	for _, c := range []struct {
		k       *device.Kernel
		threads int
		want    string
	}{
		{k, 129, "launch shape: 129 threads per team: want at most 128"},
		{&device.Kernel{Name: "k", Params: k.Params}, 257, "launch shape: 257 threads per team: want at most 256"},
	} {
		e.calls = nil
		err := e.Launch(fakeFn{c.k}, device.Shape{Size: [3]int{4}, Threads: c.threads}, good)
		assert.ErrorContains(t, err, "d:0: launch k: invalid argument: "+c.want)
		assert.Equal(t, []string{"kernel"}, e.calls)
	}
	require.NoError(t, e.Launch(f, device.Shape{Size: [3]int{4}, Threads: 128}, good))
}

// A launch whose EnqueueLaunch passed the fault record notes its kernel in
// the fault log, even where the launch then failed; ReadFaults decodes a
// record that names it and reads nothing while no launch is pending.
func TestQueueFaultLog(t *testing.T) {
	k := &device.Kernel{Name: "Heat", Faults: []device.FaultSite{{Kind: device.FaultDivide, Pos: "heat.go:20"}}}
	q := newFakeQueue(false)
	reads := 0
	read := func(rec [4]int64) func(*[4]int64) error {
		return func(r *[4]int64) error { reads++; *r = rec; return nil }
	}
	zeroed := 0
	zero := func() error { zeroed++; return nil }

	require.NoError(t, q.Launch(fakeFn{k}, device.Shape{Size: [3]int{1}}, nil))
	assert.False(t, q.FaultsPending(), "a launch that passed no record")
	assert.NoError(t, q.ReadFaults(read([4]int64{}), zero))
	assert.Zero(t, reads, "ReadFaults read with no launch pending")

	q.faults = true
	q.implErr = errors.New("enqueue failed")
	assert.EqualError(t, q.Launch(fakeFn{k}, device.Shape{Size: [3]int{1}}, nil), "enqueue failed")
	require.True(t, q.FaultsPending(), "a launch that passed the record, then failed")
	err := q.ReadFaults(read([4]int64{1, 0, 0, device.FaultTag("Heat")}), zero)
	var kf *device.KernelFault
	require.True(t, errors.As(err, &kf), "%v", err)
	assert.Equal(t, "Heat", kf.Kernel)
	assert.Equal(t, []int{1, 1}, []int{reads, zeroed}, "reads and zeroings")
	assert.False(t, q.FaultsPending(), "read: nothing pending")
}

type fakeTiming struct{ n int }

func (fakeTiming) Times() (int64, int64, device.Native, error) { return 1, 2, device.Native{}, nil }

// Profile, Profiling, Last and SetLast keep the queue's profiling state.
func TestQueueProfile(t *testing.T) {
	var q Queue // usable before Init, as a plugin's tests use a bare queue
	assert.False(t, q.Profiling())
	assert.Nil(t, q.Last(), "Last of a fresh queue")
	q.Profile(true)
	assert.True(t, q.Profiling())
	tm := &fakeTiming{1}
	q.SetLast(tm)
	assert.Same(t, tm, q.Last())
	q.Profile(false)
	assert.False(t, q.Profiling())
}

// Timings keeps at most MaxTimings, handing back the oldest half beyond,
// in order; Take empties it.
func TestTimings(t *testing.T) {
	var l Timings[int]
	for i := range MaxTimings {
		require.Nil(t, l.Add(i), "Add %d", i)
	}
	old := l.Add(MaxTimings)
	require.Len(t, old, (MaxTimings+1)/2)
	assert.Equal(t, 0, old[0])
	assert.Equal(t, len(old)-1, old[len(old)-1])
	assert.Equal(t, MaxTimings+1-len(old), l.Len())
	ts := l.Take()
	assert.Equal(t, len(old), ts[0], "the rest, in order")
	assert.Equal(t, MaxTimings, ts[len(ts)-1])
	assert.Zero(t, l.Len(), "after Take")
	assert.Empty(t, l.Take())
}

// A launch through Queue allocates nothing: the shape Launch takes by
// value stays in the queue.
func TestQueueLaunchAllocatesNothing(t *testing.T) {
	k := &device.Kernel{Name: "k", Params: []device.Param{device.ScalarParam("n", device.ParamInt32)}}
	q := &nopQueue{}
	q.Init(q, QueueConfig{ID: "d:0", Info: &queueInfo})
	var f device.Function = fakeFn{k}
	args := []device.Arg{{Bits: 1}}
	shape := device.Shape{Size: [3]int{8}}
	n := testing.AllocsPerRun(100, func() {
		if err := q.Launch(f, shape, args); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, n)
}

type nopQueue struct{ Queue }

func (q *nopQueue) KernelOf(f device.Function) (*device.Kernel, error) { return f.Kernel(), nil }
func (q *nopQueue) EnqueueLaunch(device.Function, *device.Kernel, *device.Shape, []device.Arg) (bool, error) {
	return false, nil
}
