//go:build ompt_tracer

package ex

// Built with -tags ompt_tracer, every example carries the Go OMPT tracer
// tool (examples/tools/tracer), which prints every device trace record.
import _ "github.com/gompt/gompt/examples/tools/tracer"
