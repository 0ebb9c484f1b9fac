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
