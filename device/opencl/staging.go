//go:build cgo

package opencl

import (
	"errors"
	"strings"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/device"
	pinned "github.com/gompt/gompt/device/internal/staging"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// Copies of Go memory through pinned staging buffers, as the CUDA plugin
// does (device/cuda/staging.go).
//
// clEnqueueWriteBuffer and clEnqueueReadBuffer from pageable memory make a
// GPU driver stage the data itself, well below the bus's bandwidth.
// NVIDIA's documented way to pinned host memory in OpenCL is a buffer made
// with CL_MEM_ALLOC_HOST_PTR and mapped: copies from or to the mapped
// pointer go at DMA speed. So from stagingMin bytes up, where staging is
// on, a copy is pipelined through a ring of such buffers of stagingChunk
// bytes, mapped once when made: the host copies chunk i+1 into one buffer
// (with several goroutines for a large chunk) while the device moves chunk
// i from another. A staged CopyIn returns when its last chunk is enqueued
// (the Go slice is no longer needed then); a staged CopyOut returns when
// the Go slice holds the data.
//
// Staging is on by default for devices that are not CPUs and do not share
// the host's memory (CL_DEVICE_HOST_UNIFIED_MEMORY false): GPUs. On a CPU
// device (POCL) a buffer is host memory already and a copy is one memcpy;
// staging adds a second, and measured slower there (see the README's
// opencl staging figures). GOMPT_OPENCL_STAGING=on or off overrides the
// choice for every device. A copy made while the queue profiles goes
// directly, so that its timing is its one command's.
const (
	stagingMin   = 256 << 10
	stagingChunk = 8 << 20
	stagingDepth = 3  // buffers per copy: one filling, up to two in flight
	stagingMax   = 24 // buffers per device at most (192 MiB pinned)
)

// stagingMode is the staging choice of stagingEnv: "on", "off", or "auto".
var stagingMode = sync.OnceValue(func() string { return autoChoice(stagingEnv, "on", "off") })

// autoChoice reads the plugin setting name: "auto" (also when unset) or
// one of the two choices a and b; a bad value gives one warning on stderr
// (device.Getenv, once) and "auto".
func autoChoice(name, a, b string) string {
	switch v := strings.TrimSpace(device.Getenv(name)); v {
	case a, b:
		return v
	}
	return "auto"
}

// useStaging reports whether a device of type typ stages large copies.
func useStaging(typ string, unified bool) bool {
	return choose(stagingMode(), "on", "off", typ != "cpu" && !unified)
}

// choose is a setting's answer: true for mode yes, false for no, and
// auto's when it is "auto".
func choose(mode, yes, no string, auto bool) bool {
	switch mode {
	case yes:
		return true
	case no:
		return false
	}
	return auto
}

// slot is one staging buffer.
type slot struct {
	m   cl.Mem
	ptr unsafe.Pointer // its mapping, for the buffer's life
	buf []byte         // the same memory
	ev  cl.Event       // the last copy that used buf, 0 once waited
}

// wait blocks until the last copy that used s has finished and returns
// its error if that copy is the caller's (own); another copy's error is
// that copy's to report.
func (s *slot) wait(d *clDevice, own bool) error {
	if s.ev == 0 {
		return nil
	}
	ev := s.ev
	s.ev = 0
	defer cl.ReleaseEvent(ev)
	if err := d.waitEvent(0, ev); err != nil {
		return err
	}
	st, err := cl.GetEventStatus(ev)
	if err != nil {
		return err
	}
	if st < 0 && own {
		return &cl.Error{Func: "staged copy", Status: st}
	}
	return nil
}

// stagingPool is a device's staging buffers (Max is stagingMax).
type stagingPool = pinned.Pool[*slot]

// newSlot makes one staging buffer of d, mapped for its life.
func (d *clDevice) newSlot() (*slot, bool) {
	m, err := cl.CreateBuffer(d.ctx, cl.MEM_READ_WRITE|cl.MEM_ALLOC_HOST_PTR, stagingChunk)
	if err != nil {
		return nil, false
	}
	d.clock.mu.Lock() // the idle queue, against Close
	ptr, err := cl.EnqueueMapBuffer(d.ioq, m, cl.MAP_READ|cl.MAP_WRITE, 0, stagingChunk)
	d.clock.mu.Unlock()
	if err != nil {
		cl.ReleaseMemObject(m)
		return nil, false
	}
	return &slot{m: m, ptr: ptr, buf: unsafe.Slice((*byte)(ptr), stagingChunk)}, true
}

// closeStaging waits for the free slots' copies and releases them; called
// by the device's Close after its queues are released, before its idle
// queue is.
func (d *clDevice) closeStaging() error {
	free := d.pool.Close()
	var errs []error
	for _, s := range free {
		errs = append(errs, s.wait(d, false), cl.EnqueueUnmapMemObject(d.ioq, s.m, s.ptr))
	}
	if len(free) > 0 {
		errs = append(errs, cl.Finish(d.ioq))
	}
	for _, s := range free {
		errs = append(errs, cl.ReleaseMemObject(s.m))
	}
	return errors.Join(errs...)
}

// staging returns slots for a copy of n bytes on q, or none when the copy
// goes directly.
func (q *queue) staging(n int) []*slot {
	if n < stagingMin || !q.d.stage || q.Profiling() {
		return nil
	}
	return q.d.pool.Get(stagingDepth, q.d.newSlot)
}

// stagedIn copies src to m at off through slots; it returns when the last
// chunk's write is enqueued (src is no longer needed then).
func (q *queue) stagedIn(m cl.Mem, off uint64, src []byte, slots []*slot) error {
	for i, o := 0, 0; o < len(src); i, o = i+1, o+stagingChunk {
		s := slots[i%len(slots)]
		n := min(stagingChunk, len(src)-o)
		if err := s.wait(q.d, i >= len(slots)); err != nil {
			return err
		}
		pinned.ParallelCopy(s.buf[:n], src[o:o+n])
		var ev cl.Event
		if err := cl.EnqueueWriteBuffer(q.q, m, false, uintptr(off)+uintptr(o), uintptr(n), s.ptr, &ev); err != nil {
			return err
		}
		s.ev = ev
		q.enqueued()
		// Flushed at once: a slot's next user waits for its write,
		// perhaps from another queue, without flushing this one.
		if err := cl.Flush(q.q); err != nil {
			return err
		}
	}
	return nil
}

// stagedOut copies len(dst) bytes of m from off to dst through slots,
// keeping up to len(slots) chunks in flight; it returns when dst holds the
// data.
func (q *queue) stagedOut(dst []byte, m cl.Mem, off uint64, slots []*slot) error {
	chunks := (len(dst) + stagingChunk - 1) / stagingChunk
	issue := func(i int) error {
		s := slots[i%len(slots)]
		o := i * stagingChunk
		n := min(stagingChunk, len(dst)-o)
		if err := s.wait(q.d, i >= len(slots)); err != nil {
			return err
		}
		var ev cl.Event
		if err := cl.EnqueueReadBuffer(q.q, m, false, uintptr(off)+uintptr(o), uintptr(n), s.ptr, &ev); err != nil {
			return err
		}
		s.ev = ev
		q.enqueued()
		return cl.Flush(q.q)
	}
	for i := 0; i < min(len(slots), chunks); i++ {
		if err := issue(i); err != nil {
			return err
		}
	}
	for i := 0; i < chunks; i++ {
		s := slots[i%len(slots)]
		o := i * stagingChunk
		n := min(stagingChunk, len(dst)-o)
		if err := s.wait(q.d, true); err != nil {
			return err
		}
		pinned.ParallelCopy(dst[o:o+n], s.buf[:n])
		if i+len(slots) < chunks {
			if err := issue(i + len(slots)); err != nil {
				return err
			}
		}
	}
	return nil
}
