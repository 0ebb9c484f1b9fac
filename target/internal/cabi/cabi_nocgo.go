//go:build !cgo

package cabi

import (
	"os"

	"github.com/gompt/gompt/target/internal/omptrt"
)

// Available reports whether this build can load C tools (cgo is on).
const Available = false

const numDeviceEntries = 0

func init() { omptrt.RegisterFinder(FinderName, find) }

// find reports, in the verbose log, why no C tool can be loaded.
func find(_ int, _ string, log func(string)) []omptrt.Found {
	if os.Getenv("OMP_TOOL_LIBRARIES") != "" {
		log("C tools: not available: built without cgo; OMP_TOOL_LIBRARIES ignored.")
	} else {
		log("C tools: not available: built without cgo.")
	}
	return nil
}
