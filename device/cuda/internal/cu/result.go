package cu

import (
	"fmt"

	"github.com/gompt/gompt/device"
)

// Result is a CUresult, the status every driver entry point returns.
type Result int

// The results the plugin branches on. The full list with names is in
// resultNames.
const (
	SUCCESS             Result = 0
	ERROR_INVALID_VALUE Result = 1
	ERROR_OUT_OF_MEMORY Result = 2
	ERROR_NO_DEVICE     Result = 100
	ERROR_INVALID_PTX   Result = 218
	ERROR_NOT_FOUND     Result = 500
	ERROR_NOT_READY     Result = 600
)

// resultNames is CUresult as cuda.h of CUDA 12.8/13 declares it.
var resultNames = map[Result]string{
	0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
	3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED",
	5: "CUDA_ERROR_PROFILER_DISABLED", 6: "CUDA_ERROR_PROFILER_NOT_INITIALIZED",
	7: "CUDA_ERROR_PROFILER_ALREADY_STARTED", 8: "CUDA_ERROR_PROFILER_ALREADY_STOPPED",
	34: "CUDA_ERROR_STUB_LIBRARY", 46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE", 102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
	200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT", 202: "CUDA_ERROR_CONTEXT_ALREADY_CURRENT",
	205: "CUDA_ERROR_MAP_FAILED", 206: "CUDA_ERROR_UNMAP_FAILED", 207: "CUDA_ERROR_ARRAY_IS_MAPPED",
	208: "CUDA_ERROR_ALREADY_MAPPED", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU", 210: "CUDA_ERROR_ALREADY_ACQUIRED",
	211: "CUDA_ERROR_NOT_MAPPED", 212: "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", 213: "CUDA_ERROR_NOT_MAPPED_AS_POINTER",
	214: "CUDA_ERROR_ECC_UNCORRECTABLE", 215: "CUDA_ERROR_UNSUPPORTED_LIMIT", 216: "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
	217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", 218: "CUDA_ERROR_INVALID_PTX", 219: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT",
	220: "CUDA_ERROR_NVLINK_UNCORRECTABLE", 221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 223: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
	224: "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", 225: "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", 226: "CUDA_ERROR_CONTAINED",
	300: "CUDA_ERROR_INVALID_SOURCE", 301: "CUDA_ERROR_FILE_NOT_FOUND", 302: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
	303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", 304: "CUDA_ERROR_OPERATING_SYSTEM",
	400: "CUDA_ERROR_INVALID_HANDLE", 401: "CUDA_ERROR_ILLEGAL_STATE", 402: "CUDA_ERROR_LOSSY_QUERY",
	500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	703: "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", 704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", 708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
	709: "CUDA_ERROR_CONTEXT_IS_DESTROYED", 710: "CUDA_ERROR_ASSERT", 711: "CUDA_ERROR_TOO_MANY_PEERS",
	712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 713: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
	714: "CUDA_ERROR_HARDWARE_STACK_ERROR", 715: "CUDA_ERROR_ILLEGAL_INSTRUCTION", 716: "CUDA_ERROR_MISALIGNED_ADDRESS",
	717: "CUDA_ERROR_INVALID_ADDRESS_SPACE", 718: "CUDA_ERROR_INVALID_PC", 719: "CUDA_ERROR_LAUNCH_FAILED",
	720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", 721: "CUDA_ERROR_TENSOR_MEMORY_LEAK",
	800: "CUDA_ERROR_NOT_PERMITTED", 801: "CUDA_ERROR_NOT_SUPPORTED", 802: "CUDA_ERROR_SYSTEM_NOT_READY",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	805: "CUDA_ERROR_MPS_CONNECTION_FAILED", 806: "CUDA_ERROR_MPS_RPC_FAILURE", 807: "CUDA_ERROR_MPS_SERVER_NOT_READY",
	808: "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", 809: "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
	810: "CUDA_ERROR_MPS_CLIENT_TERMINATED", 811: "CUDA_ERROR_CDP_NOT_SUPPORTED", 812: "CUDA_ERROR_CDP_VERSION_MISMATCH",
	900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	902: "CUDA_ERROR_STREAM_CAPTURE_MERGE", 903: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
	904: "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", 905: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
	906: "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", 907: "CUDA_ERROR_CAPTURED_EVENT",
	908: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 909: "CUDA_ERROR_TIMEOUT",
	910: "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", 911: "CUDA_ERROR_EXTERNAL_DEVICE",
	912: "CUDA_ERROR_INVALID_CLUSTER_SIZE", 913: "CUDA_ERROR_FUNCTION_NOT_LOADED",
	914: "CUDA_ERROR_INVALID_RESOURCE_TYPE", 915: "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
	916: "CUDA_ERROR_KEY_ROTATION", 999: "CUDA_ERROR_UNKNOWN",
}

// Name returns the C name of r ("CUDA_ERROR_OUT_OF_MEMORY"), or
// "CUresult(N)" for a value newer than this table.
func (r Result) Name() string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("CUresult(%d)", int(r))
}

// Sticky reports whether r is one of the results NVIDIA documents as
// leaving the context unusable ("the process must be terminated and
// relaunched"): a fault in a kernel (illegal address or instruction,
// misaligned address, invalid address space or program counter, hardware
// stack error, unspecified launch failure), a launch timeout, a device-side
// assert, or an error contained by the GPU. After one, every later call in
// the context returns the same result.
func (r Result) Sticky() bool {
	switch r {
	case 226, 700, 702, 710, 714, 715, 716, 717, 718, 719:
		return true
	}
	return false
}

// IsSticky reports whether err is an *Error with a sticky result.
func IsSticky(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Result.Sticky()
}

// Code classifies r as a device error code.
func (r Result) Code() device.Code {
	switch r {
	case 1, 201, 400, 207, 208, 211, 212, 213, 704, 705, 712, 713, 717, 912:
		return device.CodeInvalidArgument
	case 2, 701, 711, 720, 808, 809:
		return device.CodeOutOfResources
	case 5, 215, 217, 221, 223, 224, 225, 801, 804, 811, 900:
		return device.CodeUnsupported
	case 3, 4, 34, 46, 100, 101, 102, 214, 220, 226, 709, 714, 715, 716, 718, 719, 700, 702, 802, 803:
		return device.CodeInvalidDevice
	case 200, 209, 218, 222, 300, 303:
		return device.CodeInvalidBinary
	case 301, 302, 500, 913:
		return device.CodeNotFound
	}
	return device.CodeUnknown
}

// Error is a failed driver call: the entry point (as resolved, e.g.
// "cuMemAlloc_v2"), its result and the driver's description of it.
type Error struct {
	Func   string
	Result Result
	Desc   string // cuGetErrorString's text; may be empty
	Log    string // the JIT error log of a failed module load; may be empty
}

// Error formats as "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
func (e *Error) Error() string {
	s := e.Func + ": " + e.Result.Name()
	if e.Desc != "" {
		s += " (" + e.Desc + ")"
	}
	if e.Log != "" {
		s += "\nJIT log:\n" + e.Log
	}
	return s
}

// Code returns the device error code of the result.
func (e *Error) Code() device.Code { return e.Result.Code() }

// Live counts the driver objects made through this package and not yet
// released, for leak checks. Device allocations include those a caller
// caches for reuse.
type Live struct {
	Allocs     int64 // cuMemAlloc
	HostAllocs int64 // cuMemAllocHost
	Streams    int64
	Events     int64
	Modules    int64
}

// Zero reports whether no object is live.
func (l Live) Zero() bool { return l == Live{} }

func (l Live) String() string {
	return fmt.Sprintf("allocs %d, host allocs %d, streams %d, events %d, modules %d",
		l.Allocs, l.HostAllocs, l.Streams, l.Events, l.Modules)
}
