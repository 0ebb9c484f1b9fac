//go:build cgo

package cl

/*
#include "cl.h"

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
*/
import "C"

import "unsafe"

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
