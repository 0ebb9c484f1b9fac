//go:build cgo

package cu

/*
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct { unsigned char bytes[16]; } CUuuid;

// Order matches symbols in cu.go.
enum {
	F_cuInit, F_cuDriverGetVersion, F_cuGetErrorString,
	F_cuDeviceGetCount, F_cuDeviceGet, F_cuDeviceGetName, F_cuDeviceGetUuid,
	F_cuDeviceGetAttribute, F_cuDeviceTotalMem,
	F_cuDevicePrimaryCtxRetain, F_cuDevicePrimaryCtxRelease, F_cuCtxSetCurrent,
	F_cuDevicePrimaryCtxGetState, F_cuDevicePrimaryCtxSetFlags,
	F_cuMemGetInfo, F_cuMemAlloc, F_cuMemFree, F_cuMemAllocHost, F_cuMemFreeHost,
	F_cuMemcpyHtoD, F_cuMemcpyDtoH, F_cuMemcpyHtoDAsync, F_cuMemcpyDtoHAsync,
	F_cuMemcpyDtoDAsync, F_cuMemcpyPeerAsync,
	F_cuStreamCreate, F_cuStreamDestroy, F_cuStreamSynchronize, F_cuStreamQuery,
	F_cuEventCreate, F_cuEventRecord, F_cuEventSynchronize, F_cuEventQuery,
	F_cuEventElapsedTime, F_cuEventDestroy,
	F_cuModuleLoadDataEx, F_cuModuleGetFunction, F_cuModuleUnload,
	F_cuFuncGetAttribute, F_cuLaunchKernel,
	F_cuStreamWaitEvent,
	F_COUNT
};

static void *fn[F_COUNT];

static void gompt_cu_set(int i, void *p) { fn[i] = p; }

#define FN(name, ...) ((CUresult (*)(__VA_ARGS__))fn[F_##name])

static CUresult setctx(CUcontext c) { return FN(cuCtxSetCurrent, CUcontext)(c); }

static CUresult w_init(unsigned flags) { return FN(cuInit, unsigned)(flags); }
static CUresult w_driverGetVersion(int *v) { return FN(cuDriverGetVersion, int *)(v); }
static CUresult w_getErrorString(CUresult r, const char **s) { return FN(cuGetErrorString, CUresult, const char **)(r, s); }
static CUresult w_deviceGetCount(int *n) { return FN(cuDeviceGetCount, int *)(n); }
static CUresult w_deviceGet(CUdevice *d, int ord) { return FN(cuDeviceGet, CUdevice *, int)(d, ord); }
static CUresult w_deviceGetName(char *s, int n, CUdevice d) { return FN(cuDeviceGetName, char *, int, CUdevice)(s, n, d); }
static CUresult w_deviceGetUuid(CUuuid *u, CUdevice d) { return FN(cuDeviceGetUuid, CUuuid *, CUdevice)(u, d); }
static CUresult w_deviceGetAttribute(int *v, int attr, CUdevice d) { return FN(cuDeviceGetAttribute, int *, int, CUdevice)(v, attr, d); }
static CUresult w_deviceTotalMem(size_t *b, CUdevice d) { return FN(cuDeviceTotalMem, size_t *, CUdevice)(b, d); }
static CUresult w_primaryCtxRetain(CUcontext *c, CUdevice d) { return FN(cuDevicePrimaryCtxRetain, CUcontext *, CUdevice)(c, d); }
static CUresult w_primaryCtxRelease(CUdevice d) { return FN(cuDevicePrimaryCtxRelease, CUdevice)(d); }
static CUresult w_primaryCtxGetState(CUdevice d, unsigned *flags, int *active) { return FN(cuDevicePrimaryCtxGetState, CUdevice, unsigned *, int *)(d, flags, active); }
static CUresult w_primaryCtxSetFlags(CUdevice d, unsigned flags) { return FN(cuDevicePrimaryCtxSetFlags, CUdevice, unsigned)(d, flags); }

// The wrappers below take the context, make it current and call, in one C call.
#define CTX(c) do { CUresult r_ = setctx(c); if (r_ != 0) return r_; } while (0)

static CUresult w_memGetInfo(CUcontext c, size_t *fr, size_t *tot) { CTX(c); return FN(cuMemGetInfo, size_t *, size_t *)(fr, tot); }
static CUresult w_memAlloc(CUcontext c, CUdeviceptr *p, size_t n) { CTX(c); return FN(cuMemAlloc, CUdeviceptr *, size_t)(p, n); }
static CUresult w_memFree(CUcontext c, CUdeviceptr p) { CTX(c); return FN(cuMemFree, CUdeviceptr)(p); }
static CUresult w_memAllocHost(CUcontext c, void **p, size_t n) { CTX(c); return FN(cuMemAllocHost, void **, size_t)(p, n); }
static CUresult w_memFreeHost(CUcontext c, void *p) { CTX(c); return FN(cuMemFreeHost, void *)(p); }
static CUresult w_memcpyHtoD(CUcontext c, CUdeviceptr dst, const void *src, size_t n) { CTX(c); return FN(cuMemcpyHtoD, CUdeviceptr, const void *, size_t)(dst, src, n); }
static CUresult w_memcpyDtoH(CUcontext c, void *dst, CUdeviceptr src, size_t n) { CTX(c); return FN(cuMemcpyDtoH, void *, CUdeviceptr, size_t)(dst, src, n); }
static CUresult w_memcpyHtoDAsync(CUcontext c, CUdeviceptr dst, const void *src, size_t n, CUstream s) { CTX(c); return FN(cuMemcpyHtoDAsync, CUdeviceptr, const void *, size_t, CUstream)(dst, src, n, s); }
static CUresult w_memcpyDtoHAsync(CUcontext c, void *dst, CUdeviceptr src, size_t n, CUstream s) { CTX(c); return FN(cuMemcpyDtoHAsync, void *, CUdeviceptr, size_t, CUstream)(dst, src, n, s); }
static CUresult w_memcpyDtoDAsync(CUcontext c, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { CTX(c); return FN(cuMemcpyDtoDAsync, CUdeviceptr, CUdeviceptr, size_t, CUstream)(dst, src, n, s); }
static CUresult w_memcpyPeerAsync(CUcontext c, CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s) { CTX(c); return FN(cuMemcpyPeerAsync, CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream)(dst, dctx, src, sctx, n, s); }
static CUresult w_streamCreate(CUcontext c, CUstream *s, unsigned flags) { CTX(c); return FN(cuStreamCreate, CUstream *, unsigned)(s, flags); }
static CUresult w_streamDestroy(CUcontext c, CUstream s) { CTX(c); return FN(cuStreamDestroy, CUstream)(s); }
static CUresult w_streamSynchronize(CUcontext c, CUstream s) { CTX(c); return FN(cuStreamSynchronize, CUstream)(s); }
static CUresult w_streamQuery(CUcontext c, CUstream s) { CTX(c); return FN(cuStreamQuery, CUstream)(s); }
static CUresult w_streamWaitEvent(CUcontext c, CUstream s, CUevent e) { CTX(c); return FN(cuStreamWaitEvent, CUstream, CUevent, unsigned)(s, e, 0); }
static CUresult w_eventCreate(CUcontext c, CUevent *e, unsigned flags) { CTX(c); return FN(cuEventCreate, CUevent *, unsigned)(e, flags); }
static CUresult w_eventRecord(CUcontext c, CUevent e, CUstream s) { CTX(c); return FN(cuEventRecord, CUevent, CUstream)(e, s); }
static CUresult w_eventSynchronize(CUcontext c, CUevent e) { CTX(c); return FN(cuEventSynchronize, CUevent)(e); }
static CUresult w_eventQuery(CUcontext c, CUevent e) { CTX(c); return FN(cuEventQuery, CUevent)(e); }
static CUresult w_eventElapsedTime(CUcontext c, float *ms, CUevent a, CUevent b) { CTX(c); return FN(cuEventElapsedTime, float *, CUevent, CUevent)(ms, a, b); }
static CUresult w_eventDestroy(CUcontext c, CUevent e) { CTX(c); return FN(cuEventDestroy, CUevent)(e); }
static CUresult w_moduleGetFunction(CUcontext c, CUfunction *f, CUmodule m, const char *name) { CTX(c); return FN(cuModuleGetFunction, CUfunction *, CUmodule, const char *)(f, m, name); }
static CUresult w_moduleUnload(CUcontext c, CUmodule m) { CTX(c); return FN(cuModuleUnload, CUmodule)(m); }
static CUresult w_funcGetAttribute(CUcontext c, int *v, int attr, CUfunction f) { CTX(c); return FN(cuFuncGetAttribute, int *, int, CUfunction)(v, attr, f); }

// CUjit_option values (cuda.h CUjit_option_enum).
enum { JIT_INFO_LOG_BUFFER = 3, JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4, JIT_ERROR_LOG_BUFFER = 5, JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

static CUresult w_moduleLoadDataEx(CUcontext c, CUmodule *m, const char *image, char *errlog, char *infolog, unsigned size) {
	int opts[4] = {JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE_BYTES, JIT_INFO_LOG_BUFFER, JIT_INFO_LOG_BUFFER_SIZE_BYTES};
	void *vals[4] = {errlog, (void *)(uintptr_t)size, infolog, (void *)(uintptr_t)size};
	errlog[0] = 0;
	infolog[0] = 0;
	CTX(c);
	CUresult r = FN(cuModuleLoadDataEx, CUmodule *, const void *, unsigned, int *, void **)(m, image, 4, opts, vals);
	errlog[size - 1] = 0;
	infolog[size - 1] = 0;
	return r;
}

#define MAX_PARAMS 64

// w_launchKernel copies the argument values into C storage and passes the
// driver an array of pointers to them; the driver copies the values at the
// launch, so nothing outlives the call.
static CUresult w_launchKernel(CUcontext c, CUfunction f,
		unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shmem, CUstream s, const uint64_t *vals, int n) {
	uint64_t store[MAX_PARAMS];
	void *params[MAX_PARAMS];
	if (n < 0 || n > MAX_PARAMS) return 1; // CUDA_ERROR_INVALID_VALUE
	for (int i = 0; i < n; i++) {
		store[i] = vals[i];
		params[i] = &store[i];
	}
	CTX(c);
	return FN(cuLaunchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		unsigned, CUstream, void **, void **)(f, gx, gy, gz, bx, by, bz, shmem, s, n > 0 ? params : NULL, NULL);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gompt/gompt/internal/dl"
)

// Available reports whether this build can load the driver (cgo is on).
const Available = true

// MaxParams is the largest number of kernel arguments LaunchKernel passes.
const MaxParams = C.MAX_PARAMS

// symbols lists, in the order of the C enum, the names tried for each entry
// point: the versioned name first where the driver has one.
var symbols = [C.F_COUNT][]string{
	C.F_cuInit:                     {"cuInit"},
	C.F_cuDriverGetVersion:         {"cuDriverGetVersion"},
	C.F_cuGetErrorString:           {"cuGetErrorString"},
	C.F_cuDeviceGetCount:           {"cuDeviceGetCount"},
	C.F_cuDeviceGet:                {"cuDeviceGet"},
	C.F_cuDeviceGetName:            {"cuDeviceGetName"},
	C.F_cuDeviceGetUuid:            {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"},
	C.F_cuDeviceGetAttribute:       {"cuDeviceGetAttribute"},
	C.F_cuDeviceTotalMem:           {"cuDeviceTotalMem_v2"},
	C.F_cuDevicePrimaryCtxRetain:   {"cuDevicePrimaryCtxRetain"},
	C.F_cuDevicePrimaryCtxRelease:  {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
	C.F_cuCtxSetCurrent:            {"cuCtxSetCurrent"},
	C.F_cuDevicePrimaryCtxGetState: {"cuDevicePrimaryCtxGetState"},
	C.F_cuDevicePrimaryCtxSetFlags: {"cuDevicePrimaryCtxSetFlags_v2", "cuDevicePrimaryCtxSetFlags"},
	C.F_cuMemGetInfo:               {"cuMemGetInfo_v2"},
	C.F_cuMemAlloc:                 {"cuMemAlloc_v2"},
	C.F_cuMemFree:                  {"cuMemFree_v2"},
	C.F_cuMemAllocHost:             {"cuMemAllocHost_v2"},
	C.F_cuMemFreeHost:              {"cuMemFreeHost"},
	C.F_cuMemcpyHtoD:               {"cuMemcpyHtoD_v2"},
	C.F_cuMemcpyDtoH:               {"cuMemcpyDtoH_v2"},
	C.F_cuMemcpyHtoDAsync:          {"cuMemcpyHtoDAsync_v2"},
	C.F_cuMemcpyDtoHAsync:          {"cuMemcpyDtoHAsync_v2"},
	C.F_cuMemcpyDtoDAsync:          {"cuMemcpyDtoDAsync_v2"},
	C.F_cuMemcpyPeerAsync:          {"cuMemcpyPeerAsync"},
	C.F_cuStreamCreate:             {"cuStreamCreate"},
	C.F_cuStreamDestroy:            {"cuStreamDestroy_v2", "cuStreamDestroy"},
	C.F_cuStreamSynchronize:        {"cuStreamSynchronize"},
	C.F_cuStreamQuery:              {"cuStreamQuery"},
	C.F_cuEventCreate:              {"cuEventCreate"},
	C.F_cuEventRecord:              {"cuEventRecord"},
	C.F_cuEventSynchronize:         {"cuEventSynchronize"},
	C.F_cuEventQuery:               {"cuEventQuery"},
	C.F_cuEventElapsedTime:         {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
	C.F_cuEventDestroy:             {"cuEventDestroy_v2", "cuEventDestroy"},
	C.F_cuModuleLoadDataEx:         {"cuModuleLoadDataEx"},
	C.F_cuModuleGetFunction:        {"cuModuleGetFunction"},
	C.F_cuModuleUnload:             {"cuModuleUnload"},
	C.F_cuFuncGetAttribute:         {"cuFuncGetAttribute"},
	C.F_cuLaunchKernel:             {"cuLaunchKernel"},
	C.F_cuStreamWaitEvent:          {"cuStreamWaitEvent"},
}

// optional marks the entry points a driver may lack: Load leaves them
// unresolved, and the functions that call them report ErrMissingSymbol
// (HasStreamWaitEvent tells beforehand).
var optional = [C.F_COUNT]bool{
	C.F_cuStreamWaitEvent: true,
}

// DefaultLibrary is the driver library Load opens when given no name.
const DefaultLibrary = "libcuda.so.1"

var (
	loadMu   sync.Mutex
	loaded   atomic.Bool
	lib      *dl.Lib
	resolved [C.F_COUNT]string // the name each entry point was found under
)

// MissingSymbolError is returned by Load for a library that lacks an entry
// point the plugin needs.
type MissingSymbolError struct {
	Library string
	Symbol  string // the first missing entry point (its preferred name)
	Err     error  // dlsym's message
}

func (e *MissingSymbolError) Error() string {
	return fmt.Sprintf("%s is not a usable CUDA driver: missing symbol %s: %v", e.Library, e.Symbol, e.Err)
}

// ErrOtherLibrary is returned by Load when a different driver library was
// already loaded: a process uses one.
var ErrOtherLibrary = errors.New("a different CUDA driver library is already loaded")

// Load opens the driver library name (DefaultLibrary when empty) and
// resolves every entry point, preferring versioned names; an optional one
// (cuStreamWaitEvent) may be missing. It does not call
// cuInit. Once a library has loaded, later calls with the same name return
// nil; a failed load leaves nothing loaded, so a later call may try again.
// Errors: the dynamic loader's message when the library cannot be opened
// ("libcuda.so.1: cannot open shared object file: No such file or
// directory"), *MissingSymbolError naming the first missing entry point, or
// ErrOtherLibrary. Safe for concurrent use.
func Load(name string) error {
	if name == "" {
		name = DefaultLibrary
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if lib != nil && lib.Name == name {
		return nil
	}
	l, err := dl.Open(name)
	if err != nil {
		return err
	}
	var ptrs [C.F_COUNT]unsafe.Pointer
	var names [C.F_COUNT]string
	for i, alts := range symbols {
		p, n, err := l.SymFirst(alts...)
		if err != nil && optional[i] {
			continue // left nil and unnamed: the function says it is missing
		}
		if err != nil {
			l.Close()
			return &MissingSymbolError{Library: name, Symbol: alts[0], Err: err}
		}
		ptrs[i], names[i] = p, n
	}
	if lib != nil {
		l.Close()
		return fmt.Errorf("%w: %s (asked for %s)", ErrOtherLibrary, lib.Name, name)
	}
	for i, p := range ptrs {
		C.gompt_cu_set(C.int(i), p)
	}
	lib, resolved = l, names
	loaded.Store(true)
	return nil
}

var errNotLoaded = errors.New("cu: the CUDA driver library is not loaded")

// ErrMissingSymbol is returned by the function of an optional entry point
// that the loaded driver lacks.
var ErrMissingSymbol = errors.New("cu: the CUDA driver library lacks this entry point")

// has reports whether the loaded driver has entry point f.
func has(f int) bool { return loaded.Load() && resolved[f] != "" }

// check turns the result r of entry point f into an error: nil for
// CUDA_SUCCESS, else an *Error with the resolved name, the result's name and
// the driver's description.
func check(r C.CUresult, f int) error {
	if r == 0 {
		return nil
	}
	e := &Error{Func: resolved[f], Result: Result(r)}
	var s *C.char
	if C.w_getErrorString(r, &s) == 0 && s != nil {
		e.Desc = C.GoString(s)
	}
	return e
}

var live struct {
	allocs, hostAllocs, streams, events, modules atomic.Int64
}

// LiveObjects returns the counts of driver objects made through this package
// and not yet released, across all devices.
func LiveObjects() Live {
	return Live{
		Allocs: live.allocs.Load(), HostAllocs: live.hostAllocs.Load(),
		Streams: live.streams.Load(), Events: live.events.Load(), Modules: live.modules.Load(),
	}
}

// Handles. Their zero values are not valid objects.
type (
	Device   C.CUdevice
	Context  = C.CUcontext
	Stream   = C.CUstream
	Event    = C.CUevent
	Module   = C.CUmodule
	Function = C.CUfunction
)

// DevicePtr is a CUdeviceptr.
type DevicePtr uint64

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int

// The device attributes the plugin reads (cuda.h CUdevice_attribute).
const (
	DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK           DeviceAttribute = 1
	DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X                 DeviceAttribute = 2
	DEVICE_ATTRIBUTE_MAX_GRID_DIM_X                  DeviceAttribute = 5
	DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y                  DeviceAttribute = 6
	DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z                  DeviceAttribute = 7
	DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK     DeviceAttribute = 8
	DEVICE_ATTRIBUTE_WARP_SIZE                       DeviceAttribute = 10
	DEVICE_ATTRIBUTE_CLOCK_RATE                      DeviceAttribute = 13
	DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT            DeviceAttribute = 16
	DEVICE_ATTRIBUTE_INTEGRATED                      DeviceAttribute = 18
	DEVICE_ATTRIBUTE_PCI_BUS_ID                      DeviceAttribute = 33
	DEVICE_ATTRIBUTE_PCI_DEVICE_ID                   DeviceAttribute = 34
	DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE               DeviceAttribute = 36
	DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH         DeviceAttribute = 37
	DEVICE_ATTRIBUTE_L2_CACHE_SIZE                   DeviceAttribute = 38
	DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR  DeviceAttribute = 39
	DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT              DeviceAttribute = 40
	DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING              DeviceAttribute = 41
	DEVICE_ATTRIBUTE_PCI_DOMAIN_ID                   DeviceAttribute = 50
	DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR        DeviceAttribute = 75
	DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR        DeviceAttribute = 76
	DEVICE_ATTRIBUTE_MANAGED_MEMORY                  DeviceAttribute = 83
	DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPT DeviceAttribute = 97
)

// FunctionAttribute is a CUfunction_attribute.
type FunctionAttribute int

// FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK is the largest block a function can
// be launched with (register use may make it less than the device's).
const FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK FunctionAttribute = 0

// FUNC_ATTRIBUTE_SHARED_SIZE_BYTES is the static shared memory a function
// declares, in bytes.
const FUNC_ATTRIBUTE_SHARED_SIZE_BYTES FunctionAttribute = 1

// Flags.
const (
	STREAM_NON_BLOCKING      = 0x1 // CU_STREAM_NON_BLOCKING
	EVENT_DEFAULT            = 0x0 // CU_EVENT_DEFAULT: timing enabled
	EVENT_DISABLE_TIMING     = 0x2 // CU_EVENT_DISABLE_TIMING
	MEMHOSTREGISTER_PORTABLE = 0x1 // CU_MEMHOSTREGISTER_PORTABLE
	CTX_SCHED_AUTO           = 0x0 // CU_CTX_SCHED_AUTO: spin while the GPU has fewer contexts than the CPU cores, else yield
	CTX_SCHED_SPIN           = 0x1 // CU_CTX_SCHED_SPIN
	CTX_SCHED_YIELD          = 0x2 // CU_CTX_SCHED_YIELD
	CTX_SCHED_BLOCKING_SYNC  = 0x4 // CU_CTX_SCHED_BLOCKING_SYNC: waits sleep on an interrupt
	CTX_SCHED_MASK           = 0x7 // CU_CTX_SCHED_MASK
)

func ready() error {
	if !loaded.Load() {
		return errNotLoaded
	}
	return nil
}

// Init calls cuInit(flags).
func Init(flags uint) error {
	if err := ready(); err != nil {
		return err
	}
	return check(C.w_init(C.unsigned(flags)), C.F_cuInit)
}

// DriverGetVersion returns the driver's CUDA version, 1000*major+10*minor.
func DriverGetVersion() (int, error) {
	if err := ready(); err != nil {
		return 0, err
	}
	var v C.int
	err := check(C.w_driverGetVersion(&v), C.F_cuDriverGetVersion)
	return int(v), err
}

// DeviceGetCount returns the number of CUDA devices.
func DeviceGetCount() (int, error) {
	var n C.int
	err := check(C.w_deviceGetCount(&n), C.F_cuDeviceGetCount)
	return int(n), err
}

// DeviceGet returns the device of an ordinal in [0, DeviceGetCount()).
func DeviceGet(ordinal int) (Device, error) {
	var d C.CUdevice
	err := check(C.w_deviceGet(&d, C.int(ordinal)), C.F_cuDeviceGet)
	return Device(d), err
}

// DeviceGetName returns the device's marketing name.
func DeviceGetName(d Device) (string, error) {
	var buf [256]C.char
	if err := check(C.w_deviceGetName(&buf[0], C.int(len(buf)), C.CUdevice(d)), C.F_cuDeviceGetName); err != nil {
		return "", err
	}
	buf[len(buf)-1] = 0
	return C.GoString(&buf[0]), nil
}

// DeviceGetUuid returns the device's UUID.
func DeviceGetUuid(d Device) ([16]byte, error) {
	var u C.CUuuid
	var out [16]byte
	if err := check(C.w_deviceGetUuid(&u, C.CUdevice(d)), C.F_cuDeviceGetUuid); err != nil {
		return out, err
	}
	for i := range out {
		out[i] = byte(u.bytes[i])
	}
	return out, nil
}

// DeviceGetAttribute returns one attribute of d.
func DeviceGetAttribute(attr DeviceAttribute, d Device) (int, error) {
	var v C.int
	err := check(C.w_deviceGetAttribute(&v, C.int(attr), C.CUdevice(d)), C.F_cuDeviceGetAttribute)
	return int(v), err
}

// DeviceTotalMem returns the device's global memory in bytes.
func DeviceTotalMem(d Device) (uint64, error) {
	var b C.size_t
	err := check(C.w_deviceTotalMem(&b, C.CUdevice(d)), C.F_cuDeviceTotalMem)
	return uint64(b), err
}

// DevicePrimaryCtxRetain retains d's primary context; each successful call
// is matched by one DevicePrimaryCtxRelease.
func DevicePrimaryCtxRetain(d Device) (Context, error) {
	var c C.CUcontext
	err := check(C.w_primaryCtxRetain(&c, C.CUdevice(d)), C.F_cuDevicePrimaryCtxRetain)
	return c, err
}

// DevicePrimaryCtxGetState returns the flags of d's primary context and
// whether it is active (retained by someone in the process).
func DevicePrimaryCtxGetState(d Device) (flags uint, active bool, err error) {
	var f C.unsigned
	var a C.int
	err = check(C.w_primaryCtxGetState(C.CUdevice(d), &f, &a), C.F_cuDevicePrimaryCtxGetState)
	return uint(f), a != 0, err
}

// DevicePrimaryCtxSetFlags sets the flags (CTX_SCHED_*) d's primary
// context is created with.
func DevicePrimaryCtxSetFlags(d Device, flags uint) error {
	return check(C.w_primaryCtxSetFlags(C.CUdevice(d), C.unsigned(flags)), C.F_cuDevicePrimaryCtxSetFlags)
}

// DevicePrimaryCtxRelease releases d's primary context.
func DevicePrimaryCtxRelease(d Device) error {
	return check(C.w_primaryCtxRelease(C.CUdevice(d)), C.F_cuDevicePrimaryCtxRelease)
}

// MemGetInfo returns the free and total memory of ctx's device, in bytes.
func MemGetInfo(ctx Context) (free, total uint64, err error) {
	var f, t C.size_t
	err = check(C.w_memGetInfo(ctx, &f, &t), C.F_cuMemGetInfo)
	return uint64(f), uint64(t), err
}

// MemAlloc allocates n bytes of device memory.
func MemAlloc(ctx Context, n int) (DevicePtr, error) {
	var p C.CUdeviceptr
	if err := check(C.w_memAlloc(ctx, &p, C.size_t(n)), C.F_cuMemAlloc); err != nil {
		return 0, err
	}
	live.allocs.Add(1)
	return DevicePtr(p), nil
}

// MemFree frees memory from MemAlloc.
func MemFree(ctx Context, p DevicePtr) error {
	err := check(C.w_memFree(ctx, C.CUdeviceptr(p)), C.F_cuMemFree)
	if err == nil || IsSticky(err) {
		live.allocs.Add(-1)
	}
	return err
}

// MemAllocHost allocates n bytes of page-locked host memory, mapped for
// the device. The memory is C memory, not seen by the Go collector.
func MemAllocHost(ctx Context, n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := check(C.w_memAllocHost(ctx, &p, C.size_t(n)), C.F_cuMemAllocHost); err != nil {
		return nil, err
	}
	live.hostAllocs.Add(1)
	return p, nil
}

// MemFreeHost frees memory from MemAllocHost.
func MemFreeHost(ctx Context, p unsafe.Pointer) error {
	err := check(C.w_memFreeHost(ctx, p), C.F_cuMemFreeHost)
	if err == nil || IsSticky(err) {
		live.hostAllocs.Add(-1)
	}
	return err
}

// MemcpyHtoD copies n bytes from host to device and waits for the copy.
func MemcpyHtoD(ctx Context, dst DevicePtr, src unsafe.Pointer, n int) error {
	return check(C.w_memcpyHtoD(ctx, C.CUdeviceptr(dst), src, C.size_t(n)), C.F_cuMemcpyHtoD)
}

// MemcpyDtoH copies n bytes from device to host and waits for the copy.
func MemcpyDtoH(ctx Context, dst unsafe.Pointer, src DevicePtr, n int) error {
	return check(C.w_memcpyDtoH(ctx, dst, C.CUdeviceptr(src), C.size_t(n)), C.F_cuMemcpyDtoH)
}

// MemcpyHtoDAsync enqueues a host-to-device copy on s.
func MemcpyHtoDAsync(ctx Context, dst DevicePtr, src unsafe.Pointer, n int, s Stream) error {
	return check(C.w_memcpyHtoDAsync(ctx, C.CUdeviceptr(dst), src, C.size_t(n), s), C.F_cuMemcpyHtoDAsync)
}

// MemcpyDtoHAsync enqueues a device-to-host copy on s.
func MemcpyDtoHAsync(ctx Context, dst unsafe.Pointer, src DevicePtr, n int, s Stream) error {
	return check(C.w_memcpyDtoHAsync(ctx, dst, C.CUdeviceptr(src), C.size_t(n), s), C.F_cuMemcpyDtoHAsync)
}

// MemcpyDtoDAsync enqueues a copy between two places of device memory.
func MemcpyDtoDAsync(ctx Context, dst, src DevicePtr, n int, s Stream) error {
	return check(C.w_memcpyDtoDAsync(ctx, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s), C.F_cuMemcpyDtoDAsync)
}

// MemcpyPeerAsync enqueues on s (a stream of ctx) a copy from memory of
// srcCtx to memory of dstCtx.
func MemcpyPeerAsync(ctx Context, dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, n int, s Stream) error {
	return check(C.w_memcpyPeerAsync(ctx, C.CUdeviceptr(dst), dstCtx, C.CUdeviceptr(src), srcCtx, C.size_t(n), s), C.F_cuMemcpyPeerAsync)
}

// StreamCreate creates a stream with flags (STREAM_NON_BLOCKING).
func StreamCreate(ctx Context, flags uint) (Stream, error) {
	var s C.CUstream
	if err := check(C.w_streamCreate(ctx, &s, C.unsigned(flags)), C.F_cuStreamCreate); err != nil {
		return nil, err
	}
	live.streams.Add(1)
	return s, nil
}

// StreamDestroy destroys s once its work is done.
func StreamDestroy(ctx Context, s Stream) error {
	err := check(C.w_streamDestroy(ctx, s), C.F_cuStreamDestroy)
	if err == nil || IsSticky(err) {
		live.streams.Add(-1)
	}
	return err
}

// StreamSynchronize waits for s's work and returns its error.
func StreamSynchronize(ctx Context, s Stream) error {
	return check(C.w_streamSynchronize(ctx, s), C.F_cuStreamSynchronize)
}

// StreamQuery returns nil when s's work is done, an *Error with
// ERROR_NOT_READY while it is not, or the work's error.
func StreamQuery(ctx Context, s Stream) error {
	return check(C.w_streamQuery(ctx, s), C.F_cuStreamQuery)
}

// HasStreamWaitEvent reports whether the loaded driver has
// cuStreamWaitEvent, an optional entry point of this binding.
func HasStreamWaitEvent() bool { return has(C.F_cuStreamWaitEvent) }

// StreamWaitEvent makes the work enqueued on s after the call wait for the
// work before e's latest record at the time of the call (later records of
// e do not move it), on the device: the caller does not wait. e may be an
// event of another stream. ErrMissingSymbol when the driver lacks the entry
// point.
func StreamWaitEvent(ctx Context, s Stream, e Event) error {
	if err := ready(); err != nil {
		return err
	}
	if !has(C.F_cuStreamWaitEvent) {
		return ErrMissingSymbol
	}
	return check(C.w_streamWaitEvent(ctx, s, e), C.F_cuStreamWaitEvent)
}

// EventCreate creates an event with flags (EVENT_DEFAULT keeps timing).
func EventCreate(ctx Context, flags uint) (Event, error) {
	var e C.CUevent
	if err := check(C.w_eventCreate(ctx, &e, C.unsigned(flags)), C.F_cuEventCreate); err != nil {
		return nil, err
	}
	live.events.Add(1)
	return e, nil
}

// EventRecord records e at the current end of s.
func EventRecord(ctx Context, e Event, s Stream) error {
	return check(C.w_eventRecord(ctx, e, s), C.F_cuEventRecord)
}

// EventSynchronize waits for e.
func EventSynchronize(ctx Context, e Event) error {
	return check(C.w_eventSynchronize(ctx, e), C.F_cuEventSynchronize)
}

// EventQuery returns nil when the work before e's latest record is done
// (or e was never recorded), an *Error with ERROR_NOT_READY while it is
// not, or the work's error. It does not wait.
func EventQuery(ctx Context, e Event) error {
	return check(C.w_eventQuery(ctx, e), C.F_cuEventQuery)
}

// EventElapsedTime returns the milliseconds from a to b (negative when b
// completed first); resolution about half a microsecond.
func EventElapsedTime(ctx Context, a, b Event) (float32, error) {
	var ms C.float
	err := check(C.w_eventElapsedTime(ctx, &ms, a, b), C.F_cuEventElapsedTime)
	return float32(ms), err
}

// EventDestroy destroys e.
func EventDestroy(ctx Context, e Event) error {
	err := check(C.w_eventDestroy(ctx, e), C.F_cuEventDestroy)
	if err == nil || IsSticky(err) {
		live.events.Add(-1)
	}
	return err
}

// jitLogSize is the size of each JIT log buffer.
const jitLogSize = 32 << 10

// ModuleLoadDataEx JIT-compiles (or loads) image, PTX text or a cubin, for
// ctx's device. It returns the JIT info log; on failure the *Error carries
// the JIT error log in Log.
func ModuleLoadDataEx(ctx Context, image string) (Module, string, error) {
	cimg := C.CString(image)
	defer C.free(unsafe.Pointer(cimg))
	errlog := (*C.char)(C.malloc(jitLogSize))
	infolog := (*C.char)(C.malloc(jitLogSize))
	defer C.free(unsafe.Pointer(errlog))
	defer C.free(unsafe.Pointer(infolog))
	var m C.CUmodule
	r := C.w_moduleLoadDataEx(ctx, &m, cimg, errlog, infolog, jitLogSize)
	info := C.GoString(infolog)
	if err := check(r, C.F_cuModuleLoadDataEx); err != nil {
		e := err.(*Error)
		e.Log = C.GoString(errlog)
		if e.Log == "" {
			e.Log = info
		}
		return nil, info, e
	}
	live.modules.Add(1)
	return m, info, nil
}

// ModuleGetFunction returns the kernel called name in m.
func ModuleGetFunction(ctx Context, m Module, name string) (Function, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	err := check(C.w_moduleGetFunction(ctx, &f, m, cs), C.F_cuModuleGetFunction)
	return f, err
}

// ModuleUnload unloads m.
func ModuleUnload(ctx Context, m Module) error {
	err := check(C.w_moduleUnload(ctx, m), C.F_cuModuleUnload)
	if err == nil || IsSticky(err) {
		live.modules.Add(-1)
	}
	return err
}

// FuncGetAttribute returns one attribute of f.
func FuncGetAttribute(ctx Context, attr FunctionAttribute, f Function) (int, error) {
	var v C.int
	err := check(C.w_funcGetAttribute(ctx, &v, C.int(attr), f), C.F_cuFuncGetAttribute)
	return int(v), err
}

// LaunchKernel enqueues f on s with grid and block dimensions and no dynamic
// shared memory. args holds one value per kernel parameter, each in the low
// bytes of its slot as the parameter's size needs (little-endian); at most
// MaxParams. The values are copied before the call returns.
func LaunchKernel(ctx Context, f Function, grid, block [3]uint32, s Stream, args []uint64) error {
	if len(args) > MaxParams {
		return fmt.Errorf("cu: LaunchKernel: %d arguments, at most %d are supported", len(args), MaxParams)
	}
	var p *C.uint64_t
	if len(args) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	return check(C.w_launchKernel(ctx, f,
		C.unsigned(grid[0]), C.unsigned(grid[1]), C.unsigned(grid[2]),
		C.unsigned(block[0]), C.unsigned(block[1]), C.unsigned(block[2]),
		0, s, p, C.int(len(args))), C.F_cuLaunchKernel)
}
