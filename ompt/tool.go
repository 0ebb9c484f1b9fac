package ompt

import (
	"runtime"

	"github.com/gompt/gompt/internal/omptlink"
)

// Version is gompt's version, part of RuntimeVersion.
const Version = "0.1.0"

// OMPVersion is the omp_version passed to start functions: the _OPENMP
// value of OpenMP 5.1 (202011), the version whose OMPT interface (EMI
// callbacks, omp-tools.h of 5.1) gompt implements. Where 5.1 and 5.2
// differ, gompt follows 5.2 (only EMI forms are called when both forms are
// registered).
const OMPVersion = 202011

// OMPVersion60 is the omp_version passed to start functions with
// GOMPT_OMPT_VERSION=6.0: the _OPENMP value of OpenMP 6.0 (202411).
const OMPVersion60 = 202411

// StartFunc is the Go form of ompt_start_tool. gompt calls it once, at
// start-up, with OMPVersion (OMPVersion60 with GOMPT_OMPT_VERSION=6.0)
// and RuntimeVersion. A tool that does not want
// to run returns nil; otherwise its result activates it.
type StartFunc func(ompVersion int, runtimeVersion string) *StartResult

// StartResult is the Go form of ompt_start_tool_result_t. Initialize is
// called once, before any OpenMP event, with the tool's own lookup
// function, the initial (host) device number and a pointer to ToolData; a
// return of 0 drops the tool. Finalize (may be nil) is called once, at
// runtime shutdown or when the tool calls ompt_finalize_tool, with the
// same pointer. The runtime keeps the StartResult for the life of the
// tool; the tool must not change it after returning it.
type StartResult struct {
	Initialize func(lookup LookupFunc, initialDeviceNum int, toolData *Data) int
	Finalize   func(toolData *Data)
	ToolData   Data
}

// RegisterTool registers a Go tool under name, in the manner of a
// statically linked ompt_start_tool. Call it from the tool package's init
// function. It panics if start is nil or name is already registered. A tool
// registered after Start is not asked.
//
// At Start every registered tool is asked, in registration order; each
// that returns a non-nil result is activated (nil means "not me, keep
// looking"). The standard's "first ompt_start_tool found wins" is about
// one C symbol found in several places; Go tools register under distinct
// names, so several can be active at once, each with its own tool data,
// callbacks and data slots. Tools found by a Finder (C tools) come after
// the Go tools.
func RegisterTool(name string, start StartFunc) {
	if start == nil {
		panic("ompt: RegisterTool " + name + " with nil start function")
	}
	omptlink.Register(name, start)
}

var runtimeVersion = "gompt " + Version + " (" + runtime.Version() + ")"

// RuntimeVersion returns the runtime_version string given to start
// functions, "gompt 0.1.0 (go1.26.8)". It never changes during a run.
func RuntimeVersion() string { return runtimeVersion }
