package cu

import (
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResultNames(t *testing.T) {
	for r, name := range resultNames {
		assert.Equal(t, name, r.Name(), "Result(%d).Name()", int(r))
		assert.True(t, strings.HasPrefix(name, "CUDA_"), "Result(%d).Name() = %q, want %q", int(r), r.Name(), name)
	}
	got := Result(12345).Name()
	assert.Equal(t, "CUresult(12345)", got, "unknown result name %q", got)
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
		assert.Equal(t, c, r.Code(), "%s.Code()", r.Name())
	}
	e := &Error{Func: "cuMemAlloc_v2", Result: ERROR_OUT_OF_MEMORY, Desc: "out of memory"}
	assert.Equal(t, "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)", e.Error(), "Error() = %q, Code() = %v", e.Error(), e.Code())
	assert.Equal(t, device.CodeOutOfResources, e.Code(), "Error() = %q, Code() = %v", e.Error(), e.Code())
}

func TestLoadMissingLibrary(t *testing.T) {
	err := Load("libgompt-no-such-cuda.so.1")
	if !Available {
		require.Error(t, err, "Load without cgo: %v, want built-without-cgo", err)
		require.Contains(t, err.Error(), "without cgo", "Load without cgo: %v, want built-without-cgo", err)
		return
	}
	require.Error(t, err, "Load of a missing library: %v, want the dynamic loader's message naming it", err)
	require.Contains(t, err.Error(), "libgompt-no-such-cuda.so.1", "Load of a missing library: %v, want the dynamic loader's message naming it", err)
	require.Contains(t, err.Error(), "cannot open", "Load of a missing library: %v, want the dynamic loader's message naming it", err)
}
