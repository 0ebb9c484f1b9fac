//go:build cgo && linux

package cuda

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFaultReuseFences checks the fences of the generic cache's blocks
// (reuse.go) by the fake driver's allocation count, with a kernel that
// runs until the test opens the gate: a block freed while a queue's
// work on it is in flight is not handed out, and the Alloc of its class
// makes new memory, until that work is done; a block another, idle queue
// also used waits for the busy one; a block freed with every queue
// that used it idle is reused at once; and Trim waits for the fences of
// the blocks it gives back (the fake holds no event afterwards).
func TestFaultReuseFences(t *testing.T) {
	f := fakeDriverIn(t)
	t.Setenv("FAKECUDA_ASYNC", "1")
	f.closeGate(t)
	d := f.open(t)[0]
	g := d.(*gpu)
	gate, err := d.Load(gateKernel)
	must(t, "Load", err)
	const n = 64 << 10
	q1, q2 := twoQueues(t, d)
	t.Cleanup(func() {
		f.openGate()
		q1.Release()
		q2.Release()
	})

	// Freed idle: reused at once, with no driver call.
	a, err := d.Alloc(n)
	must(t, "Alloc", err)
	must(t, "CopyIn", q1.CopyIn(a.Ptr, pattern(n, 1)))
	must(t, "Sync", q1.Sync())
	must(t, "Free", d.Free(a.Ptr))
	allocs := f.read().Allocs
	b, err := d.Alloc(n)
	must(t, "Alloc", err)
	assert.Equal(t, a.Ptr, b.Ptr, "a block freed with its queue idle is not reused")
	assert.Equal(t, allocs, f.read().Allocs, "driver allocations")

	// Used by q2 (idle since) and q1 (busy behind the gate): the block
	// waits for q1.
	must(t, "CopyIn", q2.CopyIn(b.Ptr, pattern(n, 2)))
	must(t, "Sync", q2.Sync())
	must(t, "Launch", q1.Launch(gate, device.Shape{Size: [3]int{1, 1, 1}}, nil))
	must(t, "CopyIn", q1.CopyIn(b.Ptr, pattern(n, 3)))
	must(t, "Free", d.Free(b.Ptr))
	c, err := d.Alloc(n)
	must(t, "Alloc", err)
	assert.NotEqual(t, b.Ptr, c.Ptr, "a block was handed out while the work before its fence still ran")
	assert.Equal(t, allocs+1, f.read().Allocs, "driver allocations: the Alloc behind a fence did not make new memory")
	assert.EqualValues(t, 2*n, g.CacheBytes()+n, "the fenced block left the cache")

	// Once the work is done, the block serves the next Alloc of its class
	// and its fence's event goes back to the pool.
	f.openGate()
	must(t, "Sync", q1.Sync())
	e, err := d.Alloc(n)
	must(t, "Alloc", err)
	assert.Equal(t, b.Ptr, e.Ptr, "the block was not reused after its fence completed")
	assert.Equal(t, allocs+1, f.read().Allocs, "driver allocations")

	// Trim waits for a fence still pending, then frees the block.
	f.closeGate(t)
	must(t, "Launch", q1.Launch(gate, device.Shape{Size: [3]int{1, 1, 1}}, nil))
	must(t, "CopyIn", q1.CopyIn(e.Ptr, pattern(n, 4)))
	must(t, "Free", d.Free(e.Ptr))
	trimmed := make(chan error, 1)
	go func() { _, err := g.Trim(); trimmed <- err }()
	select {
	case err := <-trimmed:
		require.Fail(t, "Trim returned while the work before a block's fence still ran", "error %v", err)
	default:
	}
	f.openGate()
	must(t, "Trim", <-trimmed)
	assert.Zero(t, g.CacheBytes(), "cache bytes after Trim")
	assert.Equal(t, allocs, f.read().Allocs, "driver allocations after Trim: want the trimmed block freed")
	must(t, "Free", d.Free(c.Ptr))
	must(t, "Sync", q1.Sync())
}
