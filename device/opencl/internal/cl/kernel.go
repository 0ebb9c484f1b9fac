//go:build cgo

package cl

/*
#include "cl.h"

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
*/
import "C"

import (
	"errors"
	"unsafe"
)

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
