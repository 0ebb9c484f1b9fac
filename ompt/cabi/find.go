//go:build cgo

package cabi

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "cabi.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/ompt"
)

// Available reports whether this build can load C tools (cgo is on).
const Available = true

func init() { ompt.RegisterFinder(FinderName, find) }

var (
	rvOnce sync.Once
	rvC    *C.char // runtime_version as C sees it: immutable, never freed
)

// find is the Finder: the address space first, then OMP_TOOL_LIBRARIES
// in order; the first ompt_start_tool that returns non-NULL is the tool.
func find(ompVersion int, runtimeVersion string, log func(string)) []ompt.Found {
	rvOnce.Do(func() { rvC = C.CString(runtimeVersion) })
	logf := func(format string, args ...any) { log(fmt.Sprintf(format, args...)) }

	sym := C.CString("ompt_start_tool")
	defer C.free(unsafe.Pointer(sym))

	logf("C tools: searching for ompt_start_tool in the address space...")
	if p := C.gompt_cabi_dlsym_default(sym); p != nil {
		where := "address space"
		if f := C.gompt_cabi_dladdr_file(p); f != nil {
			where = C.GoString(f)
			C.free(unsafe.Pointer(f))
			if where == "" {
				where = "the program"
			}
		}
		logf("C tools: ompt_start_tool found in %s; calling it.", where)
		if res := C.gompt_cabi_call_start(p, C.uint(ompVersion), rvC); res != nil {
			logf("C tools: %s: ompt_start_tool returned a result; using this tool.", where)
			return []ompt.Found{newTool(where, res)}
		}
		logf("C tools: %s: ompt_start_tool returned NULL; skipped, continuing the search.", where)
	} else {
		logf("C tools: no ompt_start_tool in the address space.")
	}

	libs := os.Getenv("OMP_TOOL_LIBRARIES")
	if libs == "" {
		logf("C tools: OMP_TOOL_LIBRARIES is not set: no library to try.")
		return nil
	}
	logf("C tools: searching OMP_TOOL_LIBRARIES = %q...", libs)
	for _, name := range strings.Split(libs, ":") {
		if name == "" {
			continue
		}
		if f := tryLibrary(name, sym, ompVersion, logf); f != nil {
			return []ompt.Found{*f}
		}
	}
	logf("C tools: no library in OMP_TOOL_LIBRARIES provided a tool.")
	// The one bad-setting warning of the C search: the program asked for
	// a tool and runs without one.
	fmt.Fprintf(os.Stderr, "gompt: OMP_TOOL_LIBRARIES=%q: no library there provided a tool (OMP_TOOL_VERBOSE_INIT=stderr says why); running without a C tool\n", libs)
	return nil
}

// tryLibrary opens one OMP_TOOL_LIBRARIES entry and calls its
// ompt_start_tool. A library that provides no tool is closed again.
func tryLibrary(name string, sym *C.char, ompVersion int, logf func(string, ...any)) *ompt.Found {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var cerr *C.char
	h := C.gompt_cabi_dlopen(cname, &cerr)
	if h == nil {
		msg := takeCString(cerr)
		why := "cannot be loaded (not a shared library for this machine?)"
		if strings.Contains(msg, "No such file") {
			why = "not found"
		}
		logf("C tools: %q: %s: %s; skipped.", name, why, msg)
		return nil
	}
	p := C.gompt_cabi_dlsym(h, sym, &cerr)
	if p == nil {
		logf("C tools: %q: loaded, but no ompt_start_tool symbol (%s); skipped.", name, takeCString(cerr))
		C.gompt_cabi_dlclose(h)
		return nil
	}
	res := C.gompt_cabi_call_start(p, C.uint(ompVersion), rvC)
	if res == nil {
		logf("C tools: %q: ompt_start_tool returned NULL; skipped.", name)
		C.gompt_cabi_dlclose(h)
		return nil
	}
	logf("C tools: %q: ompt_start_tool returned a result; using this tool.", name)
	f := newTool(name, res)
	return &f
}

// takeCString returns a malloc'd C string as a Go string and frees it.
func takeCString(s *C.char) string {
	if s == nil {
		return "unknown error"
	}
	defer C.free(unsafe.Pointer(s))
	return C.GoString(s)
}
