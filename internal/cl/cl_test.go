package cl

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
)

func TestStatusTable(t *testing.T) {
	for st := int32(-72); st <= 0; st++ {
		if st < -19 && st > -30 {
			continue // unassigned in the headers
		}
		if StatusName(st) == fmt.Sprintf("CL_STATUS(%d)", st) {
			t.Errorf("status %d has no name", st)
		}
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
		if StatusName(tc.st) != tc.name || StatusCode(tc.st) != tc.code {
			t.Errorf("status %d: %s %s, want %s %s", tc.st, StatusName(tc.st), StatusCode(tc.st), tc.name, tc.code)
		}
		wrapped := fmt.Errorf("context: %w", err)
		if StatusOf(wrapped) != tc.st || CodeOf(wrapped) != tc.code {
			t.Errorf("status %d through a wrapper: %d %s", tc.st, StatusOf(wrapped), CodeOf(wrapped))
		}
		if want := fmt.Sprintf("clFoo: %s (%d)", tc.name, tc.st); err.Error() != want {
			t.Errorf("Error() = %q, want %q", err, want)
		}
	}
	if check("clFoo", 0) != nil {
		t.Error("CL_SUCCESS is an error")
	}
	if StatusOf(errors.New("x")) != 0 || CodeOf(nil) != device.CodeUnknown {
		t.Error("StatusOf/CodeOf of a non-OpenCL error")
	}
}

func TestProbe(t *testing.T) {
	if !Available {
		if err := Probe("libc.so.6"); err == nil || !strings.Contains(err.Error(), "without cgo") {
			t.Fatalf("Probe without cgo: %v", err)
		}
		return
	}
	err := Probe("libc.so.6")
	if err == nil || !strings.Contains(err.Error(), "not an OpenCL library") || !strings.Contains(err.Error(), "clGetPlatformIDs") {
		t.Errorf("Probe(libc.so.6) = %v, want an error naming the missing entry point", err)
	}
	err = Probe("/nonexistent/libOpenCL.so.1")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/libOpenCL.so.1") || !strings.Contains(err.Error(), LibraryEnv) {
		t.Errorf("Probe of a missing file = %v", err)
	}
}
