//go:build cgo

// cl.h is shared by the cgo files of package cl: the C types, the table of
// entry points (filled by gompt_cl_set, cl.go) and CALL, which calls one.

#ifndef GOMPT_CL_H
#define GOMPT_CL_H

#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

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

extern void *gompt_cl_fn[F_N];

#define CALL(name, type) ((type)gompt_cl_fn[F_##name])

#endif
