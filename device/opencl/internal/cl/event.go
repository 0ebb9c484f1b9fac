//go:build cgo

package cl

/*
#include "cl.h"

static cl_int WaitForEvent(uintptr_t e) {
	h ev = (h)e;
	return CALL(WaitForEvents, cl_int (*)(cl_uint, const h*))(1, &ev);
}
static cl_int GetEventInfo(uintptr_t e, cl_uint param, size_t size, void *v, size_t *ret) {
	return CALL(GetEventInfo, cl_int (*)(h, cl_uint, size_t, void*, size_t*))((h)e, param, size, v, ret);
}
// Queries of one value return it with the status in a struct, by value:
// a Go variable passed by address would escape to the heap on every call.
typedef struct { cl_int err; cl_ulong v; } gompt_cl_u64;
static gompt_cl_u64 GetEventProfilingInfo(uintptr_t e, cl_uint param) {
	gompt_cl_u64 r = {0, 0};
	r.err = CALL(GetEventProfilingInfo, cl_int (*)(h, cl_uint, size_t, void*, size_t*))((h)e, param, sizeof r.v, &r.v, NULL);
	return r;
}
static gompt_cl_u64 GetEventStatus(uintptr_t e) {
	gompt_cl_u64 r = {0, 0};
	cl_int st = 0;
	r.err = CALL(GetEventInfo, cl_int (*)(h, cl_uint, size_t, void*, size_t*))((h)e, 0x11D3, sizeof st, &st, NULL); // CL_EVENT_COMMAND_EXECUTION_STATUS
	r.v = (cl_ulong)(int64_t)st;
	return r;
}
static cl_int ReleaseEvent(uintptr_t e) { return CALL(ReleaseEvent, cl_int (*)(h))((h)e); }

// gompt_cl_event_cb is the clSetEventCallback callback (callback.c): it
// hands the event's status to the Go function behind user.
extern void gompt_cl_event_cb(void *ev, int32_t status, void *user);
static cl_int SetEventCallback(uintptr_t e, uintptr_t user) {
	return CALL(SetEventCallback, cl_int (*)(h, cl_int, void (*)(void*, int32_t, void*), void*))((h)e, 0, gompt_cl_event_cb, (void*)user); // CL_COMPLETE
}
static uintptr_t CreateUserEvent(uintptr_t c, cl_int *err) {
	return (uintptr_t)CALL(CreateUserEvent, h (*)(h, cl_int*))((h)c, err);
}
static cl_int SetUserEventStatus(uintptr_t e, cl_int st) {
	return CALL(SetUserEventStatus, cl_int (*)(h, cl_int))((h)e, st);
}
*/
import "C"

import "runtime/cgo"

func evOut(ev *Event) (*C.uintptr_t, *C.uintptr_t) {
	if ev == nil {
		return nil, nil
	}
	p := new(C.uintptr_t)
	return p, p
}

func evStore(ev *Event, p *C.uintptr_t, err error) {
	if ev != nil && err == nil {
		*ev = Event(*p)
		live.events.Add(1)
	}
}

// WaitForEvents blocks until ev has completed. An event whose command
// failed gives CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
func WaitForEvents(ev Event) error {
	return chk("clWaitForEvents", C.WaitForEvent(C.uintptr_t(ev)))
}

// GetEventStatus returns CL_EVENT_COMMAND_EXECUTION_STATUS: COMPLETE,
// RUNNING, SUBMITTED, QUEUED, or a negative error status.
func GetEventStatus(ev Event) (int32, error) {
	r := C.GetEventStatus(C.uintptr_t(ev))
	return int32(int64(r.v)), chk("clGetEventInfo", r.err)
}

// GetEventProfilingInfo returns a profiling counter of ev in device
// nanoseconds (PROFILING_COMMAND_END). The queue must have profiling on.
func GetEventProfilingInfo(ev Event, param uint32) (uint64, error) {
	r := C.GetEventProfilingInfo(C.uintptr_t(ev), C.cl_uint(param))
	return uint64(r.v), chk("clGetEventProfilingInfo", r.err)
}

// ReleaseEvent releases ev.
func ReleaseEvent(ev Event) error {
	err := chk("clReleaseEvent", C.ReleaseEvent(C.uintptr_t(ev)))
	if err == nil {
		live.events.Add(-1)
	}
	return err
}

// OnComplete arranges for fn to be called once with ev's final status
// (COMPLETE, or a negative error status) when its command finishes
// (clSetEventCallback). fn runs on a thread of the driver and must not
// block or call OpenCL. The command must be flushed to the device for it
// ever to finish.
func OnComplete(ev Event, fn func(status int32)) error {
	if !has["clSetEventCallback"] {
		return &Error{Func: "clSetEventCallback", Status: INVALID_OPERATION}
	}
	h := cgo.NewHandle(fn)
	if err := chk("clSetEventCallback", C.SetEventCallback(C.uintptr_t(ev), C.uintptr_t(h))); err != nil {
		h.Delete()
		return err
	}
	return nil
}

// CreateUserEvent returns a user event of c (status SUBMITTED until
// SetUserEventStatus), which the caller releases.
func CreateUserEvent(c Context) (Event, error) {
	if !has["clCreateUserEvent"] {
		return 0, &Error{Func: "clCreateUserEvent", Status: INVALID_OPERATION}
	}
	var st C.cl_int
	e := C.CreateUserEvent(C.uintptr_t(c), &st)
	if err := chk("clCreateUserEvent", st); err != nil {
		return 0, err
	}
	live.events.Add(1)
	return Event(e), nil
}

// SetUserEventStatus completes user event ev with status: COMPLETE, or a
// negative error status.
func SetUserEventStatus(ev Event, status int32) error {
	return chk("clSetUserEventStatus", C.SetUserEventStatus(C.uintptr_t(ev), C.cl_int(status)))
}
