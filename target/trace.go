package target

import (
	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/ompt"
)

// Device tracing: while a tool traces a construct's device, each of the
// construct's device operations also becomes a trace record with the
// device's begin and end times and the plugin's native record. After an
// operation's DataOpEnd or SubmitEnd the construct makes one call to the
// engine that says how its times become known (target/internal/omptrt's
// trace_path.go): TraceDone for synchronous operations, TraceTimed with
// the queue's own timing, TraceBracketed with queue events around it. The
// engine keeps the records that wait for times and writes them, in issue
// order, when the construct's queue has synced (FlushTrace), before its
// end event; an operation whose times cannot be read is counted lost.

// startTracing decides whether c's operations are traced, turning the
// queue's profiling on or off to match.
func (c *construct) startTracing() {
	c.trace = c.t.Tracing()
	if c.prof != nil && (c.trace || c.profOn) {
		// On again at every traced construct: the queue may recycle the
		// timings of the construct before, whose records are written.
		c.prof.Profile(c.trace)
		c.profOn = c.trace
	}
}

// bracket is called before an asynchronous operation is enqueued; it
// returns the event before it for queues that cannot time operations.
func (c *construct) bracket() (device.Event, error) {
	if c.prof != nil {
		return nil, nil
	}
	return c.q.Record()
}

// asyncOp hands the engine the timing of the asynchronous operation just
// enqueued: the queue's own, or the events around it (ev0 and err0 from
// bracket).
func (c *construct) asyncOp(ev0 device.Event, err0 error, flag uint32, k *device.Kernel) {
	if c.prof != nil {
		c.t.TraceTimed(c.prof.Last(), flag, k)
		return
	}
	ev1, err1 := c.q.Record()
	if err0 == nil {
		err0 = err1
	}
	c.t.TraceBracketed(ev0, ev1, err0)
}

// nativeFlags tells the tools which native records a device's plugin
// gives: those of queues that time their own operations.
func (o omptDevice) NativeFlags() uint32 {
	if o.d.profiles {
		return ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution
	}
	return 0
}
