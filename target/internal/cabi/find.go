//go:build cgo

package cabi

/*
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

	"github.com/gompt/gompt/internal/dl"
	"github.com/gompt/gompt/target/internal/omptrt"
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

	const searching = "Search for OMP tool in current address space... "
	if p := addressSpaceStart(); p != nil {
		where := "the program"
		if w := dl.FileOf(p); w != "" {
			where = w
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
		if f := tryLibrary(name, ompVersion, log); f != nil {
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
func addressSpaceStart() unsafe.Pointer {
	if p := C.gompt_cabi_linked_start(); p != nil {
		return p
	}
	return dl.Default(startSym)
}

// startSym is the tool's entry point.
const startSym = "ompt_start_tool"

// tryLibrary opens one OMP_TOOL_LIBRARIES entry (lazily, as libomp does)
// and calls its ompt_start_tool. A library that provides no tool is closed
// again; one that does stays open for the rest of the process.
func tryLibrary(name string, ompVersion int, log func(string)) *omptrt.Found {
	lib, err := dl.OpenLazy(name)
	if err != nil {
		log("Opening " + name + "... Failed: " + err.Error())
		return nil
	}
	log("Opening " + name + "... Success. ")
	searching := "Searching for ompt_start_tool in " + name + "... "
	p, err := lib.Sym(startSym)
	if err != nil {
		log(searching + "Failed: " + err.Error())
		lib.Close()
		return nil
	}
	res := C.gompt_cabi_call_start(p, C.uint(ompVersion), rvC)
	if res == nil {
		log(searching + "Found but not using the OMPT interface.")
		log("Continuing search...")
		lib.Close()
		return nil
	}
	log(searching + "Success.")
	log("Tool was started and is using the OMPT interface.")
	f := newTool(name, res)
	return &f
}
