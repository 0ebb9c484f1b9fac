//go:build cgo

package cl

/*
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef void *h; // every OpenCL handle is a pointer to an opaque struct

typedef struct { size_t size; uint64_t value; } gompt_cl_arg;

// Entry points, resolved once by gompt_cl_set; indices match fnNames in Go.
enum {
	F_GetPlatformIDs, F_GetPlatformInfo, F_GetDeviceIDs, F_GetDeviceInfo,
	F_CreateContext, F_ReleaseContext, F_CreateCommandQueue, F_ReleaseCommandQueue,
	F_CreateBuffer, F_CreateSubBuffer, F_ReleaseMemObject,
	F_EnqueueReadBuffer, F_EnqueueWriteBuffer, F_EnqueueCopyBuffer,
	F_CreateProgramWithSource, F_BuildProgram, F_GetProgramBuildInfo, F_GetProgramInfo, F_ReleaseProgram,
	F_CreateKernel, F_GetKernelInfo, F_GetKernelWorkGroupInfo, F_SetKernelArg, F_ReleaseKernel,
	F_EnqueueNDRangeKernel, F_Finish, F_Flush, F_EnqueueMarker, F_WaitForEvents,
	F_GetEventInfo, F_GetEventProfilingInfo, F_ReleaseEvent,
	// optional (newer than OpenCL 1.1)
	F_EnqueueMarkerWithWaitList, F_CreateCommandQueueWithProperties,
	F_GetDeviceAndHostTimer,
	F_SetEventCallback, F_CreateUserEvent, F_SetUserEventStatus,
	F_EnqueueMapBuffer, F_EnqueueUnmapMemObject,
	F_EnqueueBarrierWithWaitList,
	F_GetKernelArgInfo,
	F_N
};

static void *fn[F_N];

static void gompt_cl_set(int i, void *p) { fn[i] = p; }

#define CALL(name, type) ((type)fn[F_##name])

static cl_int GetPlatformIDs(cl_uint n, uintptr_t *ids, cl_uint *num) {
	return CALL(GetPlatformIDs, cl_int (*)(cl_uint, h*, cl_uint*))(n, (h*)ids, num);
}
static cl_int GetPlatformInfo(uintptr_t p, cl_uint param, size_t size, void *v, size_t *ret) {
	return CALL(GetPlatformInfo, cl_int (*)(h, cl_uint, size_t, void*, size_t*))((h)p, param, size, v, ret);
}
static cl_int GetDeviceIDs(uintptr_t p, cl_ulong type, cl_uint n, uintptr_t *ids, cl_uint *num) {
	return CALL(GetDeviceIDs, cl_int (*)(h, cl_ulong, cl_uint, h*, cl_uint*))((h)p, type, n, (h*)ids, num);
}
static cl_int GetDeviceInfo(uintptr_t d, cl_uint param, size_t size, void *v, size_t *ret) {
	return CALL(GetDeviceInfo, cl_int (*)(h, cl_uint, size_t, void*, size_t*))((h)d, param, size, v, ret);
}
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
static uintptr_t CreateProgramWithSource(uintptr_t c, const char *src, size_t len, cl_int *err) {
	return (uintptr_t)CALL(CreateProgramWithSource, h (*)(h, cl_uint, const char**, const size_t*, cl_int*))((h)c, 1, &src, &len, err);
}
static cl_int BuildProgram(uintptr_t p, uintptr_t d, const char *opts) {
	h dev = (h)d;
	return CALL(BuildProgram, cl_int (*)(h, cl_uint, const h*, const char*, void*, void*))((h)p, 1, &dev, opts, NULL, NULL);
}
static cl_int GetProgramBuildInfo(uintptr_t p, uintptr_t d, cl_uint param, size_t size, void *v, size_t *ret) {
	return CALL(GetProgramBuildInfo, cl_int (*)(h, h, cl_uint, size_t, void*, size_t*))((h)p, (h)d, param, size, v, ret);
}
static cl_int GetProgramInfo(uintptr_t p, cl_uint param, size_t size, void *v, size_t *ret) {
	return CALL(GetProgramInfo, cl_int (*)(h, cl_uint, size_t, void*, size_t*))((h)p, param, size, v, ret);
}
static cl_int ReleaseProgram(uintptr_t p) { return CALL(ReleaseProgram, cl_int (*)(h))((h)p); }
static uintptr_t CreateKernel(uintptr_t p, const char *name, cl_int *err) {
	return (uintptr_t)CALL(CreateKernel, h (*)(h, const char*, cl_int*))((h)p, name, err);
}
static cl_int GetKernelInfo(uintptr_t k, cl_uint param, size_t size, void *v, size_t *ret) {
	return CALL(GetKernelInfo, cl_int (*)(h, cl_uint, size_t, void*, size_t*))((h)k, param, size, v, ret);
}
static cl_int GetKernelWorkGroupInfo(uintptr_t k, uintptr_t d, cl_uint param, size_t size, void *v, size_t *ret) {
	return CALL(GetKernelWorkGroupInfo, cl_int (*)(h, h, cl_uint, size_t, void*, size_t*))((h)k, (h)d, param, size, v, ret);
}
static cl_int ReleaseKernel(uintptr_t k) { return CALL(ReleaseKernel, cl_int (*)(h))((h)k); }
static cl_int GetKernelArgInfo(uintptr_t k, cl_uint arg, cl_uint param, size_t size, void *v, size_t *ret) {
	return CALL(GetKernelArgInfo, cl_int (*)(h, cl_uint, cl_uint, size_t, void*, size_t*))((h)k, arg, param, size, v, ret);
}
static cl_int EnqueueNDRangeKernel(uintptr_t q, uintptr_t k, cl_uint dims, const size_t *global, const size_t *local, uintptr_t *ev) {
	return CALL(EnqueueNDRangeKernel, cl_int (*)(h, h, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint, const h*, h*))((h)q, (h)k, dims, NULL, global, local, 0, NULL, (h*)ev);
}
// EnqueueKernel sets every argument and enqueues in one C call. It returns
// the status in the low 32 bits and, for a failed clSetKernelArg, the
// argument's index + 1 in the high bits (0: the enqueue failed or nothing).
static int64_t EnqueueKernel(uintptr_t q, uintptr_t k, cl_uint nargs, const gompt_cl_arg *args,
		cl_uint dims, const size_t *global, const size_t *local, uintptr_t *ev) {
	cl_int (*set)(h, cl_uint, size_t, const void*) = CALL(SetKernelArg, cl_int (*)(h, cl_uint, size_t, const void*));
	for (cl_uint i = 0; i < nargs; i++) {
		cl_int st = set((h)k, i, args[i].size, &args[i].value);
		if (st != 0) {
			return ((int64_t)(i + 1) << 32) | (uint32_t)st;
		}
	}
	return (uint32_t)EnqueueNDRangeKernel(q, k, dims, global, local, ev);
}
static cl_int Finish(uintptr_t q) { return CALL(Finish, cl_int (*)(h))((h)q); }
static cl_int Flush(uintptr_t q) { return CALL(Flush, cl_int (*)(h))((h)q); }
static cl_int EnqueueMarker(uintptr_t q, uintptr_t *ev) {
	if (fn[F_EnqueueMarkerWithWaitList] != NULL) {
		return CALL(EnqueueMarkerWithWaitList, cl_int (*)(h, cl_uint, const h*, h*))((h)q, 0, NULL, (h*)ev);
	}
	return CALL(EnqueueMarker, cl_int (*)(h, h*))((h)q, (h*)ev);
}
static int HasBarrier(void) { return fn[F_EnqueueBarrierWithWaitList] != NULL; }
static cl_int EnqueueBarrierOn(uintptr_t q, uintptr_t e) {
	h ev = (h)e;
	return CALL(EnqueueBarrierWithWaitList, cl_int (*)(h, cl_uint, const h*, h*))((h)q, 1, &ev, NULL);
}
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
static cl_int GetDeviceAndHostTimer(uintptr_t d, cl_ulong *dev, cl_ulong *host) {
	return CALL(GetDeviceAndHostTimer, cl_int (*)(h, cl_ulong*, cl_ulong*))((h)d, dev, host);
}

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
static void *EnqueueMapBuffer(uintptr_t q, uintptr_t m, cl_ulong flags, size_t off, size_t size, cl_int *err) {
	return CALL(EnqueueMapBuffer, void *(*)(h, h, cl_uint, cl_ulong, size_t, size_t, cl_uint, const h*, h*, cl_int*))((h)q, (h)m, 1, flags, off, size, 0, NULL, NULL, err);
}
static cl_int EnqueueUnmapMemObject(uintptr_t q, uintptr_t m, void *p) {
	return CALL(EnqueueUnmapMemObject, cl_int (*)(h, h, void*, cl_uint, const h*, h*))((h)q, (h)m, p, 0, NULL, NULL);
}

static int64_t HostClock(int id) {
	struct timespec ts;
	if (clock_gettime((clockid_t)id, &ts) != 0) return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime/cgo"
	"strings"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/internal/dl"
)

// Available reports whether this build can call OpenCL (cgo is on).
const Available = true

// fnNames are the C names of the entry points, in the order of the C enum.
var fnNames = [...]string{
	"clGetPlatformIDs", "clGetPlatformInfo", "clGetDeviceIDs", "clGetDeviceInfo",
	"clCreateContext", "clReleaseContext", "clCreateCommandQueue", "clReleaseCommandQueue",
	"clCreateBuffer", "clCreateSubBuffer", "clReleaseMemObject",
	"clEnqueueReadBuffer", "clEnqueueWriteBuffer", "clEnqueueCopyBuffer",
	"clCreateProgramWithSource", "clBuildProgram", "clGetProgramBuildInfo", "clGetProgramInfo", "clReleaseProgram",
	"clCreateKernel", "clGetKernelInfo", "clGetKernelWorkGroupInfo", "clSetKernelArg", "clReleaseKernel",
	"clEnqueueNDRangeKernel", "clFinish", "clFlush", "clEnqueueMarker", "clWaitForEvents",
	"clGetEventInfo", "clGetEventProfilingInfo", "clReleaseEvent",
	// optional from here
	"clEnqueueMarkerWithWaitList", "clCreateCommandQueueWithProperties",
	"clGetDeviceAndHostTimer",
	"clSetEventCallback", "clCreateUserEvent", "clSetUserEventStatus",
	"clEnqueueMapBuffer", "clEnqueueUnmapMemObject",
	"clEnqueueBarrierWithWaitList",
	"clGetKernelArgInfo",
}

const firstOptional = C.F_EnqueueMarkerWithWaitList

func init() {
	if len(fnNames) != C.F_N {
		panic("cl: fnNames does not match the C entry-point table")
	}
}

var (
	initOnce sync.Once
	initErr  error
	libName  string
	has      = map[string]bool{}
)

// LibraryNames returns the names Init tries, in order: $GOMPT_OPENCL_LIBRARY
// alone when set, else libOpenCL.so.1 then libOpenCL.so.
func LibraryNames() []string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return []string{p}
	}
	return []string{"libOpenCL.so.1", "libOpenCL.so"}
}

// Init loads the OpenCL library and resolves its entry points, once per
// process; later calls return the first call's result. The error says which
// library could not be opened or which required entry point it lacks.
func Init() error {
	initOnce.Do(func() {
		lib, syms, err := open(LibraryNames())
		if err != nil {
			initErr = err
			return
		}
		libName = lib.Name
		for i, p := range syms {
			if p != nil {
				C.gompt_cl_set(C.int(i), p)
				has[fnNames[i]] = true
			}
		}
	})
	return initErr
}

// Library returns the name the library was opened under ("" before a
// successful Init).
func Library() string { return libName }

// Has reports whether the loaded library exports the named entry point
// ("clGetDeviceAndHostTimer"). An ICD loader exports every entry point of
// its version even when a platform lacks it, so callers also check the
// platform's version before calling an optional entry point.
func Has(name string) bool { return has[name] }

// Probe opens the first loadable library of names and checks that it has
// every required entry point, without installing it; it closes the library
// before returning. Tests use it to check the error for a bad library.
func Probe(names ...string) error {
	lib, _, err := open(names)
	if err != nil {
		return err
	}
	return lib.Close()
}

func open(names []string) (*dl.Lib, []unsafe.Pointer, error) {
	lib, err := dl.Open(names...)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load the OpenCL library (set %s to its path): %w", LibraryEnv, err)
	}
	syms := make([]unsafe.Pointer, len(fnNames))
	for i, n := range fnNames {
		p, err := lib.Sym(n)
		if err != nil {
			if i < firstOptional {
				lib.Close()
				return nil, nil, fmt.Errorf("%s is not an OpenCL library: it lacks %s: %w", lib.Name, n, err)
			}
			continue
		}
		syms[i] = p
	}
	return lib, syms, nil
}

// errNotInit is returned by calls made before a successful Init.
var errNotInit = errors.New("cl: OpenCL library not loaded (call Init first)")

func ready() error {
	if libName == "" {
		if initErr != nil {
			return initErr
		}
		return errNotInit
	}
	return nil
}

func chk(fn string, st C.cl_int) error { return check(fn, int32(st)) }

// info runs a clGet*Info query twice: once for the size, once for the value.
func info(fn string, q func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int) ([]byte, error) {
	var n C.size_t
	if err := chk(fn, q(0, nil, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, n)
	if err := chk(fn, q(n, unsafe.Pointer(&b[0]), nil)); err != nil {
		return nil, err
	}
	return b, nil
}

func cstring(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// GetPlatformIDs returns every platform the ICD loader found. No platform is
// an *Error with status CL_PLATFORM_NOT_FOUND_KHR, or an empty list.
func GetPlatformIDs() ([]PlatformID, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	var n C.cl_uint
	if err := chk("clGetPlatformIDs", C.GetPlatformIDs(0, nil, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	ids := make([]PlatformID, n)
	if err := chk("clGetPlatformIDs", C.GetPlatformIDs(n, (*C.uintptr_t)(unsafe.Pointer(&ids[0])), &n)); err != nil {
		return nil, err
	}
	return ids[:n], nil
}

// GetPlatformInfo returns the raw value of a platform query.
func GetPlatformInfo(p PlatformID, param uint32) ([]byte, error) {
	return info("clGetPlatformInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
		return C.GetPlatformInfo(C.uintptr_t(p), C.cl_uint(param), size, v, ret)
	})
}

// GetPlatformString returns a string-valued platform query (PLATFORM_NAME).
func GetPlatformString(p PlatformID, param uint32) (string, error) {
	b, err := GetPlatformInfo(p, param)
	return cstring(b), err
}

// GetDeviceIDs returns the platform's devices of the given type
// (DEVICE_TYPE_ALL). No device is an *Error with status
// CL_DEVICE_NOT_FOUND.
func GetDeviceIDs(p PlatformID, typ uint64) ([]DeviceID, error) {
	var n C.cl_uint
	if err := chk("clGetDeviceIDs", C.GetDeviceIDs(C.uintptr_t(p), C.cl_ulong(typ), 0, nil, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	ids := make([]DeviceID, n)
	if err := chk("clGetDeviceIDs", C.GetDeviceIDs(C.uintptr_t(p), C.cl_ulong(typ), n, (*C.uintptr_t)(unsafe.Pointer(&ids[0])), &n)); err != nil {
		return nil, err
	}
	return ids[:n], nil
}

// GetDeviceInfo returns the raw value of a device query.
func GetDeviceInfo(d DeviceID, param uint32) ([]byte, error) {
	return info("clGetDeviceInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
		return C.GetDeviceInfo(C.uintptr_t(d), C.cl_uint(param), size, v, ret)
	})
}

// GetDeviceString returns a string-valued device query (DEVICE_NAME).
func GetDeviceString(d DeviceID, param uint32) (string, error) {
	b, err := GetDeviceInfo(d, param)
	return cstring(b), err
}

// GetDeviceUint returns an integer-valued device query (cl_uint, cl_ulong,
// size_t or cl_bool), widened to uint64.
func GetDeviceUint(d DeviceID, param uint32) (uint64, error) {
	b, err := GetDeviceInfo(d, param)
	if err != nil {
		return 0, err
	}
	return leUint(b), nil
}

// GetDeviceSizes returns a size_t[]-valued device query
// (DEVICE_MAX_WORK_ITEM_SIZES).
func GetDeviceSizes(d DeviceID, param uint32) ([]uint64, error) {
	b, err := GetDeviceInfo(d, param)
	if err != nil {
		return nil, err
	}
	const w = int(unsafe.Sizeof(C.size_t(0)))
	out := make([]uint64, len(b)/w)
	for i := range out {
		out[i] = leUint(b[i*w : (i+1)*w])
	}
	return out, nil
}

func leUint(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

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

// CreateProgramWithSource creates a program from OpenCL C source.
func CreateProgramWithSource(c Context, src string) (Program, error) {
	if src == "" {
		return 0, &Error{Func: "clCreateProgramWithSource", Status: INVALID_VALUE}
	}
	cs := C.CString(src)
	defer C.free(unsafe.Pointer(cs))
	var st C.cl_int
	p := C.CreateProgramWithSource(C.uintptr_t(c), cs, C.size_t(len(src)), &st)
	if err := chk("clCreateProgramWithSource", st); err != nil {
		return 0, err
	}
	live.programs.Add(1)
	return Program(p), nil
}

// BuildProgram builds p for device d with the given options. A failure is
// CL_BUILD_PROGRAM_FAILURE; GetProgramBuildLog says why.
func BuildProgram(p Program, d DeviceID, options string) error {
	co := C.CString(options)
	defer C.free(unsafe.Pointer(co))
	return chk("clBuildProgram", C.BuildProgram(C.uintptr_t(p), C.uintptr_t(d), co))
}

// GetProgramBuildLog returns the whole build log of p for d.
func GetProgramBuildLog(p Program, d DeviceID) (string, error) {
	b, err := info("clGetProgramBuildInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
		return C.GetProgramBuildInfo(C.uintptr_t(p), C.uintptr_t(d), PROGRAM_BUILD_LOG, size, v, ret)
	})
	return cstring(b), err
}

// GetProgramKernelNames returns the kernels a built program defines
// (PROGRAM_KERNEL_NAMES, split at ';').
func GetProgramKernelNames(p Program) ([]string, error) {
	b, err := info("clGetProgramInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
		return C.GetProgramInfo(C.uintptr_t(p), PROGRAM_KERNEL_NAMES, size, v, ret)
	})
	if err != nil {
		return nil, err
	}
	s := cstring(b)
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, ";"), nil
}

// ReleaseProgram releases p.
func ReleaseProgram(p Program) error {
	err := chk("clReleaseProgram", C.ReleaseProgram(C.uintptr_t(p)))
	if err == nil {
		live.programs.Add(-1)
	}
	return err
}

// CreateKernel creates the kernel object of entry point name in built
// program p; a name p does not define is CL_INVALID_KERNEL_NAME.
func CreateKernel(p Program, name string) (Kernel, error) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var st C.cl_int
	k := C.CreateKernel(C.uintptr_t(p), cn, &st)
	if err := chk("clCreateKernel", st); err != nil {
		return 0, err
	}
	live.kernels.Add(1)
	return Kernel(k), nil
}

// BuildKernel builds OpenCL C source src for d in c and creates its
// kernel name: the program and kernel, which the caller releases, or
// neither when a step fails.
func BuildKernel(c Context, d DeviceID, src, name string) (Program, Kernel, error) {
	p, err := CreateProgramWithSource(c, src)
	if err != nil {
		return 0, 0, err
	}
	if err := BuildProgram(p, d, ""); err != nil {
		ReleaseProgram(p)
		return 0, 0, err
	}
	k, err := CreateKernel(p, name)
	if err != nil {
		ReleaseProgram(p)
		return 0, 0, err
	}
	return p, k, nil
}

// GetKernelUint returns an integer-valued kernel query (KERNEL_NUM_ARGS).
func GetKernelUint(k Kernel, param uint32) (uint64, error) {
	b, err := info("clGetKernelInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
		return C.GetKernelInfo(C.uintptr_t(k), C.cl_uint(param), size, v, ret)
	})
	return leUint(b), err
}

// GetKernelWorkGroupUint returns an integer-valued kernel work-group query
// for device d (KERNEL_WORK_GROUP_SIZE).
func GetKernelWorkGroupUint(k Kernel, d DeviceID, param uint32) (uint64, error) {
	b, err := info("clGetKernelWorkGroupInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
		return C.GetKernelWorkGroupInfo(C.uintptr_t(k), C.uintptr_t(d), C.cl_uint(param), size, v, ret)
	})
	return leUint(b), err
}

// ErrNoArgInfo is returned by GetKernelArgs when the library has no
// clGetKernelArgInfo (before OpenCL 1.2), or the program was built
// without -cl-kernel-arg-info (KERNEL_ARG_INFO_NOT_AVAILABLE).
var ErrNoArgInfo = errors.New("cl: kernel argument info not available")

// GetKernelArgs returns what the driver says of each of k's n arguments.
func GetKernelArgs(k Kernel, n int) ([]KernelArg, error) {
	if !has["clGetKernelArgInfo"] {
		return nil, ErrNoArgInfo
	}
	args := make([]KernelArg, n)
	for i := range args {
		get := func(param uint32) ([]byte, error) {
			return info("clGetKernelArgInfo", func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int {
				return C.GetKernelArgInfo(C.uintptr_t(k), C.cl_uint(i), C.cl_uint(param), size, v, ret)
			})
		}
		b, err := get(KERNEL_ARG_ADDRESS_QUALIFIER)
		if err != nil {
			if StatusOf(err) == KERNEL_ARG_INFO_NOT_AVAILABLE {
				return nil, ErrNoArgInfo
			}
			return nil, err
		}
		args[i].Address = uint32(leUint(b))
		if b, err = get(KERNEL_ARG_TYPE_NAME); err != nil {
			return nil, err
		}
		args[i].TypeName = cstring(b)
		if b, err = get(KERNEL_ARG_NAME); err == nil {
			args[i].Name = cstring(b)
		}
	}
	return args, nil
}

// ReleaseKernel releases k.
func ReleaseKernel(k Kernel) error {
	err := chk("clReleaseKernel", C.ReleaseKernel(C.uintptr_t(k)))
	if err == nil {
		live.kernels.Add(-1)
	}
	return err
}

// EnqueueNDRangeKernel enqueues k over dims dimensions of global work items
// in work-groups of local (nil lets the driver choose).
func EnqueueNDRangeKernel(q CommandQueue, k Kernel, dims int, global, local *[3]uintptr, ev *Event) error {
	var lp *C.size_t
	if local != nil {
		lp = (*C.size_t)(unsafe.Pointer(&local[0]))
	}
	out, keep := evOut(ev)
	err := chk("clEnqueueNDRangeKernel", C.EnqueueNDRangeKernel(C.uintptr_t(q), C.uintptr_t(k), C.cl_uint(dims),
		(*C.size_t)(unsafe.Pointer(&global[0])), lp, out))
	evStore(ev, keep, err)
	return err
}

// EnqueueKernel sets every argument of k (clSetKernelArg for each of args)
// and enqueues it (clEnqueueNDRangeKernel) in one C call. When an argument
// is refused, bad is its index; otherwise bad is -1. The caller serialises
// calls on one kernel object.
func EnqueueKernel(q CommandQueue, k Kernel, args []Arg, dims int, global, local *[3]uintptr, ev *Event) (bad int, err error) {
	var ap *C.gompt_cl_arg
	if len(args) > 0 {
		ap = (*C.gompt_cl_arg)(unsafe.Pointer(&args[0]))
	}
	var lp *C.size_t
	if local != nil {
		lp = (*C.size_t)(unsafe.Pointer(&local[0]))
	}
	out, keep := evOut(ev)
	r := int64(C.EnqueueKernel(C.uintptr_t(q), C.uintptr_t(k), C.cl_uint(len(args)), ap, C.cl_uint(dims),
		(*C.size_t)(unsafe.Pointer(&global[0])), lp, out))
	st, bad := int32(uint32(r)), int(r>>32)-1
	fn := "clEnqueueNDRangeKernel"
	if bad >= 0 {
		fn = "clSetKernelArg"
	}
	err = check(fn, st)
	evStore(ev, keep, err)
	return bad, err
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

// GetDeviceAndHostTimer returns a paired reading of d's timer and the host
// timer, in nanoseconds (OpenCL 2.1; the caller checks the platform's
// version and PLATFORM_HOST_TIMER_RESOLUTION > 0).
func GetDeviceAndHostTimer(d DeviceID) (dev, host uint64, err error) {
	if !has["clGetDeviceAndHostTimer"] {
		return 0, 0, &Error{Func: "clGetDeviceAndHostTimer", Status: INVALID_OPERATION}
	}
	var a, b C.cl_ulong
	err = chk("clGetDeviceAndHostTimer", C.GetDeviceAndHostTimer(C.uintptr_t(d), &a, &b))
	return uint64(a), uint64(b), err
}

// Host clocks a driver's profiling timer may run on (Linux clockid_t
// values), for HostClock.
const (
	CLOCK_REALTIME      = 0
	CLOCK_MONOTONIC     = 1
	CLOCK_MONOTONIC_RAW = 4
)

// HostClock reads the host clock id (clock_gettime) in nanoseconds, or -1
// if the host has no such clock. It is not an OpenCL call: CPU drivers such
// as POCL stamp profiling counters with a host clock, and the plugin reads
// that clock directly once it has checked that they agree. Safe for
// concurrent use.
func HostClock(id int) int64 { return int64(C.HostClock(C.int(id))) }

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
