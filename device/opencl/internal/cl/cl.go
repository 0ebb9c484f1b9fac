//go:build cgo

package cl

/*
#include "cl.h"

// The entry points, resolved once by gompt_cl_set (Init).
void *gompt_cl_fn[F_N];

static void gompt_cl_set(int i, void *p) { gompt_cl_fn[i] = p; }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/internal/dl"
)

// Available reports whether this build can call OpenCL (cgo is on).
const Available = true

// fnNames are the C names of the entry points, in the order of the C enum.
var fnNames = [...]string{
	"clGetPlatformIDs", "clGetPlatformInfo", "clGetDeviceIDs", "clGetDeviceInfo",
	"clCreateContext", "clReleaseContext", "clCreateCommandQueue", "clReleaseCommandQueue",
	"clCreateBuffer", "clCreateSubBuffer", "clReleaseMemObject",
	"clEnqueueReadBuffer", "clEnqueueWriteBuffer", "clEnqueueCopyBuffer",
	"clCreateProgramWithSource", "clBuildProgram", "clGetProgramBuildInfo", "clGetProgramInfo", "clReleaseProgram",
	"clCreateKernel", "clGetKernelInfo", "clGetKernelWorkGroupInfo", "clSetKernelArg", "clReleaseKernel",
	"clEnqueueNDRangeKernel", "clFinish", "clFlush", "clEnqueueMarker", "clWaitForEvents",
	"clGetEventInfo", "clGetEventProfilingInfo", "clReleaseEvent",
	// optional from here
	"clEnqueueMarkerWithWaitList", "clCreateCommandQueueWithProperties",
	"clGetDeviceAndHostTimer",
	"clSetEventCallback", "clCreateUserEvent", "clSetUserEventStatus",
	"clEnqueueMapBuffer", "clEnqueueUnmapMemObject",
	"clEnqueueBarrierWithWaitList",
	"clGetKernelArgInfo",
}

const firstOptional = C.F_EnqueueMarkerWithWaitList

func init() {
	if len(fnNames) != C.F_N {
		panic("cl: fnNames does not match the C entry-point table")
	}
}

var (
	initOnce sync.Once
	initErr  error
	libName  string
	has      = map[string]bool{}
)

// LibraryNames returns the names Init tries, in order: $GOMPT_OPENCL_LIBRARY
// alone when set, else libOpenCL.so.1 then libOpenCL.so.
func LibraryNames() []string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return []string{p}
	}
	return []string{"libOpenCL.so.1", "libOpenCL.so"}
}

// Init loads the OpenCL library and resolves its entry points, once per
// process; later calls return the first call's result. The error says which
// library could not be opened or which required entry point it lacks.
func Init() error {
	initOnce.Do(func() {
		lib, syms, err := open(LibraryNames())
		if err != nil {
			initErr = err
			return
		}
		libName = lib.Name
		for i, p := range syms {
			if p != nil {
				C.gompt_cl_set(C.int(i), p)
				has[fnNames[i]] = true
			}
		}
	})
	return initErr
}

// Library returns the name the library was opened under ("" before a
// successful Init).
func Library() string { return libName }

// Has reports whether the loaded library exports the named entry point
// ("clGetDeviceAndHostTimer"). An ICD loader exports every entry point of
// its version even when a platform lacks it, so callers also check the
// platform's version before calling an optional entry point.
func Has(name string) bool { return has[name] }

// Probe opens the first loadable library of names and checks that it has
// every required entry point, without installing it; it closes the library
// before returning. Tests use it to check the error for a bad library.
func Probe(names ...string) error {
	lib, _, err := open(names)
	if err != nil {
		return err
	}
	return lib.Close()
}

func open(names []string) (*dl.Lib, []unsafe.Pointer, error) {
	lib, err := dl.Open(names...)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load the OpenCL library (set %s to its path): %w", LibraryEnv, err)
	}
	syms := make([]unsafe.Pointer, len(fnNames))
	for i, n := range fnNames {
		p, err := lib.Sym(n)
		if err != nil {
			if i < firstOptional {
				lib.Close()
				return nil, nil, fmt.Errorf("%s is not an OpenCL library: it lacks %s: %w", lib.Name, n, err)
			}
			continue
		}
		syms[i] = p
	}
	return lib, syms, nil
}

// errNotInit is returned by calls made before a successful Init.
var errNotInit = errors.New("cl: OpenCL library not loaded (call Init first)")

func ready() error {
	if libName == "" {
		if initErr != nil {
			return initErr
		}
		return errNotInit
	}
	return nil
}

func chk(fn string, st C.cl_int) error { return check(fn, int32(st)) }

// info runs a clGet*Info query twice: once for the size, once for the value.
func info(fn string, q func(size C.size_t, v unsafe.Pointer, ret *C.size_t) C.cl_int) ([]byte, error) {
	var n C.size_t
	if err := chk(fn, q(0, nil, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, n)
	if err := chk(fn, q(n, unsafe.Pointer(&b[0]), nil)); err != nil {
		return nil, err
	}
	return b, nil
}

func cstring(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func leUint(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
