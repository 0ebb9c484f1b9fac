package host

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A large allocation makes its backing without the device's lock: while
// one is still making its 256 MiB (held here in the middle, by the hook),
// other allocations, frees and resolves on the same device go on. At
// 069ff17 the backing was made (and zeroed by Go) under the lock, so a
// 256 MiB map(alloc) stalled every construct on the device.
func TestLargeAllocDoesNotHoldTheDevice(t *testing.T) {
	d := newDeviceOf(0, 1, newBudget(1<<30, "test")) // the only device: room for 256 MiB on a 32-bit host too
	inside, release := make(chan struct{}), make(chan struct{})
	backingHook = func(need int) {
		if need >= 64<<20 {
			close(inside)
			<-release
		}
	}
	t.Cleanup(func() { backingHook = nil })
	big := make(chan error, 1)
	go func() {
		b, err := d.Alloc(256 << 20)
		if err == nil {
			err = d.Free(b.Ptr)
		}
		big <- err
	}()
	select {
	case <-inside:
	case err := <-big: // refused before it made any backing (a device too small for it)
		require.NoError(t, err, "the large allocation")
		t.Fatal("the large allocation returned without making its backing")
	case <-time.After(20 * time.Second):
		t.Fatal("the large allocation never began making its backing")
	}
	small := make(chan error, 1)
	go func() {
		for range 100 {
			b, err := d.Alloc(4096)
			if err != nil {
				small <- err
				return
			}
			if _, err := d.Resolve(b.Ptr, 4096); err != nil {
				small <- err
				return
			}
			if err := d.Free(b.Ptr); err != nil {
				small <- err
				return
			}
		}
		small <- nil
	}()
	select {
	case err := <-small:
		require.NoError(t, err, "small allocations while a large one makes its backing")
	case <-time.After(20 * time.Second):
		close(release)
		t.Fatal("small allocations did not go on while a large one was making its backing (held the device's lock)")
	}
	close(release)
	require.NoError(t, <-big, "the large allocation")
	b, n := d.MemInUse()
	assert.Equal(t, int64(0), b, "bytes in use at the end")
	assert.Equal(t, 0, n, "allocations in use at the end")
}

// rss returns the process's resident memory in bytes (Linux).
func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	require.GreaterOrEqual(t, len(f), 2, "statm: %q", b)
	pages, err := strconv.ParseInt(f[1], 10, 64)
	require.NoError(t, err)
	return pages * int64(os.Getpagesize())
}

// A large block, freed, goes back to the operating system at once, and
// the budget with it; allocated again it is usable in full. At 069ff17 its
// Go memory stayed with the process after the free.
func TestLargeFreeReturnsMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/statm")
	}
	const size = 256 << 20
	d := newDeviceOf(0, 1, newBudget(1<<30, "test")) // the only device: room for 256 MiB on a 32-bit host too
	before := rss(t)
	for round := range 2 {
		b, err := d.Alloc(size)
		require.NoError(t, err)
		mem, err := d.Resolve(b.Ptr, size)
		require.NoError(t, err)
		for i := 0; i < size; i += 4096 {
			mem[i] = byte(i>>12) | 1
		}
		assert.Equal(t, byte(1), mem[0], "round %d: first byte written", round)
		held := rss(t)
		assert.Greater(t, held-before, int64(size*3/4), "round %d: resident memory with the block touched", round)
		taken, _ := d.shared.state()
		assert.GreaterOrEqual(t, taken, int64(size), "round %d: the budget counts the block", round)
		require.NoError(t, d.Free(b.Ptr))
		after := rss(t)
		assert.Less(t, after-before, int64(size/4), "round %d: resident memory after the free (before %d, touched %d, after %d)", round, before, held, after)
		taken, _ = d.shared.state()
		assert.Less(t, taken, int64(size), "round %d: the budget after the free", round)
	}
}
