package tooltest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
)

// Device work that runs on the queue's goroutine (copies above
// host.InlineCopyMax, and launches behind them) has its times only once
// the queue has done it: the runtime waits for the queue at the
// construct's end and writes those records then. A tool tracing the
// device gets a record of every operation all the same, and a failure the
// wait finds is the construct's error.

// bigLen is a float32 array's length whose copies run on the host queue's
// goroutine.
const bigLen = 4 * host.InlineCopyMax / 4

// boom is a kernel whose Go image panics: the host device turns that into
// the launch's failure, found by the next wait for the queue when the
// launch ran on the queue's goroutine.
var boom = &device.Kernel{
	Name:   "boom",
	Params: []device.Param{{Name: "n", Kind: device.ParamInt64}},
	Images: []device.Image{{Kind: device.ImageHost, Host: func(*device.HostArgs, device.Range, int, int) { panic("boom") }}},
}

// recordsOf flushes device 0's trace and returns the records of the
// construct the tool numbered td, in the order the tool got them.
func recordsOf(t *testing.T, td uint64) []traced {
	t.Helper()
	require.NotNil(t, tool.handle, "device 0 was never initialised")
	require.Equal(t, 1, tool.lookup("ompt_flush_trace").(ompt.FlushTraceFunc)(tool.handle), "ompt_flush_trace")
	tool.mu.Lock()
	defer tool.mu.Unlock()
	var mine []traced
	for _, r := range tool.records {
		if r.targetID == td {
			mine = append(mine, r)
		}
	}
	tool.records = nil
	return mine
}

// traceFromHere initialises device 0 if no construct has yet (its tracing
// starts then) and drops the records so far.
func traceFromHere(t *testing.T) {
	t.Helper()
	require.NoError(t, target.Update(0, target.To(make([]byte, 1))), "an update of nothing present: initialises device 0")
	recordsOf(t, 0)
	tool.take()
}

// lastTD is the tool's number of the construct that began last.
func lastTD() uint64 {
	tool.mu.Lock()
	defer tool.mu.Unlock()
	return tool.nextTD + 1000
}

// TestQueuedWorkIsTraced: a construct whose copies in and out and whose
// kernel run on the queue's goroutine gets a trace record for each, with
// device times, when the tool flushes the trace after it.
func TestQueuedWorkIsTraced(t *testing.T) {
	x := make([]float32, bigLen)
	traceFromHere(t)
	require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Fill, Shape: target.N(len(x)),
		Maps: []target.Map{target.ToFrom(x)}, Args: []target.Arg{target.Int(len(x)), target.Float32(2), target.Slice(x)}}))
	td := lastTD()
	_, errs := tool.take()
	assert.Empty(t, errs, "the tool's checks of the callbacks")
	assert.Equal(t, float32(2), x[len(x)-1], "the kernel's result copied back")

	recs := recordsOf(t, td)
	var ops []ompt.DataOpKind
	kernels, targets := 0, 0
	for i, r := range recs {
		switch r.typ {
		case ompt.CallbackTargetDataOp:
			ops = append(ops, r.op)
		case ompt.CallbackTargetSubmit:
			kernels++
			assert.NotZero(t, r.granted, "record %d: the kernel's granted teams", i)
		case ompt.CallbackTarget:
			targets++
		}
		assert.True(t, r.rawBegin != 0 && r.rawEnd >= r.rawBegin, "record %d (%v %v): device times %d..%d", i, r.typ, r.op, r.rawBegin, r.rawEnd)
	}
	assert.Equal(t, []ompt.DataOpKind{ompt.DataOpAlloc, ompt.DataOpTransferToDevice, ompt.DataOpTransferFromDevice, ompt.DataOpDelete}, ops,
		"data-op records of a construct mapping %d bytes tofrom", 4*len(x))
	assert.Equal(t, 1, kernels, "kernel records")
	assert.Equal(t, 2, targets, "target begin and end records")
}

// TestQueuedKernelFailureIsTheConstructsError: a kernel that fails on the
// queue's goroutine, behind an always-copy of a present array, makes the
// construct fail with the kernel's failure (found by the wait at its end,
// the only one), and the copy before it is still traced.
func TestQueuedKernelFailureIsTheConstructsError(t *testing.T) {
	if ds := target.Devices(); len(ds) == 0 || ds[0].Plugin != "host" {
		t.Skip("device 0 is not a host device: boom has only a Go image (ci/test.sh also runs this package with GOMPT_PLUGINS=opencl)")
	}
	x := make([]float32, bigLen)
	require.NoError(t, target.EnterData(0, target.To(x)))
	defer func() { require.NoError(t, target.ExitData(0, target.Delete(x))) }()
	traceFromHere(t)
	err := target.Target(target.Region{Device: target.Dev(0), Kernel: boom, Shape: target.N(1),
		Maps: []target.Map{target.To(x).Always()}, Args: []target.Arg{target.Int(1)}})
	require.ErrorContains(t, err, "panicked in team 0 of 1: boom", "a construct whose kernel failed on the queue's goroutine")
	td := lastTD()
	_, errs := tool.take()
	assert.Empty(t, errs, "the tool's checks of the callbacks")

	var ops []ompt.DataOpKind
	for _, r := range recordsOf(t, td) {
		if r.typ == ompt.CallbackTargetDataOp {
			ops = append(ops, r.op)
			assert.True(t, r.rawBegin != 0 && r.rawEnd >= r.rawBegin, "%v record: device times %d..%d", r.op, r.rawBegin, r.rawEnd)
		}
	}
	assert.Equal(t, []ompt.DataOpKind{ompt.DataOpTransferToDevice}, ops, "data-op records of the always-copy before the failed kernel")
}
