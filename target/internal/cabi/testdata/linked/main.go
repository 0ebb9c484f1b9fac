// Command linked is a Go program with a C tool linked into it through
// cgo (tool.c defines ompt_start_tool), built with no special flags: the
// C search must find the tool in the address space (TestLinkedStartTool).
package main

// tool.c is compiled with omp-tools.h on the include path of CGO_CFLAGS.

import "C"

import (
	"fmt"

	_ "github.com/gompt/gompt/target/internal/cabi"
	"github.com/gompt/gompt/target/internal/omptrt"
)

type rt struct{}

func (rt) NumDevices() int { return 0 }

func main() {
	omptrt.Start(rt{})
	fmt.Printf("state=%v\n", omptrt.CurrentState())
	omptrt.Finalize()
}
