package target

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// startOnce runs a start-up function once, as sync.Once does, except that
// a call made from inside that function on the same goroutine returns at
// once instead of deadlocking: a tool's initializer or device_initialize
// callback that calls back into the runtime (target.NumDevices, even a
// construct) gets the runtime as started so far. Calls from other
// goroutines wait for the function to finish. After it has, Do is one
// atomic load.
type startOnce struct {
	done    atomic.Bool
	mu      sync.Mutex
	cond    sync.Cond
	starter int64 // goroutine running f, 0 when none; under mu
}

// Do runs f unless it has run or is running.
func (o *startOnce) Do(f func()) {
	if o.done.Load() {
		return
	}
	o.doSlow(f)
}

func (o *startOnce) doSlow(f func()) {
	id := goid()
	o.mu.Lock()
	if o.cond.L == nil {
		o.cond.L = &o.mu
	}
	for !o.done.Load() {
		switch o.starter {
		case 0:
			o.starter = id
			o.mu.Unlock()
			defer func() {
				// Also when f panics: the others must not wait forever.
				o.mu.Lock()
				o.done.Store(true)
				o.starter = 0
				o.cond.Broadcast()
				o.mu.Unlock()
			}()
			f()
			return
		case id:
			o.mu.Unlock()
			return
		}
		o.cond.Wait()
	}
	o.mu.Unlock()
}

// goid returns the calling goroutine's id, read from its stack header
// ("goroutine 18 [running]:"). It costs about a microsecond; startOnce
// needs it only while a start-up is under way.
func goid() int64 {
	var buf [32]byte
	n := runtime.Stack(buf[:], false)
	var id int64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = 10*id + int64(c-'0')
	}
	return id
}
