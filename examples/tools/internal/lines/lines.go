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
	flagNames = []struct {
		bit  uint32
		name string
	}{{ompt.MapFlagTo, "to"}, {ompt.MapFlagFrom, "from"}, {ompt.MapFlagAlloc, "alloc"},
		{ompt.MapFlagRelease, "release"}, {ompt.MapFlagDelete, "delete"}, {ompt.MapFlagImplicit, "implicit"}}
)

// Kind names a target construct kind: "target", "target_enter_data", ...
// (ompt.TargetKind's name without "ompt_").
func Kind(k ompt.TargetKind) string { return strings.TrimPrefix(k.String(), "ompt_") }

// Op names a data operation: "alloc", "transfer_to_device", ...
// (ompt.DataOpKind's name without "ompt_target_data_").
func Op(k ompt.DataOpKind) string { return strings.TrimPrefix(k.String(), "ompt_target_data_") }

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
