//go:build cgo

package cl

/*
#include <time.h>
#include "cl.h"

static cl_int GetDeviceAndHostTimer(uintptr_t d, cl_ulong *dev, cl_ulong *host) {
	return CALL(GetDeviceAndHostTimer, cl_int (*)(h, cl_ulong*, cl_ulong*))((h)d, dev, host);
}

static int64_t HostClock(int id) {
	struct timespec ts;
	if (clock_gettime((clockid_t)id, &ts) != 0) return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
*/
import "C"

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
