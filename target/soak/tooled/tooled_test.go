// Package tooled runs the soak of target/soak with a Go tool attached that
// traces every device, and with tools that misbehave. It is its own test
// binary because the tools interface starts once per process; each
// misbehaving tool runs in a child process of this binary, chosen by
// GOMPT_TOOLED_MODE.
package tooled

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
	"github.com/gompt/gompt/target/internal/omptrt"
	"github.com/gompt/gompt/target/soak"
	"github.com/stretchr/testify/assert"
)

const modeEnv = "GOMPT_TOOLED_MODE"

// mode is how the tool behaves:
//
//	""              counts callbacks and trace records, buffers of 64 KiB
//	"nilbuf"        buffer_request returns nil every other time
//	"holdbuf"       buffer_complete keeps every buffer and never reuses one
//	"panicbuf"      buffer_complete panics on its third call
//	"goroutines"    the tool's own goroutines call entry points throughout
//	"panicevent"    a target_data_op callback panics once
var mode = os.Getenv(modeEnv)

var plan = faulty.Register(nil)

// counts of callbacks and records, by event.
var (
	cbTarget, cbDataOp, cbSubmit    atomic.Int64
	beginTarget, endTarget          atomic.Int64 // target begin and end callbacks
	beginOp, endOp                  atomic.Int64 // data op begin and end callbacks
	recTarget, recDataOp, recSubmit atomic.Int64
	bufRequests, bufCompletes       atomic.Int64
	panicked                        atomic.Bool

	hmu     sync.Mutex
	handles []*ompt.DeviceHandle
	lookups []ompt.LookupFunc
	held    [][]byte
)

func init() {
	ompt.RegisterTool("tooled", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, initial int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, _ string, h *ompt.DeviceHandle, lk ompt.LookupFunc, _ string) {
				hmu.Lock()
				handles, lookups = append(handles, h), append(lookups, lk)
				hmu.Unlock()
				startTracing(h, lk)
			}))
			set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _ *ompt.Data, _ *ompt.Data, _ *ompt.Data, _ uintptr) {
				cbTarget.Add(1)
				if ep == ompt.ScopeBegin {
					beginTarget.Add(1)
				} else {
					endTarget.Add(1)
				}
			}))
			set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, _, _ *ompt.Data, _ *uint64, kind ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
				if mode == "panicevent" && panicked.CompareAndSwap(false, true) {
					panic("tooled: a data op callback panics")
				}
				if ep == ompt.ScopeEnd && kind != ompt.DataOpAssociate && kind != ompt.DataOpDisassociate {
					cbDataOp.Add(1)
				}
				if ep == ompt.ScopeBegin {
					beginOp.Add(1)
				} else {
					endOp.Add(1)
				}
			}))
			set(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(ep ompt.Endpoint, _ *ompt.Data, _ *uint64, _ uint32) {
				if ep == ompt.ScopeEnd {
					cbSubmit.Add(1)
				}
			}))
			return 1
		}}
	})
}

func startTracing(h *ompt.DeviceHandle, lk ompt.LookupFunc) {
	lk("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
	advance := lk("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	rtype := lk("ompt_get_record_type").(ompt.GetRecordTypeFunc)
	rompt := lk("ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)
	request := func(int) []byte {
		n := bufRequests.Add(1)
		if mode == "nilbuf" && n%2 == 0 {
			return nil
		}
		return make([]byte, 1<<16)
	}
	complete := func(dev int, buf []byte, size, cur uint64, owned bool) {
		if mode == "panicbuf" && bufCompletes.Load() == 2 {
			bufCompletes.Add(1)
			panic("tooled: buffer_complete panics")
		}
		bufCompletes.Add(1)
		for size > 0 {
			if rtype(buf, cur) == ompt.RecordKindOMPT {
				switch rompt(buf, cur).Event() {
				case ompt.CallbackTarget, ompt.CallbackTargetEMI:
					recTarget.Add(1)
				case ompt.CallbackTargetDataOp, ompt.CallbackTargetDataOpEMI:
					// As the callbacks are counted: associations (the
					// soak's, and zero-copy maps') apart.
					if d := rompt(buf, cur).DataOp(); d == nil || (ompt.DataOpKind(d.OpType) != ompt.DataOpAssociate && ompt.DataOpKind(d.OpType) != ompt.DataOpDisassociate) {
						recDataOp.Add(1)
					}
				case ompt.CallbackTargetSubmit, ompt.CallbackTargetSubmitEMI:
					recSubmit.Add(1)
				}
			}
			next, more := advance(h, buf, size, cur)
			if !more {
				break
			}
			cur = next
		}
		if mode == "holdbuf" && owned {
			hmu.Lock()
			held = append(held, buf)
			hmu.Unlock()
		}
	}
	lk("ompt_start_trace").(ompt.StartTraceFunc)(h, request, complete)
}

func TestMain(m *testing.M) {
	if os.Getenv("GOMPT_PLUGINS") == "" {
		os.Setenv("GOMPT_PLUGINS", "faulty,opencl")
	}
	code := m.Run()
	target.Shutdown()
	os.Exit(code)
}

// flushAll flushes every traced device so every record is delivered.
// The lock is not held across flush_trace: the buffer callbacks it waits
// for take it too.
func flushAll(t *testing.T) {
	hmu.Lock()
	hs, lks := append([]*ompt.DeviceHandle(nil), handles...), append([]ompt.LookupFunc(nil), lookups...)
	hmu.Unlock()
	for i, h := range hs {
		lks[i]("ompt_flush_trace").(ompt.FlushTraceFunc)(h)
	}
}

func iters() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("GOMPT_SOAK_ITERS"), &n); err != nil || n <= 0 {
		return 50
	}
	return n
}

// TestSoakTraced runs the soak with every device traced and checks that
// the records delivered plus the records counted lost equal the callbacks
// of each kind: target (begin and end), data op and submit (one each).
func TestSoakTraced(t *testing.T) {
	if mode != "" {
		t.Skip("a misbehaving-tool child runs TestMisbehavingChild")
	}
	its := iters()
	stop := goroutineCallers()
	counts, errs := soak.Soak(soak.SoakGoroutines, its)
	stop()
	assert.Empty(t, errs, "the soak's errors")
	flushAll(t)
	var lost, written uint64
	for n := range target.NumDevices() {
		w, l := omptrt.TraceStats(n)
		written, lost = written+w, lost+l
	}
	var total int64
	for _, v := range counts {
		total += v
	}
	cb := cbTarget.Load() + cbDataOp.Load() + cbSubmit.Load()
	rec := recTarget.Load() + recDataOp.Load() + recSubmit.Load()
	msg := fmt.Sprintf("%d goroutines x %d iterations, %d constructs with a tool tracing every device: "+
		"callbacks target %d, data op %d, submit %d; records target %d, data op %d, submit %d; "+
		"written %d, lost %d; %d buffers requested, %d completed",
		soak.SoakGoroutines, its, total, cbTarget.Load(), cbDataOp.Load(), cbSubmit.Load(),
		recTarget.Load(), recDataOp.Load(), recSubmit.Load(), written, lost, bufRequests.Load(), bufCompletes.Load())
	t.Log(msg)
	assert.Equal(t, cb, rec+int64(lost), "records %d + lost %d against callbacks", rec, lost)
	if lost == 0 {
		assert.Equal(t, cbTarget.Load(), recTarget.Load(), "no record lost: target records against callbacks")
		assert.Equal(t, cbDataOp.Load(), recDataOp.Load(), "no record lost: data op records against callbacks")
		assert.Equal(t, cbSubmit.Load(), recSubmit.Load(), "no record lost: submit records against callbacks")
	}
	if d := os.Getenv("GOMPT_RELIABILITY_OUT"); d != "" {
		os.WriteFile(d+"/tooled.md", []byte(msg+"\n"), 0o644)
	}
}

// goroutineCallers starts, in the "goroutines" mode, tool goroutines that
// call entry points (device time, flush, pause/resume tracing) throughout;
// it returns a function that stops them.
func goroutineCallers() func() {
	if mode != "goroutines" {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				hmu.Lock()
				hs, ls := append([]*ompt.DeviceHandle(nil), handles...), append([]ompt.LookupFunc(nil), lookups...)
				hmu.Unlock()
				for k, h := range hs {
					ls[k]("ompt_get_device_time").(ompt.GetDeviceTimeFunc)(h)
					switch (g + i) % 3 {
					case 0:
						ls[k]("ompt_flush_trace").(ompt.FlushTraceFunc)(h)
					case 1:
						ls[k]("ompt_pause_trace").(ompt.PauseTraceFunc)(h, true)
						ls[k]("ompt_pause_trace").(ompt.PauseTraceFunc)(h, false)
					}
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

// TestMisbehavingChild is the soak under a misbehaving tool; run by
// TestMisbehaving in a child process.
func TestMisbehavingChild(t *testing.T) {
	if mode == "" {
		t.Skip("run by TestMisbehaving")
	}
	stop := goroutineCallers()
	counts, errs := soak.Soak(soak.SoakGoroutines, 10)
	stop()
	assert.Empty(t, errs, "the soak's errors")
	flushAll(t)
	var total int64
	for _, v := range counts {
		total += v
	}
	var lost uint64
	for n := range target.NumDevices() {
		_, l := omptrt.TraceStats(n)
		lost += l
	}
	fmt.Printf("MODE %s constructs %d results correct %v records %d lost %d held %d\n", mode, total, len(errs) == 0,
		recTarget.Load()+recDataOp.Load()+recSubmit.Load(), lost, len(held))
}

// TestMisbehaving runs the soak under each misbehaving tool in a child
// process: the program's results must stay correct. A tool event callback
// that panics detaches the tool: that child must say so ("a callback
// panicked") and still finish with correct results.
func TestMisbehaving(t *testing.T) {
	if mode != "" {
		t.Skip("in a child")
	}
	var report []string
	for _, m := range []string{"nilbuf", "holdbuf", "panicbuf", "goroutines", "panicevent"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMisbehavingChild$", "-test.v")
		cmd.Env = append(os.Environ(), modeEnv+"="+m)
		out, err := cmd.CombinedOutput()
		line := ""
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "MODE ") {
				line = l
			}
		}
		if m != "panicevent" || assert.Contains(t, string(out), "a callback panicked", "%s: the runtime did not say the tool's callback panicked", m) {
			assert.NoError(t, err, "%s:\n%s", m, out)
			assert.Contains(t, line, "results correct true", "%s:\n%s", m, out)
		}
		report = append(report, "- "+line)
		t.Log(line)
	}
	if d := os.Getenv("GOMPT_RELIABILITY_OUT"); d != "" {
		os.WriteFile(d+"/misbehaving.md", []byte(strings.Join(report, "\n")+"\n"), 0o644)
	}
}

// TestFaultsKeepEventsPaired: a construct whose alloc, copy, launch or free
// fails still gives the tool every end event for every begin event.
func TestFaultsKeepEventsPaired(t *testing.T) {
	if mode != "" {
		t.Skip("a misbehaving-tool child")
	}
	dev := -1
	for _, d := range target.Devices() {
		if d.Plugin == faulty.Name {
			dev = d.Num
		}
	}
	if dev < 0 {
		t.Skip("no faulty device (GOMPT_PLUGINS)")
	}
	for _, op := range []faulty.Op{faulty.Alloc, faulty.CopyIn, faulty.CopyOut, faulty.Launch, faulty.Free} {
		x, y := make([]float32, 256), make([]float32, 256)
		bt, et, bo, eo := beginTarget.Load(), endTarget.Load(), beginOp.Load(), endOp.Load()
		plan.FailNth(op, 1, device.CodeUnknown)
		err := target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(len(x)),
			Maps: []target.Map{target.To(x), target.ToFrom(y)},
			Args: []target.Arg{target.Int(len(x)), target.Float32(2), target.Slice(x), target.Slice(y)}})
		plan.FailNth(op, 0, 0)
		if op != faulty.Free {
			assert.Error(t, err, "%v", op)
		}
		assert.EqualValues(t, 1, beginTarget.Load()-bt, "%v: target begin events", op)
		assert.EqualValues(t, 1, endTarget.Load()-et, "%v: target end events", op)
		b, e := beginOp.Load()-bo, endOp.Load()-eo
		assert.NotZero(t, b, "%v: data op begin events", op)
		assert.Equal(t, b, e, "%v: data op end events against begin events", op)
	}
}
