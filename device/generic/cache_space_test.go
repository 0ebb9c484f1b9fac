package generic

import (
	"errors"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reuseDev is a fakeDev that says whether its queues are done with freed
// memory (Reuser), and whose MemAlloc can fail until the cache is emptied.
type reuseDev struct {
	fakeDev
	busy          bool  // MayReuse's answer is !busy
	failUntilTrim error // MemAlloc's error while any block is cached
}

func (d *reuseDev) MayReuse() bool { return !d.busy }

func (d *reuseDev) MemAlloc(size, span int) (device.DevicePtr, int, error) {
	if d.failUntilTrim != nil && d.CacheBytes() > 0 {
		return 0, 0, d.failUntilTrim
	}
	return d.fakeDev.MemAlloc(size, span)
}

func newReuse(t *testing.T) *reuseDev {
	d := &reuseDev{fakeDev: fakeDev{live: map[int]bool{}}}
	c := Config{ID: "fake:0", Info: device.Info{MaxAlloc: 1 << 30}, Images: []device.ImageKind{"opencl-c"},
		CacheLimit: 1 << 20, CacheMax: 256 << 10}
	c.Space.Lo, c.Space.Hi = 1<<20, 1<<40
	d.Init(d, c)
	return d
}

// With synthetic addresses, a freed block is cached and serves a later
// allocation of its class, at the same address with the same handle, up
// to the class's whole size; the next allocation's addresses start past
// the class's size, so a reused block never overlaps it.
func TestCacheWithSyntheticAddresses(t *testing.T) {
	d := newReuse(t)
	a, err := d.Alloc(5000)
	require.NoError(t, err)
	b, err := d.Alloc(100)
	require.NoError(t, err)
	_, span := SizeClass(5000)
	assert.GreaterOrEqual(t, uint64(b.Ptr), uint64(a.Ptr)+uint64(span), "the next allocation starts past a's class size %d", span)
	h, _, _, err := d.Lookup("copy", a.Ptr, 5000)
	require.NoError(t, err)
	require.NoError(t, d.Free(a.Ptr))
	assert.Equal(t, int64(span), d.CacheBytes(), "a is cached, its class's size")

	c, err := d.Alloc(span) // the class's largest size
	require.NoError(t, err)
	assert.Equal(t, a.Ptr, c.Ptr, "the cached block, at its address")
	h2, off, size, err := d.Lookup("copy", c.Ptr, span)
	require.NoError(t, err, "the whole class size is the new allocation's")
	assert.Equal(t, []int{h, 0, span}, []int{h2, off, size}, "same handle, the new size")
	assert.Zero(t, d.CacheBytes())
	_, _, _, err = d.Lookup("copy", b.Ptr, 100)
	assert.NoError(t, err, "b untouched")
	assert.Len(t, d.live, 2, "no MemAlloc for c")
}

// A block freed while the driver's queues may still use it (MayReuse
// false) waits: an allocation gets a fresh block until they are done.
func TestCacheWaitsForReuser(t *testing.T) {
	d := newReuse(t)
	a, err := d.Alloc(3000)
	require.NoError(t, err)
	d.busy = true
	require.NoError(t, d.Free(a.Ptr))
	b, err := d.Alloc(3000)
	require.NoError(t, err)
	assert.NotEqual(t, a.Ptr, b.Ptr, "busy queues: a fresh block")
	assert.Positive(t, d.CacheBytes(), "a still cached")
	d.busy = false
	c, err := d.Alloc(3000)
	require.NoError(t, err)
	assert.Equal(t, a.Ptr, c.Ptr, "idle queues: the cached block")
}

// An allocation that fails while blocks are cached empties the cache and
// tries once more.
func TestCacheTrimmedWhenMemoryRunsOut(t *testing.T) {
	d := newReuse(t)
	a, err := d.Alloc(200 << 10)
	require.NoError(t, err)
	require.NoError(t, d.Free(a.Ptr))
	require.Positive(t, d.CacheBytes())
	d.failUntilTrim = d.Errorf("alloc", device.CodeOutOfResources, "out of memory")
	d.busy = true // no reuse: the allocation must come from MemAlloc
	b, err := d.Alloc(300 << 10)
	require.NoError(t, err, "the cache emptied, the second try succeeds")
	assert.Zero(t, d.CacheBytes())
	assert.Len(t, d.live, 1, "a's block released, b's allocated")
	_, _, _, err = d.Lookup("copy", b.Ptr, 300<<10)
	assert.NoError(t, err)
	// With nothing cached the error is MemAlloc's.
	d.failUntilTrim = nil
	d.fail = errors.New("no memory at all")
	_, err = d.Alloc(10)
	assert.EqualError(t, err, "no memory at all")
}

// A block freed while the driver's queues were idle (the runtime syncs a
// construct's queue before it frees) serves a later allocation even when
// a queue has work in flight by then: no work enqueued before its free can
// still use it. A map of two arrays copies the first while it allocates
// the second, and the second must not get fresh memory for that.
func TestCacheBlockFreedIdleIsReusedWhileBusy(t *testing.T) {
	d := newReuse(t)
	a, err := d.Alloc(3000)
	require.NoError(t, err)
	b, err := d.Alloc(3000)
	require.NoError(t, err)
	require.NoError(t, d.Free(a.Ptr))
	require.NoError(t, d.Free(b.Ptr)) // both freed with the queues idle
	c, err := d.Alloc(3000)
	require.NoError(t, err)
	d.busy = true // a copy into c in flight
	e, err := d.Alloc(3000)
	require.NoError(t, err)
	assert.ElementsMatch(t, []device.DevicePtr{a.Ptr, b.Ptr}, []device.DevicePtr{c.Ptr, e.Ptr}, "both cached blocks reused")
	assert.Len(t, d.live, 2, "no MemAlloc")

	// A block freed while a queue is busy waits until the queues are idle.
	require.NoError(t, d.Free(e.Ptr))
	f, err := d.Alloc(3000)
	require.NoError(t, err)
	assert.NotEqual(t, e.Ptr, f.Ptr, "freed busy: a fresh block")
	d.busy = false
	g, err := d.Alloc(3000)
	require.NoError(t, err)
	assert.Equal(t, e.Ptr, g.Ptr, "idle now: the block freed busy")
}

// aliasDev is a fakeDev whose driver can alias host memory (HostAliaser).
type aliasDev struct {
	fakeDev
	freed []int // handles MemFree released
}

func (d *aliasDev) MemAlias(b []byte) (device.DevicePtr, int, bool, error) {
	if len(b) == 13 {
		return 0, 0, false, nil // the driver cannot use it in place
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	d.live[d.next] = true
	return 0, d.next, true, nil
}

func (d *aliasDev) MemFree(p device.DevicePtr, h int, size int) error {
	d.freed = append(d.freed, h)
	return d.fakeDev.MemFree(p, h, size)
}

// An alias is an allocation as any other in the table (Lookup, MemInUse,
// Free's checks), but never cached: its Free goes to MemFree. One the
// driver refuses, an empty one, one above MaxAlloc and any of a driver
// without MemAlias are refused with no error.
func TestAlias(t *testing.T) {
	d := &aliasDev{fakeDev: fakeDev{live: map[int]bool{}}}
	c := Config{ID: "fake:0", Info: device.Info{MaxAlloc: 4096}, Images: []device.ImageKind{"opencl-c"},
		CacheLimit: 1 << 20, CacheMax: 4096}
	c.Space.Lo, c.Space.Hi = 1<<20, 1<<40
	d.Init(d, c)
	host := make([]byte, 5000)
	b, ok, err := d.Alias(host[:100])
	require.NoError(t, err)
	require.True(t, ok)
	h, off, size, err := d.Lookup("launch", b.Ptr+10, 90)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 10, 100}, []int{h, off, size})
	n, allocs := d.MemInUse()
	assert.Equal(t, []int64{100, 1}, []int64{n, int64(allocs)})
	require.NoError(t, d.Free(b.Ptr))
	assert.Equal(t, []int{1}, d.freed, "released, not cached")
	assert.Zero(t, d.CacheBytes())
	assert.Error(t, d.Free(b.Ptr), "freed twice")
	for _, bad := range [][]byte{host[:0], host[:13], host[:4097]} {
		_, ok, err := d.Alias(bad)
		assert.NoError(t, err)
		assert.False(t, ok, "%d bytes", len(bad))
	}
	plain := &fakeDev{live: map[int]bool{}}
	plain.Init(plain, c)
	_, ok, err = plain.Alias(host[:100])
	assert.NoError(t, err)
	assert.False(t, ok, "a driver without MemAlias")
}
