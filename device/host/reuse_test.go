package host

import (
	"bytes"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testGate waits until its gate is opened, then writes 1 to every byte
// of its buffer.
var testGate = &device.Kernel{
	Name:   "test_gate",
	Params: []device.Param{{Name: "buf", Kind: device.ParamBuffer}},
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, _ device.Range, team, _ int) {
		if team == 0 {
			<-gate
			for i := range a.Bufs[0] {
				a.Bufs[0][i] = 1
			}
		}
	}}},
}

var gate chan struct{}

// A block freed while a launch queued on one queue still uses it must not
// serve a new allocation before that launch is done: the generic cache
// keeps the block's memory, so a reuse would let the old launch write the
// new allocation (as OpenCL's Reuser and CUDA's fences prevent). The same
// for a block too large for the cache: a slot backed by a mapping, which
// the host device keeps for the slot's next allocation.
func TestFreedBlockNotReusedWhileQueuedWorkUsesIt(t *testing.T) {
	for _, n := range []int{4096, cacheMaxClass + 1<<20} {
		d := newDeviceOf(0, 1, processBudget()) // the only device: room for the large block on a 32-bit host too
		q1, _ := d.NewQueue()
		q2, _ := d.NewQueue()
		f, err := d.Load(testGate)
		require.NoError(t, err)
		gate = make(chan struct{})
		a, err := d.Alloc(n)
		require.NoError(t, err)
		big, err := d.Alloc(1 << 20)
		require.NoError(t, err)
		// A large copy first, and the queue counted busy while the launch
		// is enqueued: the launch must go to the queue's goroutine, not run
		// inline (it would wait at its gate on this goroutine). The copy
		// alone did not ensure it: when the queue's goroutine finished the
		// copy first, the test hung (once, in CI under -race).
		require.NoError(t, q1.CopyIn(big.Ptr, make([]byte, 1<<20)))
		hq := q1.(*Queue)
		hq.pending.Add(1)
		require.NoError(t, q1.Launch(f, device.Shape{Size: [3]int{1}, Teams: 1}, []device.Arg{{Ptr: a.Ptr}}))
		hq.pending.Add(-1)                // the launch is pending itself until the gate opens
		require.NoError(t, d.Free(a.Ptr)) // the launch still waits at its gate
		b, err := d.Alloc(n)
		require.NoError(t, err)
		want := bytes.Repeat([]byte{2}, n)
		require.NoError(t, q2.CopyIn(b.Ptr, want))
		require.NoError(t, q2.Sync())
		close(gate)
		require.NoError(t, q1.Sync())
		got := make([]byte, n)
		require.NoError(t, q2.CopyOut(got, b.Ptr))
		require.NoError(t, q2.Sync())
		assert.True(t, bytes.Equal(want, got), "%d bytes: the new allocation (%v; the freed one %v) was written by the launch queued before the free (first bytes %v)",
			n, b.Ptr, a.Ptr, got[:4])
		require.NoError(t, d.Free(b.Ptr))
		require.NoError(t, d.Free(big.Ptr))
		require.NoError(t, q1.Release())
		require.NoError(t, q2.Release())
	}
}
