//go:build cgo

package opencl_test

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/cl"
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
