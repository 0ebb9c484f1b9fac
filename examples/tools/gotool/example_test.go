package gotool_test

import (
	"fmt"
	"strings"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
)

// A Go tool registers itself from an init function, before the runtime
// starts (on the program's first target call).
func init() {
	ompt.RegisterTool("example", func(ompVersion int, runtime string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: initialize, Finalize: finalize}
	})
}

// initialize registers two callbacks: the begin and end of every target
// construct, and every data operation (allocations, copies, deletions;
// onDataOp prints the copies).
func initialize(lookup ompt.LookupFunc, initialDevice int, toolData *ompt.Data) int {
	set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
	set(ompt.CallbackTarget, ompt.TargetCallback(onTarget))
	set(ompt.CallbackTargetDataOp, ompt.TargetDataOpCallback(onDataOp))
	return 1 // keep the tool active
}

func onTarget(kind ompt.TargetKind, ep ompt.Endpoint, dev int, task *ompt.Data, targetID uint64, codePtr uintptr) {
	fmt.Println(kind, ep)
}

func onDataOp(targetID, hostOpID uint64, op ompt.DataOpKind, src uintptr, srcDev int, dst uintptr, dstDev int, bytes uint64, codePtr uintptr) {
	if op == ompt.DataOpTransferToDevice || op == ompt.DataOpTransferFromDevice {
		fmt.Printf("  %s %d bytes\n", strings.TrimPrefix(op.String(), "ompt_target_data_"), bytes)
	}
}

func finalize(toolData *ompt.Data) { fmt.Println("tool finalized") }

func Example() {
	x := []float32{1, 2, 3, 4}
	y := make([]float32, 4)
	err := target.Target(target.Region{
		Device: target.Dev(target.DefaultDevice),
		Kernel: kernels.Saxpy,
		Shape:  target.N(len(x)),
		Maps:   []target.Map{target.To(x), target.ToFrom(y)},
		Args:   []target.Arg{target.Int(len(x)), target.Float32(1), target.Slice(x), target.Slice(y)},
	})
	if err != nil {
		fmt.Println(err)
	}
	target.Shutdown() // finalizes the tools
	// Output:
	// ompt_target begin
	//   transfer_to_device 16 bytes
	//   transfer_to_device 16 bytes
	//   transfer_from_device 16 bytes
	// ompt_target end
	// tool finalized
}
