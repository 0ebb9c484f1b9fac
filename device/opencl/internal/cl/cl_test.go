package cl

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStatusTable(t *testing.T) {
	for st := int32(-72); st <= 0; st++ {
		if st < -19 && st > -30 {
			continue // unassigned in the headers
		}
		assert.NotEqual(t, fmt.Sprintf("CL_STATUS(%d)", st), StatusName(st), "status %d has no name", st)
	}
	for _, tc := range []struct {
		st   int32
		name string
		code device.Code
	}{
		{-5, "CL_OUT_OF_RESOURCES", device.CodeOutOfResources},
		{-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE", device.CodeOutOfResources},
		{-11, "CL_BUILD_PROGRAM_FAILURE", device.CodeInvalidBinary},
		{-46, "CL_INVALID_KERNEL_NAME", device.CodeNotFound},
		{-54, "CL_INVALID_WORK_GROUP_SIZE", device.CodeInvalidArgument},
		{-1001, "CL_PLATFORM_NOT_FOUND_KHR", device.CodeNotFound},
		{-9999, "CL_STATUS(-9999)", device.CodeUnknown},
	} {
		err := check("clFoo", tc.st)
		assert.Equal(t, tc.name, StatusName(tc.st), "status %d: %s %s", tc.st, StatusName(tc.st), tc.code)
		assert.Equal(t, tc.code, StatusCode(tc.st), "status %d: %s %s", tc.st, StatusName(tc.st), tc.code)
		wrapped := fmt.Errorf("context: %w", err)
		assert.Equal(t, tc.st, StatusOf(wrapped), "status %d through a wrapper: %d %s", tc.st, StatusOf(wrapped), CodeOf(wrapped))
		assert.Equal(t, tc.code, CodeOf(wrapped), "status %d through a wrapper: %d %s", tc.st, StatusOf(wrapped), CodeOf(wrapped))
		assert.Equal(t, fmt.Sprintf("clFoo: %s (%d)", tc.name, tc.st), err.Error(), "Error()")
	}
	assert.Nil(t, check("clFoo", 0), "CL_SUCCESS is an error")
	assert.Zero(t, StatusOf(errors.New("x")), "StatusOf/CodeOf of a non-OpenCL error")
	assert.Equal(t, device.CodeUnknown, CodeOf(nil), "StatusOf/CodeOf of a non-OpenCL error")
}

func TestProbe(t *testing.T) {
	if !Available {
		err := Probe("libc.so.6")
		require.Error(t, err, "Probe without cgo")
		require.Contains(t, err.Error(), "without cgo", "Probe without cgo: %v", err)
		return
	}
	err := Probe("libc.so.6")
	require.Error(t, err, "Probe(libc.so.6) = %v, want an error naming the missing entry point", err)
	assert.Contains(t, err.Error(), "not an OpenCL library", "Probe(libc.so.6) = %v, want an error naming the missing entry point", err)
	assert.Contains(t, err.Error(), "clGetPlatformIDs", "Probe(libc.so.6) = %v, want an error naming the missing entry point", err)
	err = Probe("/nonexistent/libOpenCL.so.1")
	require.Error(t, err, "Probe of a missing file")
	assert.Contains(t, err.Error(), "/nonexistent/libOpenCL.so.1", "Probe of a missing file = %v", err)
	assert.Contains(t, err.Error(), LibraryEnv, "Probe of a missing file = %v", err)
}
