// Package cl is a minimal binding of the OpenCL API, loaded at run time from
// the ICD loader libOpenCL.so.1 (or the library named by
// GOMPT_OPENCL_LIBRARY) with dlopen. It declares only the types and entry
// points the gompt OpenCL plugin (device/opencl) and its raw baselines
// (device/opencl/clraw) use; no OpenCL header or library is needed
// to build it.
//
// Names mirror the C API without its prefix (cl.GetPlatformIDs for
// clGetPlatformIDs, cl.DEVICE_NAME for CL_DEVICE_NAME), so the Khronos
// reference pages apply. Every non-success status becomes an *Error that
// names the entry point, the status (CL_OUT_OF_RESOURCES) and the matching
// device.Code. Handles are plain integers holding the driver's pointers; they
// are never dereferenced on the Go side.
//
// Init must succeed before any other function is called. All functions are
// safe for concurrent use as far as OpenCL itself is (clSetKernelArg on one
// kernel object is not: the caller serialises it).
//
// Files, by concern: cl.go (loading the library and resolving its entry
// points, Init, and the helpers every call shares), cl.h (the C types, the
// entry-point table and CALL, included by every cgo file), platform.go
// (platforms, devices and their queries), queue.go (contexts and command
// queues: Finish, Flush, markers and barriers), buffer.go (buffers, their
// copies and mappings), program.go (programs built from source), kernel.go
// (kernel objects, their queries and launches), event.go (events, their
// status and completion callbacks; callback.go and callback.c carry the
// callback back to Go), clock.go (the device and host timers), types.go
// (handles, constants and the live-object counts), errors.go (status
// codes and *Error), and cl_nocgo.go (a build without cgo).
package cl

import "sync/atomic"

// Handles of OpenCL objects. Zero is the NULL handle.
type (
	PlatformID   uintptr
	DeviceID     uintptr
	Context      uintptr
	CommandQueue uintptr
	Mem          uintptr
	Program      uintptr
	Kernel       uintptr
	Event        uintptr
)

// Arg is one kernel argument for EnqueueKernel: Size bytes of Value (a
// cl_mem handle for buffers, the scalar's little-endian bits otherwise). Its
// layout matches the C struct the binding passes to the driver.
type Arg struct {
	Size  uintptr
	Value uint64
}

// LibraryEnv is the environment variable that names the OpenCL library to
// load instead of libOpenCL.so.1.
const LibraryEnv = "GOMPT_OPENCL_LIBRARY"

// Constants from the OpenCL 3.0 headers (cl.h, cl_ext.h), by value.
const (
	// cl_bool
	FALSE = 0
	TRUE  = 1

	// cl_platform_info
	PLATFORM_PROFILE               = 0x0900
	PLATFORM_VERSION               = 0x0901
	PLATFORM_NAME                  = 0x0902
	PLATFORM_VENDOR                = 0x0903
	PLATFORM_EXTENSIONS            = 0x0904
	PLATFORM_HOST_TIMER_RESOLUTION = 0x0905

	// cl_device_type
	DEVICE_TYPE_DEFAULT     = 1 << 0
	DEVICE_TYPE_CPU         = 1 << 1
	DEVICE_TYPE_GPU         = 1 << 2
	DEVICE_TYPE_ACCELERATOR = 1 << 3
	DEVICE_TYPE_CUSTOM      = 1 << 4
	DEVICE_TYPE_ALL         = 0xFFFFFFFF

	// cl_device_info
	DEVICE_TYPE                        = 0x1000
	DEVICE_VENDOR_ID                   = 0x1001
	DEVICE_MAX_COMPUTE_UNITS           = 0x1002
	DEVICE_MAX_WORK_ITEM_DIMENSIONS    = 0x1003
	DEVICE_MAX_WORK_GROUP_SIZE         = 0x1004
	DEVICE_MAX_WORK_ITEM_SIZES         = 0x1005
	DEVICE_MAX_CLOCK_FREQUENCY         = 0x100C
	DEVICE_ADDRESS_BITS                = 0x100D
	DEVICE_MAX_MEM_ALLOC_SIZE          = 0x1010
	DEVICE_MAX_PARAMETER_SIZE          = 0x1017
	DEVICE_MEM_BASE_ADDR_ALIGN         = 0x1019 // in bits
	DEVICE_GLOBAL_MEM_CACHE_SIZE       = 0x101E
	DEVICE_GLOBAL_MEM_SIZE             = 0x101F
	DEVICE_LOCAL_MEM_SIZE              = 0x1023
	DEVICE_ERROR_CORRECTION_SUPPORT    = 0x1024
	DEVICE_PROFILING_TIMER_RESOLUTION  = 0x1025
	DEVICE_AVAILABLE                   = 0x1027
	DEVICE_COMPILER_AVAILABLE          = 0x1028
	DEVICE_QUEUE_PROPERTIES            = 0x102A
	DEVICE_NAME                        = 0x102B
	DEVICE_VENDOR                      = 0x102C
	DRIVER_VERSION                     = 0x102D
	DEVICE_PROFILE                     = 0x102E
	DEVICE_VERSION                     = 0x102F
	DEVICE_EXTENSIONS                  = 0x1030
	DEVICE_PLATFORM                    = 0x1031
	DEVICE_HOST_UNIFIED_MEMORY         = 0x1035 // deprecated in 2.0, still answered by most drivers
	DEVICE_OPENCL_C_VERSION            = 0x103D
	DEVICE_SVM_CAPABILITIES            = 0x1053
	DEVICE_UUID_KHR                    = 0x106A // cl_khr_device_uuid, 16 bytes
	DEVICE_PCI_BUS_INFO_KHR            = 0x410F // cl_khr_pci_bus_info, 4 x cl_uint
	DEVICE_COMPUTE_CAPABILITY_MAJOR_NV = 0x4000 // cl_nv_device_attribute_query
	DEVICE_COMPUTE_CAPABILITY_MINOR_NV = 0x4001
	DEVICE_PCI_BUS_ID_NV               = 0x4008
	DEVICE_PCI_SLOT_ID_NV              = 0x4009
	DEVICE_PCI_DOMAIN_ID_NV            = 0x400A

	// cl_command_queue_properties
	QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE = 1 << 0
	QUEUE_PROFILING_ENABLE              = 1 << 1
	QUEUE_PROPERTIES                    = 0x1093 // property key for clCreateCommandQueueWithProperties

	// cl_mem_flags
	MEM_READ_WRITE     = 1 << 0
	MEM_WRITE_ONLY     = 1 << 1
	MEM_READ_ONLY      = 1 << 2
	MEM_USE_HOST_PTR   = 1 << 3
	MEM_ALLOC_HOST_PTR = 1 << 4
	MEM_COPY_HOST_PTR  = 1 << 5

	// cl_buffer_create_type
	BUFFER_CREATE_TYPE_REGION = 0x1220

	// cl_program_info, cl_program_build_info
	PROGRAM_NUM_KERNELS     = 0x1167
	PROGRAM_KERNEL_NAMES    = 0x1168
	PROGRAM_BUILD_STATUS    = 0x1181
	PROGRAM_BUILD_OPTIONS   = 0x1182
	PROGRAM_BUILD_LOG       = 0x1183
	BUILD_SUCCESS           = 0
	BUILD_NONE              = -1
	BUILD_ERROR             = -2
	BUILD_IN_PROGRESS       = -3
	KERNEL_FUNCTION_NAME    = 0x1190
	KERNEL_NUM_ARGS         = 0x1191
	KERNEL_WORK_GROUP_SIZE  = 0x11B0
	KERNEL_LOCAL_MEM_SIZE   = 0x11B2
	KERNEL_PREFERRED_WG_MUL = 0x11B3 // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
	KERNEL_PRIVATE_MEM_SIZE = 0x11B4

	// cl_kernel_arg_info (OpenCL 1.2)
	KERNEL_ARG_ADDRESS_QUALIFIER  = 0x1196
	KERNEL_ARG_TYPE_NAME          = 0x1198
	KERNEL_ARG_NAME               = 0x119A
	KERNEL_ARG_ADDRESS_GLOBAL     = 0x119B
	KERNEL_ARG_ADDRESS_LOCAL      = 0x119C
	KERNEL_ARG_ADDRESS_CONSTANT   = 0x119D
	KERNEL_ARG_ADDRESS_PRIVATE    = 0x119E
	KERNEL_ARG_INFO_NOT_AVAILABLE = -19

	// cl_event_info and execution status
	EVENT_COMMAND_EXECUTION_STATUS = 0x11D3
	COMPLETE                       = 0x0
	RUNNING                        = 0x1
	SUBMITTED                      = 0x2
	QUEUED                         = 0x3

	// cl_profiling_info
	PROFILING_COMMAND_QUEUED   = 0x1280
	PROFILING_COMMAND_SUBMIT   = 0x1281
	PROFILING_COMMAND_START    = 0x1282
	PROFILING_COMMAND_END      = 0x1283
	PROFILING_COMMAND_COMPLETE = 0x1284
)

// Counts is the number of live OpenCL objects created through this package
// and not yet released, for leak checks.
type Counts struct {
	Contexts, Queues, Mems, Programs, Kernels, Events int64
}

// Total is the sum of all counts.
func (c Counts) Total() int64 {
	return c.Contexts + c.Queues + c.Mems + c.Programs + c.Kernels + c.Events
}

var live struct {
	contexts, queues, mems, programs, kernels, events atomic.Int64
}

// Live returns the number of live objects of each kind. Safe for concurrent
// use; the snapshot is not atomic across kinds.
func Live() Counts {
	return Counts{
		Contexts: live.contexts.Load(),
		Queues:   live.queues.Load(),
		Mems:     live.mems.Load(),
		Programs: live.programs.Load(),
		Kernels:  live.kernels.Load(),
		Events:   live.events.Load(),
	}
}

// KernelArg is what the driver says of one argument of a kernel built
// with -cl-kernel-arg-info (clGetKernelArgInfo, OpenCL 1.2): its address
// qualifier (KERNEL_ARG_ADDRESS_GLOBAL...), its type's name as the source
// spells it without qualifiers ("float*", "long", "float4*"), and its name
// (empty where the driver does not report it).
type KernelArg struct {
	Address  uint32
	TypeName string
	Name     string
}
