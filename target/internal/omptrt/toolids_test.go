package omptrt

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idTool is a tool that traces one device and keeps, for each event, the
// ids it saw in its callbacks: an EMI tool writes its own (base+n) into
// target_data at each target begin and into host_op_id at each data-op
// begin (it leaves the runtime's host_op_id for kernels); a non-EMI tool
// only reads them. Each record delivered to it must join its callbacks by
// those ids, and ompt_get_target_info, called by it inside its callbacks,
// must answer with the ids it holds.
type idTool struct {
	name string
	emi  bool
	dev  int    // the device it traces
	base uint64 // its ids: base+1, base+2, ...

	mu      sync.Mutex
	n       uint64
	info    ompt.GetTargetInfoFunc
	h       *ompt.DeviceHandle
	l       ompt.LookupFunc
	targets map[uint64]bool      // target ids of its callbacks
	ops     map[[2]uint64]string // (target id, host op id) of its op callbacks -> kind
	records []ompt.RecordOMPT
	errs    []string
}

func (x *idTool) fail(f string, a ...any) { x.errs = append(x.errs, x.name+": "+fmt.Sprintf(f, a...)) }

func (x *idTool) next() uint64 { x.n++; return x.base + x.n }

// checkInfo: get_target_info from this tool answers what it holds.
// A device memory routine (target id 0) is no construct: it answers false.
func (x *idTool) checkInfo(where string, tid, hop uint64) {
	_, gt, gh, ok := x.info()
	if tid == 0 {
		if ok {
			x.fail("%s: get_target_info answers a construct in a device memory routine", where)
		}
		return
	}
	if !ok || gt != tid || gh != hop {
		x.fail("%s: get_target_info = %#x/%#x (ok %v), the tool holds %#x/%#x", where, gt, gh, ok, tid, hop)
	}
}

func (x *idTool) start(int, string) *ompt.StartResult {
	return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
		set := l("ompt_set_callback").(ompt.SetCallbackFunc)
		x.info = l("ompt_get_target_info").(ompt.GetTargetInfoFunc)
		x.targets, x.ops = map[uint64]bool{}, map[[2]uint64]string{}
		set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, _ string, h *ompt.DeviceHandle, dl ompt.LookupFunc, _ string) {
			if dev != x.dev {
				return
			}
			x.h, x.l = h, dl
			dl("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
			req := func(int) []byte { return make([]byte, 1<<14) }
			done := func(_ int, b []byte, bytes, cur uint64, _ bool) {
				for bytes > 0 {
					if r := dl("ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)(b, cur); r != nil {
						x.mu.Lock()
						x.records = append(x.records, *r)
						x.mu.Unlock()
					}
					next, more := dl("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)(h, b, bytes, cur)
					if !more {
						break
					}
					cur = next
				}
			}
			if dl("ompt_start_trace").(ompt.StartTraceFunc)(h, req, done) != 1 {
				x.fail("start_trace on device %d failed", dev)
			}
		}))
		if x.emi {
			set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _, _, td *ompt.Data, _ uintptr) {
				x.mu.Lock()
				defer x.mu.Unlock()
				if ep == ompt.ScopeBegin {
					td.Value = x.next()
					x.targets[td.Value] = true
				}
				x.checkInfo("target", td.Value, 0)
			}))
			set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, _, td *ompt.Data, hop *uint64, op ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
				x.mu.Lock()
				defer x.mu.Unlock()
				if ep == ompt.ScopeBegin {
					*hop = x.next()
					x.ops[[2]uint64{td.Value, *hop}] = op.String()
				}
				x.checkInfo("data_op", td.Value, *hop)
			}))
			set(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(ep ompt.Endpoint, td *ompt.Data, hop *uint64, _ uint32) {
				x.mu.Lock()
				defer x.mu.Unlock()
				x.ops[[2]uint64{td.Value, *hop}] = "kernel" // the runtime's host_op_id, left as it was
				x.checkInfo("submit", td.Value, *hop)
			}))
		} else {
			set(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, _ ompt.Endpoint, _ int, _ *ompt.Data, id uint64, _ uintptr) {
				x.mu.Lock()
				defer x.mu.Unlock()
				x.targets[id] = true
				x.checkInfo("target", id, 0)
			}))
			set(ompt.CallbackTargetDataOp, ompt.TargetDataOpCallback(func(tid, hop uint64, op ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
				x.mu.Lock()
				defer x.mu.Unlock()
				x.ops[[2]uint64{tid, hop}] = op.String()
				x.checkInfo("data_op", tid, hop)
			}))
			set(ompt.CallbackTargetSubmit, ompt.TargetSubmitCallback(func(tid, hop uint64, _ uint32) {
				x.mu.Lock()
				defer x.mu.Unlock()
				x.ops[[2]uint64{tid, hop}] = "kernel"
				x.checkInfo("submit", tid, hop)
			}))
		}
		return 1
	}}
}

// TestToolIDsPerTool: two EMI tools that write different ids and one
// non-EMI tool, each tracing its own device. get_target_info answers each
// tool with the ids it holds, and every record delivered to a tool joins
// its callbacks by those ids: target records by target id, data-op and
// kernel records by (target id, host op id). The non-EMI tool sees the
// runtime's ids. Device memory routines' records carry target id 0 (what
// the routine's target_data holds; the EMI tools write none there).
func TestToolIDsPerTool(t *testing.T) {
	reset(t, nil)
	tools := []*idTool{
		{name: "emiA", emi: true, dev: 0, base: 0xA000_0000},
		{name: "emiB", emi: true, dev: 1, base: 0xB000_0000},
		{name: "plain", dev: 2},
	}
	for _, x := range tools {
		ompt.RegisterTool(x.name, x.start)
	}
	Start(fakeRuntime{3})
	var clks []*tickDevice
	for i := range 3 {
		clks = append(clks, newTick(0))
		require.NoError(t, DeviceInitialize(i, "tick", clks[i]))
	}
	for round := range 3 {
		for dev := range 3 {
			tracedRegion(dev, uintptr(0x100+round), clks[dev], false)
			// a nowait construct finished on another goroutine
			c := TargetBegin(ompt.KindTargetEnterDataNowait, dev, 0x200)
			done := make(chan struct{})
			go func() {
				defer close(done)
				tracedCopy(c, ompt.DataOpTransferToDeviceAsync, dev, 8, clks[dev])
				c.End()
			}()
			<-done
			// a device memory routine
			r := RoutineBegin(0x300)
			tracedCopy(r, ompt.DataOpTransferToDevice, dev, 8, clks[dev])
			r.End()
		}
	}
	for _, x := range tools {
		require.Equal(t, 1, x.l("ompt_flush_trace").(ompt.FlushTraceFunc)(x.h), "%s: flush", x.name)
		x.mu.Lock()
		assert.Empty(t, x.errs, "what the tools found in their callbacks")
		// 3 rounds x (7 records of the target, 3 of the nowait construct, 1 of the routine)
		assert.Len(t, x.records, 3*11, "%s: records", x.name)
		for i, r := range x.records {
			switch {
			case r.Target() != nil:
				assert.True(t, x.targets[r.TargetID], "%s: record %d: target record with target_id %#x, not an id of its callbacks", x.name, i, r.TargetID)
			case r.DataOp() != nil || r.Kernel() != nil:
				hop := uint64(0)
				if d := r.DataOp(); d != nil {
					hop = d.HostOpID
				} else {
					hop = r.Kernel().HostOpID
				}
				assert.Contains(t, x.ops, [2]uint64{r.TargetID, hop}, "%s: record %d: target_id %#x host_op_id %#x joins none of its callbacks", x.name, i, r.TargetID, hop)
				if x.emi && r.DataOp() != nil {
					assert.Equal(t, x.base, hop&0xF000_0000, "%s: record %d: host_op_id %#x is not one the tool wrote", x.name, i, hop)
				}
			}
		}
		x.mu.Unlock()
	}
}
