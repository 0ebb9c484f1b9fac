package tooltest

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tgtUntimedName is a plugin of the host devices whose queues do not time
// their own operations (no device.Profiler): the runtime then brackets
// each queued operation with events to give tools its device times. With
// no GOMPT_PLUGINS set, this binary's devices are the host plugin's, then
// this plugin's (device 1), which the second tool ("tooltest-tgt")
// traces.
const tgtUntimedName = "host-untimed"

type tgtUntimedPlugin struct{}

func (tgtUntimedPlugin) Devices() ([]device.Device, error) {
	p, ok := device.Lookup(host.Name)
	if !ok {
		return nil, device.NoDevice(tgtUntimedName, nil)
	}
	ds, err := p.Devices()
	out := make([]device.Device, len(ds))
	for i, d := range ds {
		out[i] = tgtUntimedDevice{d}
	}
	return out, err
}

// tgtUntimedDevice and tgtUntimedQueue forward only the methods of
// device.Device and device.Queue.
type tgtUntimedDevice struct{ device.Device }

type tgtUntimedQueue struct{ device.Queue }

// tgtSyncFail makes the nth Sync of an untimed queue from now return
// tgtErrSync (after waiting for the queue); 0 disarms it.
var tgtSyncFail struct {
	mu    sync.Mutex
	calls int
	at    int
	fired int
}

var tgtErrSync = errors.New("tooltest: injected sync failure")

func tgtFailNthSync(n int) {
	tgtSyncFail.mu.Lock()
	defer tgtSyncFail.mu.Unlock()
	tgtSyncFail.at = 0
	if n > 0 {
		tgtSyncFail.at = tgtSyncFail.calls + n
	}
}

func (q tgtUntimedQueue) Sync() error {
	err := q.Queue.Sync()
	tgtSyncFail.mu.Lock()
	defer tgtSyncFail.mu.Unlock()
	tgtSyncFail.calls++
	if tgtSyncFail.calls == tgtSyncFail.at {
		tgtSyncFail.fired++
		return tgtErrSync
	}
	return err
}

func (d tgtUntimedDevice) NewQueue() (device.Queue, error) {
	q, err := d.Device.NewQueue()
	if err != nil {
		return nil, err
	}
	return tgtUntimedQueue{q}, nil
}

func init() {
	device.Register(tgtUntimedName, tgtUntimedPlugin{})
	if os.Getenv("GOMPT_PLUGINS") == "" {
		os.Setenv("GOMPT_PLUGINS", "host,"+tgtUntimedName)
	}
}

// tgtTrace is the second tool's trace of the devices other than device 0.
var tgtTrace struct {
	mu        sync.Mutex
	handles   map[int]*ompt.DeviceHandle
	lookup    ompt.LookupFunc
	translate ompt.TranslateTimeFunc
	records   map[int][]traced
}

// tgtStartTracing traces every record type of device dev (called from
// the second tool's device_initialize).
func tgtStartTracing(dev int, h *ompt.DeviceHandle, lk ompt.LookupFunc) {
	tgtTrace.mu.Lock()
	if tgtTrace.handles == nil {
		tgtTrace.handles, tgtTrace.records = map[int]*ompt.DeviceHandle{}, map[int][]traced{}
	}
	tgtTrace.handles[dev], tgtTrace.lookup = h, lk
	tgtTrace.translate = lk("ompt_translate_time").(ompt.TranslateTimeFunc)
	tgtTrace.mu.Unlock()
	lk("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
	advance := lk("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	rtype := lk("ompt_get_record_type").(ompt.GetRecordTypeFunc)
	rompt := lk("ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)
	lk("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return make([]byte, 1<<16) },
		func(_ int, buf []byte, bytes, cur uint64, _ bool) {
			for bytes > 0 {
				if rtype(buf, cur) == ompt.RecordKindOMPT {
					r := rompt(buf, cur)
					t := traced{typ: r.Event(), targetID: r.TargetID, rawBegin: r.Time, rawEnd: r.Time}
					if d := r.DataOp(); d != nil {
						t.op, t.rawEnd = ompt.DataOpKind(d.OpType), d.EndTime
					}
					if k := r.Kernel(); k != nil {
						t.rawEnd = k.EndTime
					}
					tgtTrace.mu.Lock()
					tgtTrace.records[dev] = append(tgtTrace.records[dev], t)
					tgtTrace.mu.Unlock()
				}
				next, more := advance(h, buf, bytes, cur)
				if !more {
					break
				}
				cur = next
			}
		})
}

// tgtFlush flushes device dev's trace and returns its records since the
// last flush, with host times.
func tgtFlush(t *testing.T, dev int) []traced {
	t.Helper()
	tgtTrace.mu.Lock()
	h, lk := tgtTrace.handles[dev], tgtTrace.lookup
	tgtTrace.mu.Unlock()
	require.NotNil(t, h, "device %d was never initialised", dev)
	require.Equal(t, 1, lk("ompt_flush_trace").(ompt.FlushTraceFunc)(h), "ompt_flush_trace")
	tgtTrace.mu.Lock()
	defer tgtTrace.mu.Unlock()
	rs := tgtTrace.records[dev]
	tgtTrace.records[dev] = nil
	for i := range rs {
		rs[i].begin, rs[i].end = tgtTrace.translate(h, rs[i].rawBegin), tgtTrace.translate(h, rs[i].rawEnd)
	}
	return rs
}

// On a device whose queues do not time their operations, a traced
// construct's copies and kernel still get records with device begin and
// end times, inside the construct's call: for copies that run inline and
// for copies and a kernel that run on the queue's goroutine.
func TestUntimedQueueRecordsHaveDeviceTimes(t *testing.T) {
	dev := -1
	for i, d := range target.Devices() {
		if d.Plugin == tgtUntimedName {
			dev = i
			break
		}
	}
	if dev < 0 {
		t.Skip("no " + tgtUntimedName + " device: GOMPT_PLUGINS names other plugins")
	}
	require.NoError(t, target.Update(dev, target.To(make([]byte, 1))), "an update of nothing present: initialises the device")
	tgtFlush(t, dev)
	for _, n := range []int{64, bigLen} {
		x := make([]float32, n)
		t0 := target.Wtime()
		require.NoError(t, target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Fill, Shape: target.N(n),
			Maps: []target.Map{target.ToFrom(x)}, Args: []target.Arg{target.Int(n), target.Float32(2), target.Slice(x)}}))
		t1 := target.Wtime()
		assert.Equal(t, float32(2), x[n-1], "n %d: the kernel's result copied back", n)
		recs := tgtFlush(t, dev)
		const slack = 1e-6
		timed := 0
		for i, r := range recs {
			queued := r.typ == ompt.CallbackTargetSubmit || r.op == ompt.DataOpTransferToDevice || r.op == ompt.DataOpTransferFromDevice
			if !queued {
				continue
			}
			timed++
			assert.True(t, r.rawBegin != 0 && r.rawEnd >= r.rawBegin, "n %d: record %d (%v %v): device times %d..%d", n, i, r.typ, r.op, r.rawBegin, r.rawEnd)
			if n == bigLen {
				// Copying 1 MiB, and filling 2^18 elements, take time:
				// the record's begin is the operation's start, not its end.
				assert.Less(t, r.rawBegin, r.rawEnd, "n %d: record %d (%v %v): device times %d..%d: no time between begin and end", n, i, r.typ, r.op, r.rawBegin, r.rawEnd)
			}
			assert.GreaterOrEqual(t, r.begin, t0-slack, "n %d: record %d (%v %v) begins before the construct was called", n, i, r.typ, r.op)
			assert.LessOrEqual(t, r.end, t1+slack, "n %d: record %d (%v %v) ends after the construct returned", n, i, r.typ, r.op)
		}
		assert.Equal(t, 3, timed, "n %d: records of the copy in, the kernel and the copy back", n)
	}
	tool.take()
}
