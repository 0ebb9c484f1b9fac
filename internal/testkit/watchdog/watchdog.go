// Package watchdog turns a hang into a failure: tests of calls that used
// to wait forever (a finalize waiting for a construct that waits for it)
// run them under a watchdog that panics, naming the call, when they have
// not returned in time. A hung test cannot fail otherwise: the goroutine
// that would report it is the one that hangs.
package watchdog

import "time"

// Start panics with msg unless the returned func is called within d.
func Start(d time.Duration, msg string) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			panic(msg)
		}
	}()
	return func() { close(done) }
}
