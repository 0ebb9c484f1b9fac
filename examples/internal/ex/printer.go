//go:build ompt_printer

package ex

// Built with -tags ompt_printer, every example carries the Go OMPT printer
// tool (examples/tools/printer).
import _ "github.com/gompt/gompt/examples/tools/printer"
