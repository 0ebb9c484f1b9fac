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
// new allocation (as OpenCL's Reuser and CUDA's fences prevent).
func TestFreedBlockNotReusedWhileQueuedWorkUsesIt(t *testing.T) {
	d := newDevice(0)
	q1, _ := d.NewQueue()
	defer q1.Release()
	q2, _ := d.NewQueue()
	defer q2.Release()
	f, err := d.Load(testGate)
	require.NoError(t, err)
	const n = 4096
	gate = make(chan struct{})
	a, err := d.Alloc(n)
	require.NoError(t, err)
	big, _ := d.Alloc(1 << 20)
	defer d.Free(big.Ptr)
	// A large copy first, so that the launch is queued, not run inline.
	require.NoError(t, q1.CopyIn(big.Ptr, make([]byte, 1<<20)))
	require.NoError(t, q1.Launch(f, device.Shape{Size: [3]int{1}, Teams: 1}, []device.Arg{{Ptr: a.Ptr}}))
	require.NoError(t, d.Free(a.Ptr)) // the launch still waits at its gate
	b, err := d.Alloc(n)
	require.NoError(t, err)
	defer d.Free(b.Ptr)
	want := make([]byte, n)
	for i := range want {
		want[i] = 2
	}
	require.NoError(t, q2.CopyIn(b.Ptr, want))
	require.NoError(t, q2.Sync())
	close(gate)
	require.NoError(t, q1.Sync())
	got := make([]byte, n)
	require.NoError(t, q2.CopyOut(got, b.Ptr))
	require.NoError(t, q2.Sync())
	assert.Equal(t, want, got, "the new allocation (%v; the freed one %v) was written by the launch queued before the free", b.Ptr, a.Ptr)
}

// The same for a block too large for the cache (a slot backed by a
// mapping, which the host device keeps for the slot's next allocation).
func TestFreedLargeBlockNotReusedWhileQueuedWorkUsesIt(t *testing.T) {
	d := newDevice(0)
	q1, _ := d.NewQueue()
	defer q1.Release()
	q2, _ := d.NewQueue()
	defer q2.Release()
	f, err := d.Load(testGate)
	require.NoError(t, err)
	const n = cacheMaxClass + 1<<20
	gate = make(chan struct{})
	a, err := d.Alloc(n)
	require.NoError(t, err)
	big, _ := d.Alloc(1 << 20)
	defer d.Free(big.Ptr)
	require.NoError(t, q1.CopyIn(big.Ptr, make([]byte, 1<<20)))
	require.NoError(t, q1.Launch(f, device.Shape{Size: [3]int{1}, Teams: 1}, []device.Arg{{Ptr: a.Ptr}}))
	require.NoError(t, d.Free(a.Ptr))
	b, err := d.Alloc(n)
	require.NoError(t, err)
	defer d.Free(b.Ptr)
	want := make([]byte, n)
	for i := range want {
		want[i] = 2
	}
	require.NoError(t, q2.CopyIn(b.Ptr, want))
	require.NoError(t, q2.Sync())
	close(gate)
	require.NoError(t, q1.Sync())
	got := make([]byte, n)
	require.NoError(t, q2.CopyOut(got, b.Ptr))
	require.NoError(t, q2.Sync())
	if !assert.True(t, bytes.Equal(want, got), "the new allocation (%v; the freed one %v) was written by the launch queued before the free", b.Ptr, a.Ptr) {
		t.Logf("first bytes %v", got[:4])
	}
}
