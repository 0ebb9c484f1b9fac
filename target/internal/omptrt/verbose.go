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
