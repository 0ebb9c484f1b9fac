//go:build cgo

package opencl_test

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A freed buffer is kept and serves the next allocation of its size class
// (no new OpenCL memory object, nothing to page in again), but only once
// every queue of the device is idle: while a queue's work may still use
// it, an allocation gets a fresh buffer. The data a reused buffer serves
// is the new owner's alone.
func TestFreedBufferReused(t *testing.T) {
	for _, d := range devices(t) {
		trimCache(t, d)
		const size = 3 << 20
		a, err := d.Alloc(size)
		require.NoError(t, err)
		require.NoError(t, d.Free(a.Ptr))
		mems := cl.Live().Mems
		b, err := d.Alloc(size - 1000) // the same class
		require.NoError(t, err)
		assert.Equal(t, mems, cl.Live().Mems, "%s: no new memory object for a size of a freed buffer's class", d.Info().Name)
		assert.Equal(t, a.Ptr, b.Ptr, "%s: the freed buffer, at its address", d.Info().Name)

		// A queue with work not yet known complete holds the cache back.
		q, err := d.NewQueue()
		require.NoError(t, err)
		f, err := d.Load(kernels.Fill)
		require.NoError(t, err)
		n := (size - 1000) / 4
		require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{n}}, []device.Arg{{Bits: uint64(n)}, {Bits: 0x40400000}, {Ptr: b.Ptr}}))
		require.NoError(t, d.Free(b.Ptr)) // freed with the fill in flight (or at least not synced)
		c, err := d.Alloc(size)
		require.NoError(t, err)
		assert.NotEqual(t, b.Ptr, c.Ptr, "%s: a queue not synced since its launch: a fresh buffer", d.Info().Name)
		require.NoError(t, q.Sync())
		e, err := d.Alloc(size)
		require.NoError(t, err)
		assert.Equal(t, b.Ptr, e.Ptr, "%s: queues idle: the freed buffer again", d.Info().Name)
		out := make([]byte, 8)
		require.NoError(t, q.CopyIn(e.Ptr, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
		require.NoError(t, q.CopyOut(out, e.Ptr))
		require.NoError(t, q.Sync())
		assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, out, "%s: the reused buffer holds what its new owner wrote", d.Info().Name)
		require.NoError(t, q.Release())
		require.NoError(t, d.Free(c.Ptr))
		require.NoError(t, d.Free(e.Ptr))
		trimCache(t, d)
	}
}

// A map of two arrays, as a target construct makes it: the first array's
// buffer comes from the cache and its copy is enqueued, then the second
// array's buffer is allocated while that copy may be in flight. Both
// buffers were freed after the queue's work was done (the runtime syncs
// before it frees), so both come from the cache: no new memory object,
// nothing to page in again (PolyBench's gesummv spent 45 ms of its 50
// paging in a fresh buffer for its second matrix).
func TestFreedBuffersReusedWhileACopyIsInFlight(t *testing.T) {
	for _, d := range devices(t) {
		trimCache(t, d)
		const size = 8 << 20
		q, err := d.NewQueue()
		require.NoError(t, err)
		a, err := d.Alloc(size)
		require.NoError(t, err)
		b, err := d.Alloc(size)
		require.NoError(t, err)
		src := make([]byte, size)
		require.NoError(t, q.CopyIn(a.Ptr, src))
		require.NoError(t, q.CopyIn(b.Ptr, src))
		require.NoError(t, q.Sync())
		require.NoError(t, d.Free(a.Ptr))
		require.NoError(t, d.Free(b.Ptr))

		mems := cl.Live().Mems
		a2, err := d.Alloc(size)
		require.NoError(t, err)
		require.NoError(t, q.CopyIn(a2.Ptr, src)) // not synced: the queue is busy
		b2, err := d.Alloc(size)
		require.NoError(t, err)
		assert.Equal(t, mems, cl.Live().Mems, "%s: both buffers from the cache", d.Info().Name)
		assert.ElementsMatch(t, []device.DevicePtr{a.Ptr, b.Ptr}, []device.DevicePtr{a2.Ptr, b2.Ptr}, "%s", d.Info().Name)
		require.NoError(t, q.CopyIn(b2.Ptr, src[:8]))
		require.NoError(t, q.Sync())
		require.NoError(t, q.Release())
		require.NoError(t, d.Free(a2.Ptr))
		require.NoError(t, d.Free(b2.Ptr))
		trimCache(t, d)
	}
}
