// Package printer is an example OMPT tool written in Go. Importing it
// registers a tool that asks for every target and device callback and
// prints one line per event, in a stable, greppable key=value format:
//
//	ompt device_initialize dev=0 type="host gompt host device"
//	ompt target begin kind=target dev=0 target_id=2 code=0x4a1b2c
//	ompt target_data_op target_id=2 host_op_id=3 op=alloc src=0x0/-1 dest=0x7e0000000000/0 bytes=4000 code=0x4a1b2c
//	ompt target_map target_id=2 n=1 host=0xc000010000 dev=0x7e0000000000 bytes=4000 flags=to|from
//	ompt target_submit target_id=2 host_op_id=5 teams=0
//	ompt target end kind=target dev=0 target_id=2 code=0x4a1b2c
//
// Every example links it with `-tags ompt_printer`:
//
//	go run -tags ompt_printer ./examples/veccopy
//
// The C tool in examples/tools/ctool prints the same lines.
package printer

import (
	"fmt"
	"github.com/gompt/gompt/examples/tools/internal/lines"
	"io"
	"os"
	"strings"

	"github.com/gompt/gompt/ompt"
)

var out = lines.NewOut()

// SetOutput sends the lines to w instead of standard output.
func SetOutput(w io.Writer) { out.SetOutput(w) }

func printf(format string, args ...any) { out.Printf(format, args...) }

func init() {
	ompt.RegisterTool("printer", func(ompVersion int, runtimeVersion string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: initialize, Finalize: finalize}
	})
}

func list[T any](xs []T, format string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, ",")
}

func initialize(lookup ompt.LookupFunc, initialDeviceNum int, toolData *ompt.Data) int {
	set, ok := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
	if !ok {
		fmt.Fprintln(os.Stderr, "printer: no ompt_set_callback")
		return 0
	}
	printf("initialize initial_device=%d", initialDeviceNum)
	set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, typ string, _ *ompt.DeviceHandle, _ ompt.LookupFunc, _ string) {
		printf("device_initialize dev=%d type=%q", dev, typ)
	}))
	set(ompt.CallbackDeviceFinalize, ompt.DeviceFinalizeCallback(func(dev int) {
		printf("device_finalize dev=%d", dev)
	}))
	set(ompt.CallbackDeviceLoad, ompt.DeviceLoadCallback(func(dev int, file string, _ int64, _ uintptr, bytes uint64, _, _ uintptr, module uint64) {
		printf("device_load dev=%d file=%q bytes=%d module=%d", dev, file, bytes, module)
	}))
	set(ompt.CallbackDeviceUnload, ompt.DeviceUnloadCallback(func(dev int, module uint64) {
		printf("device_unload dev=%d module=%d", dev, module)
	}))
	set(ompt.CallbackTarget, ompt.TargetCallback(func(kind ompt.TargetKind, ep ompt.Endpoint, dev int, _ *ompt.Data, id uint64, code uintptr) {
		printf("target %s kind=%s dev=%d target_id=%d code=%#x", ep, lines.Kind(kind), dev, id, code)
	}))
	set(ompt.CallbackTargetDataOp, ompt.TargetDataOpCallback(func(id, op uint64, kind ompt.DataOpKind, src uintptr, srcDev int, dst uintptr, dstDev int, bytes uint64, code uintptr) {
		printf("target_data_op target_id=%d host_op_id=%d op=%s src=%#x/%d dest=%#x/%d bytes=%d code=%#x",
			id, op, lines.Op(kind), src, srcDev, dst, dstDev, bytes, code)
	}))
	set(ompt.CallbackTargetSubmit, ompt.TargetSubmitCallback(func(id, op uint64, teams uint32) {
		printf("target_submit target_id=%d host_op_id=%d teams=%d", id, op, teams)
	}))
	set(ompt.CallbackTargetMap, ompt.TargetMapCallback(func(id uint64, host, dev []uintptr, bytes []uint64, fl []uint32, code uintptr) {
		fs := make([]string, len(fl))
		for i, f := range fl {
			fs[i] = lines.Flags(f)
		}
		printf("target_map target_id=%d n=%d host=%s dev=%s bytes=%s flags=%s",
			id, len(host), list(host, "%#x"), list(dev, "%#x"), list(bytes, "%d"), strings.Join(fs, ","))
	}))
	return 1
}

func finalize(toolData *ompt.Data) { printf("finalize") }
