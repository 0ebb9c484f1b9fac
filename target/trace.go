package target

import (
	"sync"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/omptrt"
	"github.com/gompt/gompt/ompt"
)

// Device tracing: while a tool traces a construct's device, each of the
// construct's device operations also becomes a trace record with the
// device's begin and end times and the plugin's native record. The times
// are known only when the operation completes, so the construct keeps its
// pending records and writes them, in issue order, after its queue has
// synced and before its end event (ompt's TracedOp.Record rule).

// pending is one traced operation waiting for its times.
type pending struct {
	op         omptrt.TracedOp
	begin, end int64          // known times (synchronous operations)
	tm         device.Timing  // the queue's own timing (device.Profiler)
	ev0, ev1   device.Event   // brackets, for queues without a Profiler
	flag       uint32         // ompt.Native* flag of the operation
	kernel     *device.Kernel // the kernel a launch ran; nil for other operations
}

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

// now reads the device clock for a synchronous operation's record.
func (c *construct) now() int64 {
	t, _ := c.d.d.Now()
	return t
}

// syncOp records a synchronous operation (alloc, delete) with known times:
// at once, unless earlier operations still wait for theirs.
func (c *construct) syncOp(begin, end int64) {
	op := c.t.Op()
	if len(c.pend) == 0 {
		op.Record(begin, end, 0, nil)
		return
	}
	c.pend = append(c.pend, pending{op: op, begin: begin, end: end})
}

// bracket is called before an asynchronous operation is enqueued; it
// returns the event before it for queues that cannot time operations.
func (c *construct) bracket() device.Event {
	if c.prof != nil {
		return nil
	}
	ev, _ := c.q.Record()
	return ev
}

// asyncOp records an asynchronous operation just enqueued: at once if
// the queue ran it already (a host queue runs small operations inline)
// and no earlier operation waits, else when the construct ends.
func (c *construct) asyncOp(ev0 device.Event, flag uint32, k *device.Kernel) {
	if c.prof != nil {
		tm := c.prof.Last()
		if len(c.pend) == 0 {
			if r, ok := tm.(device.ReadyTiming); ok && r.Ready() {
				op := c.t.Op()
				recordTiming(&op, tm, flag, k)
				return
			}
		}
		c.pend = append(c.pend, pending{op: c.t.Op(), flag: flag, tm: tm, kernel: k})
		return
	}
	ev1, _ := c.q.Record()
	c.pend = append(c.pend, pending{op: c.t.Op(), flag: flag, ev0: ev0, ev1: ev1})
}

// flushRecords writes the construct's pending records; the queue has
// synced, so every time is known.
func (c *construct) flushRecords() {
	for i := range c.pend {
		p := &c.pend[i]
		switch {
		case p.tm != nil:
			recordTiming(&p.op, p.tm, p.flag, p.kernel)
			p.kernel = nil
			continue
		case p.ev1 != nil:
			if p.ev0 != nil {
				p.begin, _ = p.ev0.Time()
			}
			p.end, _ = p.ev1.Time()
			p.ev0, p.ev1 = nil, nil
		}
		p.op.Record(p.begin, p.end, 0, nil)
	}
	// Not cleared: the events are let go above; the rest points at
	// pooled scopes and at timings the queue keeps, and clearing every
	// entry costs more than the records.
	c.pend = c.pend[:0]
}

// recordTiming records op with the times and native record of the
// queue's timing tm; k is the kernel of a launch, nil otherwise.
func recordTiming(op *omptrt.TracedOp, tm device.Timing, flag uint32, k *device.Kernel) {
	begin, end, native, _ := tm.Times()
	if native.Kind == device.NativeNone || !op.WantsNative(flag) {
		op.Record(begin, end, uint32(native.Teams), nil)
		return
	}
	recordNative(op, begin, end, flag, &native, k)
}

// kernelTypes holds the native type names of kernel launches, "host
// kernel: saxpy", one per plugin type and kernel, made once so that a
// record allocates nothing.
var kernelTypes struct {
	mu sync.RWMutex
	m  map[kernelType]string
}

type kernelType struct {
	typ string
	k   *device.Kernel
}

// maxKernelTypes bounds the distinct kernel type names: the tools
// interface holds at most 255 native type names per process. Launches of
// kernels beyond it keep the plugin's type alone ("host kernel").
const maxKernelTypes = 192

// kernelTypeName returns the native type name of a launch of k whose
// plugin type is typ: "TYP: NAME", the plugin's type and the kernel's
// name, as ompt/doc.go documents it.
func kernelTypeName(typ string, k *device.Kernel) string {
	key := kernelType{typ, k}
	kernelTypes.mu.RLock()
	s, ok := kernelTypes.m[key]
	kernelTypes.mu.RUnlock()
	if ok {
		return s
	}
	kernelTypes.mu.Lock()
	defer kernelTypes.mu.Unlock()
	if s, ok := kernelTypes.m[key]; ok {
		return s
	}
	if kernelTypes.m == nil {
		kernelTypes.m = map[kernelType]string{}
	}
	s = typ
	if len(kernelTypes.m) < maxKernelTypes {
		s = typ + ": " + k.Name
	}
	kernelTypes.m[key] = s
	return s
}

// recordNative writes a record with the plugin's native record attached;
// a launch's native type names its kernel k.
func recordNative(op *omptrt.TracedOp, begin, end int64, flag uint32, n *device.Native, k *device.Kernel) {
	typ := n.Type
	if k != nil && k.Name != "" {
		typ = kernelTypeName(typ, k)
	}
	info := ompt.NativeInfo{Flag: flag, Class: ompt.NativeRecordEvent, Type: typ, HWID: n.HWID,
		Start: uint64(begin), End: uint64(end)}
	w := n.Words
	var (
		h  ompt.HostNative
		o  ompt.OpenCLNative
		cu ompt.CUDANative
	)
	switch n.Kind {
	case device.NativeHost:
		h = ompt.HostNative{Start: int64(w[0]), End: int64(w[1]), Queue: w[2]}
		info.Data = ompt.NativeBytes(&h)
	case device.NativeOpenCL:
		o = ompt.OpenCLNative{Queued: w[0], Submit: w[1], Start: w[2], End: w[3]}
		info.Data = ompt.NativeBytes(&o)
	case device.NativeCUDA:
		cu = ompt.CUDANative{Start: w[0], End: w[1], Stream: w[2], Context: w[3]}
		info.Data = ompt.NativeBytes(&cu)
	default:
		op.Record(begin, end, uint32(n.Teams), nil)
		return
	}
	op.Record(begin, end, uint32(n.Teams), &info)
}

// nativeFlags tells the tools which native records a device's plugin
// gives: those of queues that time their own operations.
func (o omptDevice) NativeFlags() uint32 {
	if o.d.profiles {
		return ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution
	}
	return 0
}

// traceStart reports whether routine r's operation on d is traced and, if
// so, reads d's clock for its begin.
func traceStart(r *omptrt.Target, d *dev) (int64, bool) {
	if r == nil || d == nil || !omptrt.Tracing(d.num) {
		return 0, false
	}
	t, _ := d.d.Now()
	return t, true
}

// routineRecord records a device memory routine's data op on device num
// (the record's device) with times read there around the operation.
func routineRecord(r *omptrt.Target, d *dev, begin int64) {
	if r == nil || d == nil {
		return
	}
	end, _ := d.d.Now()
	op := r.Op()
	op.Record(begin, end, 0, nil)
}
