// Package lines is what the example Go tools share: one locked output for
// their "ompt ..." lines, and the names they print for target kinds, data
// operations and map flags (the same names as the C example tool's).
package lines

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/gompt/gompt/ompt"
)

// Out is one tool's output.
type Out struct {
	mu sync.Mutex
	w  io.Writer
}

// NewOut returns an output to standard output.
func NewOut() *Out { return &Out{w: os.Stdout} }

// SetOutput sends the lines to w.
func (o *Out) SetOutput(w io.Writer) {
	o.mu.Lock()
	o.w = w
	o.mu.Unlock()
}

// Printf prints one line, "ompt " and the formatted text.
func (o *Out) Printf(format string, args ...any) {
	o.mu.Lock()
	fmt.Fprintf(o.w, "ompt "+format+"\n", args...)
	o.mu.Unlock()
}

var (
	kinds = map[ompt.TargetKind]string{
		ompt.KindTarget: "target", ompt.KindTargetEnterData: "target_enter_data", ompt.KindTargetExitData: "target_exit_data",
		ompt.KindTargetUpdate: "target_update", ompt.KindTargetNowait: "target_nowait",
		ompt.KindTargetEnterDataNowait: "target_enter_data_nowait", ompt.KindTargetExitDataNowait: "target_exit_data_nowait",
		ompt.KindTargetUpdateNowait: "target_update_nowait",
	}
	ops = map[ompt.DataOpKind]string{
		ompt.DataOpAlloc: "alloc", ompt.DataOpTransferToDevice: "transfer_to_device", ompt.DataOpTransferFromDevice: "transfer_from_device",
		ompt.DataOpDelete: "delete", ompt.DataOpAssociate: "associate", ompt.DataOpDisassociate: "disassociate",
		ompt.DataOpMemset: "memset", ompt.DataOpAllocAsync: "alloc_async",
		ompt.DataOpTransferToDeviceAsync: "transfer_to_device_async", ompt.DataOpTransferFromDeviceAsync: "transfer_from_device_async",
		ompt.DataOpDeleteAsync: "delete_async",
	}
	flagNames = []struct {
		bit  uint32
		name string
	}{{ompt.MapFlagTo, "to"}, {ompt.MapFlagFrom, "from"}, {ompt.MapFlagAlloc, "alloc"},
		{ompt.MapFlagRelease, "release"}, {ompt.MapFlagDelete, "delete"}, {ompt.MapFlagImplicit, "implicit"}}
)

// Kind names a target construct kind: "target", "target_enter_data", ...
func Kind(k ompt.TargetKind) string {
	if s, ok := kinds[k]; ok {
		return s
	}
	return fmt.Sprint(int(k))
}

// Op names a data operation: "alloc", "transfer_to_device", ...
func Op(k ompt.DataOpKind) string {
	if s, ok := ops[k]; ok {
		return s
	}
	return fmt.Sprint(int(k))
}

// Endpoint names a scope endpoint: "begin" or "end".
func Endpoint(e ompt.Endpoint) string {
	if e == ompt.ScopeEnd {
		return "end"
	}
	return "begin"
}

// Flags names map flags: "to|from", or "none".
func Flags(f uint32) string {
	var s []string
	for _, b := range flagNames {
		if f&b.bit != 0 {
			s = append(s, b.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "|")
}
