package cl

import (
	"errors"
	"fmt"

	"github.com/gompt/gompt/device"
)

// Error is a non-success status returned by an OpenCL entry point.
type Error struct {
	Func   string // "clBuildProgram"
	Status int32  // CL_BUILD_PROGRAM_FAILURE is -11
}

// Error formats as "clBuildProgram: CL_BUILD_PROGRAM_FAILURE (-11)".
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d)", e.Func, StatusName(e.Status), e.Status)
}

// Code returns the device.Code the status maps to.
func (e *Error) Code() device.Code { return StatusCode(e.Status) }

// Well-known statuses the plugin branches on.
const (
	SUCCESS                   = 0
	DEVICE_NOT_FOUND          = -1
	OUT_OF_RESOURCES          = -5
	BUILD_PROGRAM_FAILURE     = -11
	MISALIGNED_SUB_BUFFER     = -13
	INVALID_VALUE             = -30
	INVALID_KERNEL_NAME       = -46
	INVALID_WORK_GROUP_SIZE   = -54
	INVALID_OPERATION         = -59
	INVALID_BUFFER_SIZE       = -61
	PLATFORM_NOT_FOUND_KHR    = -1001
	PROFILING_INFO_NOT_AVAIL  = -7
	EXEC_STATUS_ERROR_IN_LIST = -14
)

type statusInfo struct {
	name string
	code device.Code
}

// statuses maps every status of the OpenCL 3.0 headers (and the ICD
// loader's) to its name and device code: the one table behind check.
var statuses = map[int32]statusInfo{
	0:     {"CL_SUCCESS", device.CodeUnknown},
	-1:    {"CL_DEVICE_NOT_FOUND", device.CodeNotFound},
	-2:    {"CL_DEVICE_NOT_AVAILABLE", device.CodeInvalidDevice},
	-3:    {"CL_COMPILER_NOT_AVAILABLE", device.CodeUnsupported},
	-4:    {"CL_MEM_OBJECT_ALLOCATION_FAILURE", device.CodeOutOfResources},
	-5:    {"CL_OUT_OF_RESOURCES", device.CodeOutOfResources},
	-6:    {"CL_OUT_OF_HOST_MEMORY", device.CodeOutOfResources},
	-7:    {"CL_PROFILING_INFO_NOT_AVAILABLE", device.CodeUnsupported},
	-8:    {"CL_MEM_COPY_OVERLAP", device.CodeInvalidArgument},
	-9:    {"CL_IMAGE_FORMAT_MISMATCH", device.CodeInvalidArgument},
	-10:   {"CL_IMAGE_FORMAT_NOT_SUPPORTED", device.CodeUnsupported},
	-11:   {"CL_BUILD_PROGRAM_FAILURE", device.CodeInvalidBinary},
	-12:   {"CL_MAP_FAILURE", device.CodeUnknown},
	-13:   {"CL_MISALIGNED_SUB_BUFFER_OFFSET", device.CodeInvalidArgument},
	-14:   {"CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST", device.CodeUnknown},
	-15:   {"CL_COMPILE_PROGRAM_FAILURE", device.CodeInvalidBinary},
	-16:   {"CL_LINKER_NOT_AVAILABLE", device.CodeUnsupported},
	-17:   {"CL_LINK_PROGRAM_FAILURE", device.CodeInvalidBinary},
	-18:   {"CL_DEVICE_PARTITION_FAILED", device.CodeUnsupported},
	-19:   {"CL_KERNEL_ARG_INFO_NOT_AVAILABLE", device.CodeUnsupported},
	-30:   {"CL_INVALID_VALUE", device.CodeInvalidArgument},
	-31:   {"CL_INVALID_DEVICE_TYPE", device.CodeInvalidArgument},
	-32:   {"CL_INVALID_PLATFORM", device.CodeInvalidDevice},
	-33:   {"CL_INVALID_DEVICE", device.CodeInvalidDevice},
	-34:   {"CL_INVALID_CONTEXT", device.CodeInvalidArgument},
	-35:   {"CL_INVALID_QUEUE_PROPERTIES", device.CodeUnsupported},
	-36:   {"CL_INVALID_COMMAND_QUEUE", device.CodeInvalidArgument},
	-37:   {"CL_INVALID_HOST_PTR", device.CodeInvalidArgument},
	-38:   {"CL_INVALID_MEM_OBJECT", device.CodeInvalidArgument},
	-39:   {"CL_INVALID_IMAGE_FORMAT_DESCRIPTOR", device.CodeInvalidArgument},
	-40:   {"CL_INVALID_IMAGE_SIZE", device.CodeInvalidArgument},
	-41:   {"CL_INVALID_SAMPLER", device.CodeInvalidArgument},
	-42:   {"CL_INVALID_BINARY", device.CodeInvalidBinary},
	-43:   {"CL_INVALID_BUILD_OPTIONS", device.CodeInvalidBinary},
	-44:   {"CL_INVALID_PROGRAM", device.CodeInvalidBinary},
	-45:   {"CL_INVALID_PROGRAM_EXECUTABLE", device.CodeInvalidBinary},
	-46:   {"CL_INVALID_KERNEL_NAME", device.CodeNotFound},
	-47:   {"CL_INVALID_KERNEL_DEFINITION", device.CodeInvalidBinary},
	-48:   {"CL_INVALID_KERNEL", device.CodeInvalidArgument},
	-49:   {"CL_INVALID_ARG_INDEX", device.CodeInvalidArgument},
	-50:   {"CL_INVALID_ARG_VALUE", device.CodeInvalidArgument},
	-51:   {"CL_INVALID_ARG_SIZE", device.CodeInvalidArgument},
	-52:   {"CL_INVALID_KERNEL_ARGS", device.CodeInvalidArgument},
	-53:   {"CL_INVALID_WORK_DIMENSION", device.CodeInvalidArgument},
	-54:   {"CL_INVALID_WORK_GROUP_SIZE", device.CodeInvalidArgument},
	-55:   {"CL_INVALID_WORK_ITEM_SIZE", device.CodeInvalidArgument},
	-56:   {"CL_INVALID_GLOBAL_OFFSET", device.CodeInvalidArgument},
	-57:   {"CL_INVALID_EVENT_WAIT_LIST", device.CodeInvalidArgument},
	-58:   {"CL_INVALID_EVENT", device.CodeInvalidArgument},
	-59:   {"CL_INVALID_OPERATION", device.CodeUnsupported},
	-60:   {"CL_INVALID_GL_OBJECT", device.CodeInvalidArgument},
	-61:   {"CL_INVALID_BUFFER_SIZE", device.CodeInvalidArgument},
	-62:   {"CL_INVALID_MIP_LEVEL", device.CodeInvalidArgument},
	-63:   {"CL_INVALID_GLOBAL_WORK_SIZE", device.CodeInvalidArgument},
	-64:   {"CL_INVALID_PROPERTY", device.CodeInvalidArgument},
	-65:   {"CL_INVALID_IMAGE_DESCRIPTOR", device.CodeInvalidArgument},
	-66:   {"CL_INVALID_COMPILER_OPTIONS", device.CodeInvalidBinary},
	-67:   {"CL_INVALID_LINKER_OPTIONS", device.CodeInvalidBinary},
	-68:   {"CL_INVALID_DEVICE_PARTITION_COUNT", device.CodeInvalidArgument},
	-69:   {"CL_INVALID_PIPE_SIZE", device.CodeInvalidArgument},
	-70:   {"CL_INVALID_DEVICE_QUEUE", device.CodeInvalidArgument},
	-71:   {"CL_INVALID_SPEC_ID", device.CodeInvalidArgument},
	-72:   {"CL_MAX_SIZE_RESTRICTION_EXCEEDED", device.CodeOutOfResources},
	-1001: {"CL_PLATFORM_NOT_FOUND_KHR", device.CodeNotFound},
}

// StatusName returns the C name of an OpenCL status, or "CL_STATUS(n)" for
// a vendor status the headers do not define.
func StatusName(st int32) string {
	if s, ok := statuses[st]; ok {
		return s.name
	}
	return fmt.Sprintf("CL_STATUS(%d)", st)
}

// StatusCode returns the device.Code of an OpenCL status (CodeUnknown for
// vendor statuses).
func StatusCode(st int32) device.Code {
	if s, ok := statuses[st]; ok {
		return s.code
	}
	return device.CodeUnknown
}

// StatusOf returns the status of the first *Error in err's chain, or 0.
func StatusOf(err error) int32 {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// CodeOf returns the device.Code of the first *Error in err's chain, or
// CodeUnknown.
func CodeOf(err error) device.Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return device.CodeUnknown
}

// check turns a status into nil or an *Error naming fn.
func check(fn string, st int32) error {
	if st == SUCCESS {
		return nil
	}
	return &Error{Func: fn, Status: st}
}
