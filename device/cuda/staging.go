//go:build cgo

package cuda

import (
	"errors"
	pinned "github.com/gompt/gompt/device/internal/staging"
	"unsafe"

	"github.com/gompt/gompt/device/cuda/internal/cu"
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

// stagingPool is a device's staging buffers (Max is stagingMax).
type stagingPool = pinned.Pool[*slot]

// newSlot makes one page-locked staging buffer of g, with the event that
// marks the end of its copies.
func (g *gpu) newSlot() (*slot, bool) {
	ptr, err := cu.MemAllocHost(g.ctx, stagingChunk)
	if err != nil {
		return nil, false
	}
	ev, err := cu.EventCreate(g.ctx, cu.EVENT_DISABLE_TIMING)
	if err != nil {
		cu.MemFreeHost(g.ctx, ptr)
		return nil, false
	}
	return &slot{ptr: ptr, buf: unsafe.Slice((*byte)(ptr), stagingChunk), ev: ev}, true
}

// closeStaging waits for the free slots' copies and frees them.
func (g *gpu) closeStaging() error {
	var errs []error
	for _, s := range g.staging.Close() {
		errs = append(errs, s.wait(g.ctx), cu.MemFreeHost(g.ctx, s.ptr), cu.EventDestroy(g.ctx, s.ev))
	}
	if err := errors.Join(errs...); err != nil {
		return g.fail("close", err)
	}
	return nil
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
		pinned.ParallelCopy(s.buf[:n], src[off:off+n])
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
		pinned.ParallelCopy(dst[off:off+n], s.buf[:n])
		if i+len(slots) < chunks {
			if err := issue(i + len(slots)); err != nil {
				return err
			}
		}
	}
	return nil
}
