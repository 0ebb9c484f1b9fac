package generic

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fenceDev is a fakeDev that fences each freed block (Fencer), as CUDA
// does with an event on each queue that used it, and whose MemAlloc can
// refuse a size class's rounding.
type fenceDev struct {
	fakeDev
	busy     bool         // a block freed now gets a fence that is not done
	pending  map[int]bool // handles whose fence is not done
	fenceErr error        // Fence's error
	waited   []int        // handles Wait waited for, in order
	noRound  error        // MemAlloc's error for span > size
}

func (d *fenceDev) Fence(h int) error {
	if d.fenceErr != nil {
		return d.fenceErr
	}
	if d.busy {
		d.pending[h] = true
	}
	return nil
}

func (d *fenceDev) Reuse(h int) bool { return !d.pending[h] }

func (d *fenceDev) Wait(h int) error {
	d.waited = append(d.waited, h)
	delete(d.pending, h)
	return nil
}

func (d *fenceDev) MemAlloc(size, span int) (device.DevicePtr, int, error) {
	if d.noRound != nil && span > size {
		return 0, 0, d.noRound
	}
	return d.fakeDev.MemAlloc(size, span)
}

func (d *fenceDev) MemFree(p device.DevicePtr, h int, size int) error {
	if d.pending[h] {
		return fmt.Errorf("handle %d freed before its fence was waited for", h)
	}
	return d.fakeDev.MemFree(p, h, size)
}

func newFenced(t *testing.T, exact bool) *fenceDev {
	d := &fenceDev{fakeDev: fakeDev{live: map[int]bool{}}, pending: map[int]bool{}}
	c := Config{ID: "fake:0", Info: device.Info{MaxAlloc: 1 << 30}, Images: []device.ImageKind{"opencl-c"},
		CacheLimit: 1 << 20, CacheMax: 256 << 10, ExactFallback: exact}
	c.Space.Lo, c.Space.Hi = 1<<20, 1<<40
	d.Init(d, c)
	return d
}

// A fenced block serves no allocation until its fence is done (an
// allocation of its class meanwhile gets fresh memory); then it serves
// the next one, at its address with its handle.
func TestCacheWaitsForFences(t *testing.T) {
	d := newFenced(t, false)
	a, err := d.Alloc(3000)
	require.NoError(t, err)
	h, _, _, err := d.Lookup("copy", a.Ptr, 3000)
	require.NoError(t, err)
	d.busy = true
	require.NoError(t, d.Free(a.Ptr))
	require.True(t, d.pending[h], "Free did not fence the block")
	d.busy = false
	b, err := d.Alloc(3000)
	require.NoError(t, err)
	assert.NotEqual(t, a.Ptr, b.Ptr, "a block was handed out before its fence was done")
	assert.Len(t, d.live, 2, "the allocation behind a fence made new memory")
	delete(d.pending, h) // the work is done
	c, err := d.Alloc(3000)
	require.NoError(t, err)
	assert.Equal(t, a.Ptr, c.Ptr, "the block, its fence done")
	h2, _, _, err := d.Lookup("copy", c.Ptr, 3000)
	require.NoError(t, err)
	assert.Equal(t, h, h2, "the block's handle")
	assert.Len(t, d.live, 2, "no MemAlloc")
}

// Trim waits for the fences of the blocks it empties before MemFree; a
// block whose fence fails is not cached but freed, and Free returns
// MemFree's answer.
func TestCacheTrimWaitsForFences(t *testing.T) {
	d := newFenced(t, false)
	a, err := d.Alloc(3000)
	require.NoError(t, err)
	h, _, _, err := d.Lookup("copy", a.Ptr, 3000)
	require.NoError(t, err)
	d.busy = true
	require.NoError(t, d.Free(a.Ptr))
	n, err := d.Trim()
	require.NoError(t, err, "Trim")
	assert.Positive(t, n, "bytes trimmed")
	assert.Equal(t, []int{h}, d.waited, "Trim waited for")
	assert.Empty(t, d.live, "the block is freed")

	b, err := d.Alloc(3000)
	require.NoError(t, err)
	d.fenceErr = errors.New("device closed")
	require.NoError(t, d.Free(b.Ptr), "Free with a failing fence: MemFree's answer")
	assert.Zero(t, d.CacheBytes(), "a block whose fence failed was cached")
	assert.Empty(t, d.live, "a block whose fence failed was not freed")
}

// With ExactFallback, an allocation whose size class's rounding does not
// fit is made at its exact size, and never cached; without, the error is
// MemAlloc's.
func TestExactFallback(t *testing.T) {
	d := newFenced(t, true)
	d.noRound = d.Errorf("alloc", device.CodeOutOfResources, "out of memory")
	a, err := d.Alloc(3000)
	require.NoError(t, err, "the exact size fits")
	_, _, size, err := d.Lookup("copy", a.Ptr, 3000)
	require.NoError(t, err)
	assert.Equal(t, 3000, size)
	require.NoError(t, d.Free(a.Ptr))
	assert.Zero(t, d.CacheBytes(), "an allocation of its exact size was cached")
	assert.Empty(t, d.live, "an allocation of its exact size was not freed")
	b, err := d.Alloc(3072) // its class's whole size: no rounding
	require.NoError(t, err)
	require.NoError(t, d.Free(b.Ptr))
	assert.Positive(t, d.CacheBytes(), "a block of its class's size is cached")

	e := newFenced(t, false)
	e.noRound = d.noRound
	_, err = e.Alloc(3000)
	assert.ErrorIs(t, err, d.noRound, "without ExactFallback")

	// only lack of memory is tried again at the exact size (a device
	// broken or closed says so itself)
	f := newFenced(t, true)
	f.noRound = f.Errorf("alloc", device.CodeInvalidDevice, "device gone")
	_, err = f.Alloc(3000)
	assert.ErrorIs(t, err, f.noRound, "a device gone, with ExactFallback")
}
