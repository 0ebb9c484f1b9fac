package target

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startOnce: other goroutines wait for the start-up to finish, a call from
// inside it returns at once, and a start-up that panics still lets the
// waiters go.
func TestStartOnce(t *testing.T) {
	var o startOnce
	var runs, inner atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	go o.Do(func() {
		runs.Add(1)
		o.Do(func() { inner.Add(1) }) // re-entrant: returns at once
		close(started)
		<-release
	})
	<-started
	var wg sync.WaitGroup
	var after atomic.Int32
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.Do(func() { runs.Add(1) })
			after.Add(1)
		}()
	}
	require.Zero(t, after.Load(), "callers returned before the start-up finished")
	close(release)
	wg.Wait()
	require.Equal(t, int32(1), runs.Load(), "runs")
	require.Zero(t, inner.Load(), "inner runs")
	require.Equal(t, int32(4), after.Load(), "callers returned")

	var p startOnce
	func() {
		defer func() { recover() }()
		p.Do(func() { panic("start-up failed") })
	}()
	done := make(chan struct{})
	go func() { p.Do(func() {}); close(done) }()
	<-done
	assert.Positive(t, goid(), "goid()")
}

// goid tells goroutines apart, whatever digits their ids have: startOnce
// takes a caller whose goid is the starter's for the starter itself, and
// one whose goid is 0 for no starter at all. Many goroutines alive at
// once have ids with every digit in every place.
func TestGoidTellsGoroutinesApart(t *testing.T) {
	const n = 1200
	ids := make([]int64, n)
	var read, wg sync.WaitGroup
	hold := make(chan struct{})
	for i := range n {
		read.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = goid()
			read.Done()
			<-hold // alive until every id is read, so none is reused
		}()
	}
	read.Wait()
	close(hold)
	wg.Wait()
	seen := map[int64]int{}
	for i, id := range ids {
		if j, dup := seen[id]; dup {
			require.Failf(t, "two goroutines alive at once have one goid", "goroutines %d and %d: goid %d", j, i, id)
		}
		seen[id] = i
	}
}
