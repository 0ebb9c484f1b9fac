//go:build cgo

package cl

/*
#include "cl.h"

static uintptr_t CreateBuffer(uintptr_t c, cl_ulong flags, size_t size, void *host, cl_int *err) {
	return (uintptr_t)CALL(CreateBuffer, h (*)(h, cl_ulong, size_t, void*, cl_int*))((h)c, flags, size, host, err);
}
static uintptr_t CreateSubBuffer(uintptr_t m, cl_ulong flags, size_t origin, size_t size, cl_int *err) {
	size_t region[2] = {origin, size};
	return (uintptr_t)CALL(CreateSubBuffer, h (*)(h, cl_ulong, cl_uint, const void*, cl_int*))((h)m, flags, 0x1220, region, err);
}
static cl_int ReleaseMemObject(uintptr_t m) { return CALL(ReleaseMemObject, cl_int (*)(h))((h)m); }
static cl_int EnqueueReadBuffer(uintptr_t q, uintptr_t m, cl_uint blocking, size_t off, size_t size, void *p, uintptr_t *ev) {
	return CALL(EnqueueReadBuffer, cl_int (*)(h, h, cl_uint, size_t, size_t, void*, cl_uint, const h*, h*))((h)q, (h)m, blocking, off, size, p, 0, NULL, (h*)ev);
}
static cl_int EnqueueWriteBuffer(uintptr_t q, uintptr_t m, cl_uint blocking, size_t off, size_t size, void *p, uintptr_t *ev) {
	return CALL(EnqueueWriteBuffer, cl_int (*)(h, h, cl_uint, size_t, size_t, const void*, cl_uint, const h*, h*))((h)q, (h)m, blocking, off, size, p, 0, NULL, (h*)ev);
}
static cl_int EnqueueCopyBuffer(uintptr_t q, uintptr_t src, uintptr_t dst, size_t soff, size_t doff, size_t size, uintptr_t *ev) {
	return CALL(EnqueueCopyBuffer, cl_int (*)(h, h, h, size_t, size_t, size_t, cl_uint, const h*, h*))((h)q, (h)src, (h)dst, soff, doff, size, 0, NULL, (h*)ev);
}
static void *EnqueueMapBuffer(uintptr_t q, uintptr_t m, cl_ulong flags, size_t off, size_t size, cl_int *err) {
	return CALL(EnqueueMapBuffer, void *(*)(h, h, cl_uint, cl_ulong, size_t, size_t, cl_uint, const h*, h*, cl_int*))((h)q, (h)m, 1, flags, off, size, 0, NULL, NULL, err);
}
static cl_int EnqueueUnmapMemObject(uintptr_t q, uintptr_t m, void *p) {
	return CALL(EnqueueUnmapMemObject, cl_int (*)(h, h, void*, cl_uint, const h*, h*))((h)q, (h)m, p, 0, NULL, NULL);
}
*/
import "C"

import "unsafe"

// CreateBuffer creates a buffer of size bytes with no host pointer.
func CreateBuffer(c Context, flags uint64, size uintptr) (Mem, error) {
	var st C.cl_int
	m := C.CreateBuffer(C.uintptr_t(c), C.cl_ulong(flags), C.size_t(size), nil, &st)
	if err := chk("clCreateBuffer", st); err != nil {
		return 0, err
	}
	live.mems.Add(1)
	return Mem(m), nil
}

// CreateBufferHost creates a buffer of size bytes with host pointer host
// (flags MEM_USE_HOST_PTR or MEM_COPY_HOST_PTR). With MEM_USE_HOST_PTR the
// driver may use host itself as the buffer's memory for the buffer's life:
// Go memory must stay pinned until the buffer is released.
func CreateBufferHost(c Context, flags uint64, size uintptr, host unsafe.Pointer) (Mem, error) {
	var st C.cl_int
	m := C.CreateBuffer(C.uintptr_t(c), C.cl_ulong(flags), C.size_t(size), host, &st)
	if err := chk("clCreateBuffer", st); err != nil {
		return 0, err
	}
	live.mems.Add(1)
	return Mem(m), nil
}

// CreateSubBuffer creates a sub-buffer [origin, origin+size) of m. origin
// must be a multiple of the device's DEVICE_MEM_BASE_ADDR_ALIGN (in bytes).
func CreateSubBuffer(m Mem, flags uint64, origin, size uintptr) (Mem, error) {
	var st C.cl_int
	s := C.CreateSubBuffer(C.uintptr_t(m), C.cl_ulong(flags), C.size_t(origin), C.size_t(size), &st)
	if err := chk("clCreateSubBuffer", st); err != nil {
		return 0, err
	}
	live.mems.Add(1)
	return Mem(s), nil
}

// ReleaseMemObject releases m; the driver keeps it until the commands
// already enqueued on it complete.
func ReleaseMemObject(m Mem) error {
	err := chk("clReleaseMemObject", C.ReleaseMemObject(C.uintptr_t(m)))
	if err == nil {
		live.mems.Add(-1)
	}
	return err
}

func cbool(b bool) C.cl_uint {
	if b {
		return TRUE
	}
	return FALSE
}

// EnqueueReadBuffer reads size bytes at offset of m into host memory p.
// Non-blocking, p must stay valid (and pinned, if Go memory) until the
// command completes. With ev non-nil it stores the command's event, which
// the caller releases.
func EnqueueReadBuffer(q CommandQueue, m Mem, blocking bool, offset, size uintptr, p unsafe.Pointer, ev *Event) error {
	out, keep := evOut(ev)
	err := chk("clEnqueueReadBuffer", C.EnqueueReadBuffer(C.uintptr_t(q), C.uintptr_t(m), cbool(blocking), C.size_t(offset), C.size_t(size), p, out))
	evStore(ev, keep, err)
	return err
}

// EnqueueWriteBuffer writes size bytes from host memory p to m at offset;
// see EnqueueReadBuffer for the lifetime of p and ev.
func EnqueueWriteBuffer(q CommandQueue, m Mem, blocking bool, offset, size uintptr, p unsafe.Pointer, ev *Event) error {
	out, keep := evOut(ev)
	err := chk("clEnqueueWriteBuffer", C.EnqueueWriteBuffer(C.uintptr_t(q), C.uintptr_t(m), cbool(blocking), C.size_t(offset), C.size_t(size), p, out))
	evStore(ev, keep, err)
	return err
}

// EnqueueCopyBuffer copies size bytes from src at srcOff to dst at dstOff.
func EnqueueCopyBuffer(q CommandQueue, src, dst Mem, srcOff, dstOff, size uintptr, ev *Event) error {
	out, keep := evOut(ev)
	err := chk("clEnqueueCopyBuffer", C.EnqueueCopyBuffer(C.uintptr_t(q), C.uintptr_t(src), C.uintptr_t(dst), C.size_t(srcOff), C.size_t(dstOff), C.size_t(size), out))
	evStore(ev, keep, err)
	return err
}

// Flags of EnqueueMapBuffer.
const (
	MAP_READ                    = 1 << 0
	MAP_WRITE                   = 1 << 1
	MAP_WRITE_INVALIDATE_REGION = 1 << 2
)

// EnqueueMapBuffer maps size bytes of m from off into host memory,
// blocking until the mapping is ready, and returns the host address; it
// stays valid until EnqueueUnmapMemObject.
func EnqueueMapBuffer(q CommandQueue, m Mem, flags uint64, off, size uintptr) (unsafe.Pointer, error) {
	var st C.cl_int
	p := C.EnqueueMapBuffer(C.uintptr_t(q), C.uintptr_t(m), C.cl_ulong(flags), C.size_t(off), C.size_t(size), &st)
	if err := chk("clEnqueueMapBuffer", st); err != nil {
		return nil, err
	}
	return p, nil
}

// EnqueueUnmapMemObject enqueues the unmapping of p, a mapping of m.
func EnqueueUnmapMemObject(q CommandQueue, m Mem, p unsafe.Pointer) error {
	return chk("clEnqueueUnmapMemObject", C.EnqueueUnmapMemObject(C.uintptr_t(q), C.uintptr_t(m), p))
}
