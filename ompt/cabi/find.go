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

	"github.com/gompt/gompt/internal/omptrt"
)

// Available reports whether this build can load C tools (cgo is on).
const Available = true

func init() { omptrt.RegisterFinder(FinderName, find) }

var (
	rvOnce sync.Once
	rvC    *C.char // runtime_version as C sees it: immutable, never freed
)

// find is the Finder: the address space first, then OMP_TOOL_LIBRARIES
// in order; the first ompt_start_tool that returns non-NULL is the tool.
// Its OMP_TOOL_VERBOSE_INIT lines are LLVM's libomp's (ompt-general.cpp),
// line for line, so scripts that grep libomp's log read gompt's the same.
func find(ompVersion int, runtimeVersion string, log func(string)) []omptrt.Found {
	rvOnce.Do(func() { rvC = C.CString(runtimeVersion) })

	sym := C.CString("ompt_start_tool")
	defer C.free(unsafe.Pointer(sym))

	const searching = "Search for OMP tool in current address space... "
	if p := addressSpaceStart(sym); p != nil {
		where := "the program"
		if f := C.gompt_cabi_dladdr_file(p); f != nil {
			if w := C.GoString(f); w != "" {
				where = w
			}
			C.free(unsafe.Pointer(f))
		}
		if res := C.gompt_cabi_call_start(p, C.uint(ompVersion), rvC); res != nil {
			log(searching + "Success.")
			log("Tool was started and is using the OMPT interface.")
			return []omptrt.Found{newTool(where, res)}
		}
	}
	log(searching + "Failed.")

	libs, ok := os.LookupEnv("OMP_TOOL_LIBRARIES")
	if !ok {
		log("No OMP_TOOL_LIBRARIES defined.")
		return nil
	}
	log("Searching tool libraries...")
	log("OMP_TOOL_LIBRARIES = " + libs)
	for _, name := range strings.Split(libs, ":") {
		if name == "" {
			continue
		}
		if f := tryLibrary(name, sym, ompVersion, log); f != nil {
			return []omptrt.Found{*f}
		}
	}
	// The one bad-setting warning of the C search: the program asked for
	// a tool and runs without one (an empty list asks for none).
	if strings.Trim(libs, ":") == "" {
		return nil
	}
	fmt.Fprintf(os.Stderr, "gompt: OMP_TOOL_LIBRARIES=%q: no library there provided a tool (OMP_TOOL_VERBOSE_INIT=stderr says why); running without a C tool\n", libs)
	return nil
}

// addressSpaceStart returns an ompt_start_tool already in the process: one
// linked into the program (found through a weak reference resolved when
// the program was linked, with or without -rdynamic), else one the
// dynamic loader knows (a shared library, LD_PRELOAD); nil if none.
func addressSpaceStart(sym *C.char) unsafe.Pointer {
	if p := C.gompt_cabi_linked_start(); p != nil {
		return p
	}
	return C.gompt_cabi_dlsym_default(sym)
}

// tryLibrary opens one OMP_TOOL_LIBRARIES entry and calls its
// ompt_start_tool. A library that provides no tool is closed again.
func tryLibrary(name string, sym *C.char, ompVersion int, log func(string)) *omptrt.Found {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var cerr *C.char
	h := C.gompt_cabi_dlopen(cname, &cerr)
	if h == nil {
		log("Opening " + name + "... Failed: " + takeCString(cerr))
		return nil
	}
	log("Opening " + name + "... Success. ")
	searching := "Searching for ompt_start_tool in " + name + "... "
	p := C.gompt_cabi_dlsym(h, sym, &cerr)
	if p == nil {
		log(searching + "Failed: " + takeCString(cerr))
		C.gompt_cabi_dlclose(h)
		return nil
	}
	res := C.gompt_cabi_call_start(p, C.uint(ompVersion), rvC)
	if res == nil {
		log(searching + "Found but not using the OMPT interface.")
		log("Continuing search...")
		C.gompt_cabi_dlclose(h)
		return nil
	}
	log(searching + "Success.")
	log("Tool was started and is using the OMPT interface.")
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
