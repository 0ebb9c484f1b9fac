package staging

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pool hands out free buffers before it makes new ones, never makes
// more than Max at once, stops at the first buffer it cannot make, makes
// none once closed, and Close returns exactly the free ones.
func TestPool(t *testing.T) {
	p := &Pool[int]{Max: 3}
	next := 0
	mk := func() (int, bool) { next++; return next, true }
	got := p.Get(2, mk)
	require.Len(t, got, 2, "Get(2) = %v, want [1 2]", got)
	require.EqualValues(t, 1, got[0], "Get(2) = %v, want [1 2]", got)
	require.EqualValues(t, 2, got[1], "Get(2) = %v, want [1 2]", got)
	got = p.Get(5, mk)
	require.Len(t, got, 1, "Get(5) over a budget of 3 = %v, want [3]", got)
	require.EqualValues(t, 3, got[0], "Get(5) over a budget of 3 = %v, want [3]", got)
	got = p.Get(1, mk)
	require.Empty(t, got, "Get with the budget used = %v, want none", got)
	p.Put([]int{2, 3})
	got = p.Get(1, mk)
	require.Len(t, got, 1, "Get after Put = %v, want the last given back, [3]", got)
	require.EqualValues(t, 3, got[0], "Get after Put = %v, want the last given back, [3]", got)
	live, made := p.Counts()
	require.EqualValues(t, 3, live, "Counts = %d, %d, want 3, 3", live, made)
	require.EqualValues(t, 3, made, "Counts = %d, %d, want 3, 3", live, made)
	free := p.Close()
	require.Len(t, free, 1, "Close = %v, want the one free buffer [2]", free)
	require.EqualValues(t, 2, free[0], "Close = %v, want the one free buffer [2]", free)
	got = p.Get(1, mk)
	require.Empty(t, got, "Get after Close = %v, want none", got)
	live, _ = p.Counts()
	require.EqualValues(t, 2, live, "live after Close = %d, want the 2 still out", live)

	q := &Pool[int]{Max: 10}
	calls := 0
	failAt2 := func() (int, bool) { calls++; return calls, calls < 2 }
	got = q.Get(5, failAt2)
	require.Len(t, got, 1, "Get stopping at a failed make = %v after %d calls, want [1] after 2", got, calls)
	require.EqualValues(t, 2, calls, "Get stopping at a failed make = %v after %d calls, want [1] after 2", got, calls)
}

// ParallelCopy copies every byte, for sizes around its split points, from
// several goroutines at once.
func TestParallelCopy(t *testing.T) {
	var wg sync.WaitGroup
	for _, n := range []int{0, 1, 1<<20 - 1, 1 << 20, 3<<20 + 7, 16<<20 + 1} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(i*7 + i>>20)
			}
			dst := make([]byte, n)
			ParallelCopy(dst, src)
			assert.True(t, bytes.Equal(dst, src), "ParallelCopy of %d bytes changed the data", n)
		}()
	}
	wg.Wait()
}
