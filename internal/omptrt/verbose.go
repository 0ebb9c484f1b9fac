package omptrt

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// toolVarEnabled reads OMP_TOOL: enabled (the default) or disabled, case
// insensitive, surrounding blanks ignored. Anything else gets a one-line
// warning and the default.
func toolVarEnabled() bool {
	v := strings.ToLower(strings.TrimSpace(getenv("OMP_TOOL")))
	switch v {
	case "", "enabled":
		return true
	case "disabled":
		return false
	}
	fmt.Fprintf(stderr, "gompt: OMP_TOOL=%q is not valid (use enabled or disabled); using enabled\n", getenv("OMP_TOOL"))
	vlogf("OMP_TOOL = %q is not valid; using enabled.", getenv("OMP_TOOL"))
	return true
}

// llvmProfile is GOMPT_TOOL_PROFILE=llvm: events LLVM's runtime never
// dispatches (target_map, target_map_emi) answer ompt_set_never and are
// never dispatched, for tools written against LLVM that register them
// without expecting them. Set by Start before any tool is asked.
var llvmProfile bool

// readProfile reads GOMPT_TOOL_PROFILE: openmp (default: every event
// OpenMP 5.2 defines that gompt has) or llvm (as LLVM's runtime answers
// set_callback), case-insensitive, blanks ignored; anything else is a
// one-line warning and openmp.
func readProfile() bool {
	raw := getenv("GOMPT_TOOL_PROFILE")
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "", "openmp":
		return false
	case "llvm":
		vlogf("GOMPT_TOOL_PROFILE = llvm: target_map and target_map_emi answer ompt_set_never, as in LLVM.")
		return true
	}
	fmt.Fprintf(stderr, "gompt: GOMPT_TOOL_PROFILE=%q is not valid (use openmp or llvm); using openmp\n", raw)
	vlogf("GOMPT_TOOL_PROFILE = %q is not valid; using openmp.", raw)
	return false
}

var (
	vmu    sync.Mutex
	vw     io.Writer
	vclose io.Closer
)

// openVerbose reads OMP_TOOL_VERBOSE_INIT: disabled (default), stdout,
// stderr (case insensitive), or a file name to create.
func openVerbose() {
	raw := getenv("OMP_TOOL_VERBOSE_INIT")
	v := strings.TrimSpace(raw)
	vmu.Lock()
	defer vmu.Unlock()
	switch strings.ToLower(v) {
	case "", "disabled":
		return
	case "stdout":
		vw = os.Stdout
		return
	case "stderr":
		vw = stderr
		return
	}
	f, err := os.Create(v)
	if err != nil {
		fmt.Fprintf(stderr, "gompt: OMP_TOOL_VERBOSE_INIT=%q: %v (use disabled, stdout, stderr or a file name); logging disabled\n", raw, err)
		return
	}
	vw, vclose = f, f
}

func closeVerbose() {
	vmu.Lock()
	defer vmu.Unlock()
	if vclose != nil {
		vclose.Close()
	}
	vw, vclose = nil, nil
}

// vlogf writes one line to the OMP_TOOL_VERBOSE_INIT log, if it is open.
func vlogf(format string, args ...any) {
	vmu.Lock()
	defer vmu.Unlock()
	if vw == nil {
		return
	}
	fmt.Fprintf(vw, format+"\n", args...)
}
