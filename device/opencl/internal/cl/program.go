//go:build cgo

package cl

/*
#include "cl.h"

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
*/
import "C"

import (
	"strings"
	"unsafe"
)

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
