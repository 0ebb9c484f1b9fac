//go:build cgo

package cuda

import (
	"errors"
	"runtime"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/internal/cu"
)

type slot struct {
	ptr  unsafe.Pointer // page-locked host memory from cuMemAllocHost
	buf  []byte         // the same memory
	ev   cu.Event       // recorded after the last DMA that used buf
	busy bool           // ev has been recorded
}

// wait blocks until the last DMA that used s has completed.
func (s *slot) wait(ctx cu.Context) error {
	if !s.busy {
		return nil
	}
	s.busy = false
	return cu.EventSynchronize(ctx, s.ev)
}

type stagingPool struct {
	mu     sync.Mutex
	free   []*slot
	n      int // slots made
	closed bool
}

// get returns up to k slots; none when the device's budget is used up by
// other queues' copies (the caller then copies directly).
func (p *stagingPool) get(g *gpu, k int) []*slot {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*slot
	for len(out) < k && len(p.free) > 0 {
		out = append(out, p.free[len(p.free)-1])
		p.free = p.free[:len(p.free)-1]
	}
	for len(out) < k && p.n < stagingMax && !p.closed {
		ptr, err := cu.MemAllocHost(g.ctx, stagingChunk)
		if err != nil {
			break
		}
		ev, err := cu.EventCreate(g.ctx, cu.EVENT_DISABLE_TIMING)
		if err != nil {
			cu.MemFreeHost(g.ctx, ptr)
			break
		}
		p.n++
		out = append(out, &slot{ptr: ptr, buf: unsafe.Slice((*byte)(ptr), stagingChunk), ev: ev})
	}
	return out
}

func (p *stagingPool) put(slots []*slot) {
	p.mu.Lock()
	p.free = append(p.free, slots...)
	p.mu.Unlock()
}

func (p *stagingPool) close(g *gpu) error {
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	p.n -= len(free)
	p.mu.Unlock()
	var errs []error
	for _, s := range free {
		errs = append(errs, s.wait(g.ctx), cu.MemFreeHost(g.ctx, s.ptr), cu.EventDestroy(g.ctx, s.ev))
	}
	if err := errors.Join(errs...); err != nil {
		return g.fail("close", err)
	}
	return nil
}

// parallelCopy copies src to dst (same length) with up to 8 goroutines for
// large sizes: one core's memmove is slower than the DMA engine.
func parallelCopy(dst, src []byte) {
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

// idle waits for the queue's stream after an event that would have marked
// the end of a copy through a staging buffer failed to record, so that the
// buffer, which goes back to the pool as not busy, is no longer used by the
// copy when another copy takes it. It returns err.
func (q *queue) idle(err error) error {
	cu.StreamSynchronize(q.g.ctx, q.s) // on failure the stream is broken: err says enough
	return err
}

// stagedIn copies src to dst through staging buffers; it returns when the
// last chunk's DMA is enqueued (src is no longer needed then).
func (q *queue) stagedIn(dst cu.DevicePtr, src []byte, slots []*slot) error {
	ctx := q.g.ctx
	chunk := chunkFor(len(src))
	for i, off := 0, 0; off < len(src); i, off = i+1, off+chunk {
		s := slots[i%len(slots)]
		n := min(chunk, len(src)-off)
		if err := s.wait(ctx); err != nil {
			return err
		}
		parallelCopy(s.buf[:n], src[off:off+n])
		if err := cu.MemcpyHtoDAsync(ctx, dst+cu.DevicePtr(off), s.ptr, n, q.s); err != nil {
			return err
		}
		if err := cu.EventRecord(ctx, s.ev, q.s); err != nil {
			return q.idle(err)
		}
		s.busy = true
	}
	return nil
}

// stagedOut copies src to dst through staging buffers, keeping up to
// len(slots) chunks in flight; it returns when dst holds the data.
func (q *queue) stagedOut(dst []byte, src cu.DevicePtr, slots []*slot) error {
	ctx := q.g.ctx
	chunk := chunkFor(len(dst))
	chunks := (len(dst) + chunk - 1) / chunk
	issue := func(i int) error {
		s := slots[i%len(slots)]
		off := i * chunk
		n := min(chunk, len(dst)-off)
		if err := s.wait(ctx); err != nil {
			return err
		}
		if err := cu.MemcpyDtoHAsync(ctx, s.ptr, src+cu.DevicePtr(off), n, q.s); err != nil {
			return err
		}
		if err := cu.EventRecord(ctx, s.ev, q.s); err != nil {
			return q.idle(err)
		}
		s.busy = true
		return nil
	}
	for i := 0; i < min(len(slots), chunks); i++ {
		if err := issue(i); err != nil {
			return err
		}
	}
	for i := 0; i < chunks; i++ {
		s := slots[i%len(slots)]
		off := i * chunk
		n := min(chunk, len(dst)-off)
		if err := s.wait(ctx); err != nil {
			return err
		}
		parallelCopy(dst[off:off+n], s.buf[:n])
		if i+len(slots) < chunks {
			if err := issue(i + len(slots)); err != nil {
				return err
			}
		}
	}
	return nil
}
