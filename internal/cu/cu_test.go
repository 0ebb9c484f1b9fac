package cu

import (
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
)

func TestResultNames(t *testing.T) {
	for r, name := range resultNames {
		if r.Name() != name || !strings.HasPrefix(name, "CUDA_") {
			t.Errorf("Result(%d).Name() = %q, want %q", int(r), r.Name(), name)
		}
	}
	if got := Result(12345).Name(); got != "CUresult(12345)" {
		t.Errorf("unknown result name %q", got)
	}
	codes := map[Result]device.Code{
		ERROR_INVALID_VALUE: device.CodeInvalidArgument,
		ERROR_OUT_OF_MEMORY: device.CodeOutOfResources,
		ERROR_NO_DEVICE:     device.CodeInvalidDevice,
		ERROR_INVALID_PTX:   device.CodeInvalidBinary,
		ERROR_NOT_FOUND:     device.CodeNotFound,
		801:                 device.CodeUnsupported,
		999:                 device.CodeUnknown,
	}
	for r, c := range codes {
		if r.Code() != c {
			t.Errorf("%s.Code() = %v, want %v", r.Name(), r.Code(), c)
		}
	}
	e := &Error{Func: "cuMemAlloc_v2", Result: ERROR_OUT_OF_MEMORY, Desc: "out of memory"}
	if e.Error() != "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" || e.Code() != device.CodeOutOfResources {
		t.Errorf("Error() = %q, Code() = %v", e.Error(), e.Code())
	}
}

func TestLoadMissingLibrary(t *testing.T) {
	err := Load("libgompt-no-such-cuda.so.1")
	if !Available {
		if err == nil || !strings.Contains(err.Error(), "without cgo") {
			t.Fatalf("Load without cgo: %v, want built-without-cgo", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "libgompt-no-such-cuda.so.1") || !strings.Contains(err.Error(), "cannot open") {
		t.Fatalf("Load of a missing library: %v, want the dynamic loader's message naming it", err)
	}
}
