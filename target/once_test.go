package target

import (
	"sync"
	"sync/atomic"
	"testing"
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
	if after.Load() != 0 {
		t.Fatal("a caller returned before the start-up finished")
	}
	close(release)
	wg.Wait()
	if runs.Load() != 1 || inner.Load() != 0 || after.Load() != 4 {
		t.Fatalf("runs %d, inner %d, callers returned %d; want 1, 0, 4", runs.Load(), inner.Load(), after.Load())
	}

	var p startOnce
	func() {
		defer func() { recover() }()
		p.Do(func() { panic("start-up failed") })
	}()
	done := make(chan struct{})
	go func() { p.Do(func() {}); close(done) }()
	<-done
	if goid() <= 0 {
		t.Fatalf("goid() = %d", goid())
	}
}
