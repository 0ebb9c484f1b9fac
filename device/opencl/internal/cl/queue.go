//go:build cgo

package cl

/*
#include "cl.h"

static uintptr_t CreateContext(uintptr_t platform, uintptr_t dev, cl_int *err) {
	intptr_t props[3] = {0x1084, (intptr_t)platform, 0}; // CL_CONTEXT_PLATFORM
	h d = (h)dev;
	return (uintptr_t)CALL(CreateContext, h (*)(const intptr_t*, cl_uint, const h*, void*, void*, cl_int*))(props, 1, &d, NULL, NULL, err);
}
static cl_int ReleaseContext(uintptr_t c) { return CALL(ReleaseContext, cl_int (*)(h))((h)c); }
static uintptr_t CreateCommandQueue(uintptr_t c, uintptr_t d, cl_ulong props, cl_int *err) {
	return (uintptr_t)CALL(CreateCommandQueue, h (*)(h, h, cl_ulong, cl_int*))((h)c, (h)d, props, err);
}
static uintptr_t CreateCommandQueueWithProperties(uintptr_t c, uintptr_t d, cl_ulong props, cl_int *err) {
	cl_ulong p[3] = {0x1093, props, 0}; // CL_QUEUE_PROPERTIES
	return (uintptr_t)CALL(CreateCommandQueueWithProperties, h (*)(h, h, const cl_ulong*, cl_int*))((h)c, (h)d, p, err);
}
static cl_int ReleaseCommandQueue(uintptr_t q) { return CALL(ReleaseCommandQueue, cl_int (*)(h))((h)q); }
static cl_int Finish(uintptr_t q) { return CALL(Finish, cl_int (*)(h))((h)q); }
static cl_int Flush(uintptr_t q) { return CALL(Flush, cl_int (*)(h))((h)q); }
static cl_int EnqueueMarker(uintptr_t q, uintptr_t *ev) {
	if (gompt_cl_fn[F_EnqueueMarkerWithWaitList] != NULL) {
		return CALL(EnqueueMarkerWithWaitList, cl_int (*)(h, cl_uint, const h*, h*))((h)q, 0, NULL, (h*)ev);
	}
	return CALL(EnqueueMarker, cl_int (*)(h, h*))((h)q, (h*)ev);
}
static int HasBarrier(void) { return gompt_cl_fn[F_EnqueueBarrierWithWaitList] != NULL; }
static cl_int EnqueueBarrierOn(uintptr_t q, uintptr_t e) {
	h ev = (h)e;
	return CALL(EnqueueBarrierWithWaitList, cl_int (*)(h, cl_uint, const h*, h*))((h)q, 1, &ev, NULL);
}
*/
import "C"

// CreateContext creates a context holding the one device d of platform p.
func CreateContext(p PlatformID, d DeviceID) (Context, error) {
	var st C.cl_int
	c := C.CreateContext(C.uintptr_t(p), C.uintptr_t(d), &st)
	if err := chk("clCreateContext", st); err != nil {
		return 0, err
	}
	live.contexts.Add(1)
	return Context(c), nil
}

// ReleaseContext releases c.
func ReleaseContext(c Context) error {
	err := chk("clReleaseContext", C.ReleaseContext(C.uintptr_t(c)))
	if err == nil {
		live.contexts.Add(-1)
	}
	return err
}

// CreateCommandQueue creates an in-order queue with the given properties
// (QUEUE_PROFILING_ENABLE) through the OpenCL 1.x entry point.
func CreateCommandQueue(c Context, d DeviceID, props uint64) (CommandQueue, error) {
	var st C.cl_int
	q := C.CreateCommandQueue(C.uintptr_t(c), C.uintptr_t(d), C.cl_ulong(props), &st)
	if err := chk("clCreateCommandQueue", st); err != nil {
		return 0, err
	}
	live.queues.Add(1)
	return CommandQueue(q), nil
}

// CreateCommandQueueWithProperties creates a queue through the OpenCL 2.0
// entry point, with CL_QUEUE_PROPERTIES set to props. The caller checks the
// platform is 2.0 or newer.
func CreateCommandQueueWithProperties(c Context, d DeviceID, props uint64) (CommandQueue, error) {
	if !has["clCreateCommandQueueWithProperties"] {
		return 0, &Error{Func: "clCreateCommandQueueWithProperties", Status: INVALID_OPERATION}
	}
	var st C.cl_int
	q := C.CreateCommandQueueWithProperties(C.uintptr_t(c), C.uintptr_t(d), C.cl_ulong(props), &st)
	if err := chk("clCreateCommandQueueWithProperties", st); err != nil {
		return 0, err
	}
	live.queues.Add(1)
	return CommandQueue(q), nil
}

// ReleaseCommandQueue releases q (the driver finishes its work first).
func ReleaseCommandQueue(q CommandQueue) error {
	err := chk("clReleaseCommandQueue", C.ReleaseCommandQueue(C.uintptr_t(q)))
	if err == nil {
		live.queues.Add(-1)
	}
	return err
}

// Finish blocks until every command of q has completed.
func Finish(q CommandQueue) error { return chk("clFinish", C.Finish(C.uintptr_t(q))) }

// Flush submits every command of q to the device.
func Flush(q CommandQueue) error { return chk("clFlush", C.Flush(C.uintptr_t(q))) }

// EnqueueMarkerWithWaitList enqueues a marker that completes when every
// command before it has (clEnqueueMarker on OpenCL 1.1 libraries) and
// returns its event, which the caller releases.
func EnqueueMarkerWithWaitList(q CommandQueue) (Event, error) {
	var e C.uintptr_t
	if err := chk("clEnqueueMarkerWithWaitList", C.EnqueueMarker(C.uintptr_t(q), &e)); err != nil {
		return 0, err
	}
	live.events.Add(1)
	return Event(e), nil
}

// EnqueueBarrierWithWaitList makes q's later commands wait for ev, an
// event of the same context (clEnqueueBarrierWithWaitList, OpenCL 1.2).
// It reports false, enqueuing nothing, where the library lacks the entry
// point.
func EnqueueBarrierWithWaitList(q CommandQueue, ev Event) (bool, error) {
	if C.HasBarrier() == 0 {
		return false, nil
	}
	if err := chk("clEnqueueBarrierWithWaitList", C.EnqueueBarrierOn(C.uintptr_t(q), C.uintptr_t(ev))); err != nil {
		return false, err
	}
	return true, nil
}
