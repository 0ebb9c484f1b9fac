// Package staging holds what the CUDA and OpenCL plugins share for copies
// between Go memory and a device through page-locked staging buffers: the
// pool of a device's buffers, and the host copy into and out of them.
package staging

import (
	"runtime"
	"sync"
)

// Pool is a device's staging buffers of type S: those free for the next
// copy, and a budget of how many may exist at once. The zero Pool has no
// budget; set Max first.
type Pool[S any] struct {
	Max int // buffers at most

	mu     sync.Mutex
	free   []S
	n      int // buffers made and not released
	made   int // buffers ever made
	closed bool
}

// Get returns up to k buffers: free ones first, then new ones from make
// while the budget allows and the pool is open, stopping at the first
// that make cannot provide (ok false). It may return none; the caller
// then copies directly. make runs with the pool locked.
func (p *Pool[S]) Get(k int, make func() (s S, ok bool)) []S {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []S
	for len(out) < k && len(p.free) > 0 {
		out = append(out, p.free[len(p.free)-1])
		p.free = p.free[:len(p.free)-1]
	}
	for len(out) < k && p.n < p.Max && !p.closed {
		s, ok := make()
		if !ok {
			break
		}
		p.n++
		p.made++
		out = append(out, s)
	}
	return out
}

// Put gives buffers back for later copies.
func (p *Pool[S]) Put(s []S) {
	p.mu.Lock()
	p.free = append(p.free, s...)
	p.mu.Unlock()
}

// Close closes the pool (Get makes no more buffers) and returns the free
// buffers for the caller to release; buffers still out are the callers'.
func (p *Pool[S]) Close() []S {
	p.mu.Lock()
	defer p.mu.Unlock()
	free := p.free
	p.free, p.closed = nil, true
	p.n -= len(free)
	return free
}

// Counts returns how many buffers exist now (made and not given back by
// Close) and how many were ever made.
func (p *Pool[S]) Counts() (live, made int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n, p.made
}

// ParallelCopy copies src to dst (same length) with up to 8 goroutines for
// large sizes: one core's memmove is slower than a PCIe link or a DMA
// engine.
func ParallelCopy(dst, src []byte) {
	const part = 1 << 20
	n := min(runtime.GOMAXPROCS(0), 8, len(src)/part)
	if n <= 1 {
		copy(dst, src)
		return
	}
	per := (len(src) + n - 1) / n
	var wg sync.WaitGroup
	for lo := per; lo < len(src); lo += per {
		hi := min(lo+per, len(src))
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	copy(dst[:per], src[:per])
	wg.Wait()
}
