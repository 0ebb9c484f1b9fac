package omptrt

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	hostplugin "github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tickDevice is a fake device clock: every read advances it by 1000 ns,
// so times are deterministic and strictly increasing. NativeFlags is
// what its plugin says it can record natively.
type tickDevice struct {
	t     atomic.Int64
	flags uint32
}

func (d *tickDevice) NumProcs() int            { return 4 }
func (d *tickDevice) Now() (int64, error)      { return d.t.Add(1000), nil }
func (d *tickDevice) NativeFlags() uint32      { return d.flags }
func (d *tickDevice) read() int64              { v, _ := d.Now(); return v }
func (d *tickDevice) String() string           { return "tick" }
func newTick(flags uint32) *tickDevice         { d := &tickDevice{flags: flags}; d.t.Store(1e9); return d }
func (d *tickDevice) interval() (int64, int64) { return d.read(), d.read() }

// part is one buffer_complete call, as the tool saw it.
type part struct {
	dev          int
	base         uintptr
	bytes, begin uint64
	owned        bool
	n            int // entries in the part
}

// traceTool is a Go tool that traces every device it is told about in
// device_initialize, through the standard entry points only, and renders
// each record as one line with ids named by the shared recorder, so
// records and callbacks can be joined by name.
type traceTool struct {
	r        *recorder
	mu       sync.Mutex
	h        map[int]*ompt.DeviceHandle
	l        map[int]ompt.LookupFunc
	size     int                                          // bytes per buffer
	request  func(dev int) []byte                         // overrides size
	complete func(dev int, b []byte, bytes, begin uint64) // called first in each complete
	types    []ompt.Callback                              // enabled with set_trace_ompt; nil: 0 (all)
	native   uint32                                       // set_trace_native flags
	noStart  bool
	parts    []part
	lines    []string
	raw      []ompt.RecordOMPT
	natives  []hostplugin.Record
	absts    []ompt.RecordAbstract
	gs       map[uintptr]bool // goroutines complete ran on
}

func (tt *traceTool) install(t testing.TB, n int) {
	t.Helper()
	if tt.r == nil {
		tt.r = &recorder{}
	}
	tt.h, tt.l, tt.gs = map[int]*ompt.DeviceHandle{}, map[int]ompt.LookupFunc{}, map[uintptr]bool{}
	prev := tt.r.extra
	tt.r.extra = func(r *recorder) {
		if prev != nil {
			prev(r)
		}
		set := r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)
		set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(tt.deviceInit))
	}
	ompt.RegisterTool("trace", tt.r.start)
	Start(fakeRuntime{n})
}

func (tt *traceTool) deviceInit(dev int, _ string, h *ompt.DeviceHandle, l ompt.LookupFunc, _ string) {
	tt.mu.Lock()
	tt.h[dev], tt.l[dev] = h, l
	tt.mu.Unlock()
	set := l("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)
	if tt.types == nil {
		set(h, true, 0)
	}
	for _, ty := range tt.types {
		set(h, true, ty)
	}
	if tt.native != 0 {
		l("ompt_set_trace_native").(ompt.SetTraceNativeFunc)(h, true, tt.native)
	}
	if !tt.noStart {
		tt.start(dev)
	}
}

func (tt *traceTool) entry(dev int, name string) any {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.l[dev](name)
}

func (tt *traceTool) handle(dev int) *ompt.DeviceHandle {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.h[dev]
}

func (tt *traceTool) start(dev int) int {
	return tt.entry(dev, "ompt_start_trace").(ompt.StartTraceFunc)(tt.handle(dev), tt.req, tt.done)
}

func (tt *traceTool) flush(dev int) int {
	return tt.entry(dev, "ompt_flush_trace").(ompt.FlushTraceFunc)(tt.handle(dev))
}

func (tt *traceTool) stop(dev int) int {
	return tt.entry(dev, "ompt_stop_trace").(ompt.StopTraceFunc)(tt.handle(dev))
}

func (tt *traceTool) pause(dev int, begin bool) int {
	return tt.entry(dev, "ompt_pause_trace").(ompt.PauseTraceFunc)(tt.handle(dev), begin)
}

func (tt *traceTool) req(dev int) []byte {
	if tt.request != nil {
		return tt.request(dev)
	}
	size := tt.size
	if size == 0 {
		size = 1 << 16
	}
	return make([]byte, size)
}

// done is the buffer_complete callback: it walks the part with the
// device's entry points, as a C tool would.
func (tt *traceTool) done(dev int, b []byte, bytes, begin uint64, owned bool) {
	if tt.complete != nil {
		tt.complete(dev, b, bytes, begin)
	}
	l := tt.l[dev] // written before start_trace; read-only afterwards
	advance := l("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	typ := l("ompt_get_record_type").(ompt.GetRecordTypeFunc)
	getOMPT := l("ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)
	getNative := l("ompt_get_record_native").(ompt.GetRecordNativeFunc)
	abstract := l("ompt_get_record_abstract").(ompt.GetRecordAbstractFunc)
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.gs[getg()] = true
	p := part{dev: dev, bytes: bytes, begin: begin, owned: owned}
	if len(b) > 0 {
		p.base = uintptr(unsafe.Pointer(&b[0]))
	}
	h := tt.h[dev]
	for cur, ok := begin, bytes > 0; ok; cur, ok = advance(h, b, bytes, cur) {
		p.n++
		switch typ(b, cur) {
		case ompt.RecordKindOMPT:
			rec := getOMPT(b, cur)
			tt.raw = append(tt.raw, *rec)
			tt.lines = append(tt.lines, tt.format(dev, rec))
		case ompt.RecordKindNative:
			nat, hop := getNative(b, cur)
			a := abstract(nat)
			tt.natives = append(tt.natives, *(*hostplugin.Record)(nat))
			tt.absts = append(tt.absts, *a)
			tt.r.mu.Lock()
			tt.lines = append(tt.lines, fmt.Sprintf("dev%d native host_op_id=%s type=%q class=%d hwid=%d", dev, tt.r.name(hop), a.Type, a.Class, a.HWID))
			tt.r.mu.Unlock()
		default:
			tt.lines = append(tt.lines, fmt.Sprintf("dev%d invalid entry at %d", dev, cur))
		}
	}
	tt.parts = append(tt.parts, p)
}

func (tt *traceTool) format(dev int, rec *ompt.RecordOMPT) string {
	tt.r.mu.Lock()
	defer tt.r.mu.Unlock()
	n := tt.r.name
	switch {
	case rec.Target() != nil:
		b := rec.Target()
		return fmt.Sprintf("dev%d rec target %v %v dev=%d target_id=%s code=%#x", dev, ompt.TargetKind(b.Kind), ompt.Endpoint(b.Endpoint), b.DeviceNum, n(b.TargetID), b.CodePtr)
	case rec.DataOp() != nil:
		b := rec.DataOp()
		return fmt.Sprintf("dev%d rec data_op target_id=%s host_op_id=%s %v src=%#x/%d dest=%#x/%d bytes=%d code=%#x", dev, n(rec.TargetID), n(b.HostOpID), ompt.DataOpKind(b.OpType), b.SrcAddr, b.SrcDeviceNum, b.DestAddr, b.DestDeviceNum, b.Bytes, b.CodePtr)
	case rec.Kernel() != nil:
		b := rec.Kernel()
		return fmt.Sprintf("dev%d rec kernel target_id=%s host_op_id=%s requested=%d granted=%d", dev, n(rec.TargetID), n(b.HostOpID), b.RequestedNumTeams, b.GrantedNumTeams)
	}
	return fmt.Sprintf("dev%d rec type %d", dev, rec.Type)
}

func (tt *traceTool) got() ([]string, []part) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return append([]string(nil), tt.lines...), append([]part(nil), tt.parts...)
}

// tracedCopy drives one traced copy of n bytes from the host to device
// dev in scope c (a construct's or a routine's), as package target does:
// the operation's begin, its device times from clk, its end, its record.
func tracedCopy(c *Target, kind ompt.DataOpKind, dev int, n uint64, clk *tickDevice) {
	c.DataOpBegin(kind, 0x1000, ompt.InitialDevice, 0xd000, dev, n)
	b, e := clk.interval()
	c.DataOpEnd(0xd000)
	o := c.Op()
	o.Record(b, e, 0, nil)
}

// tracedRegions runs n traced regions on each of g goroutines, goroutine
// i on device i%2 with code pointer i+1 and native records where
// native(i); the caller waits on the result.
func tracedRegions(g, n int, clks []*tickDevice, native func(int) bool) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				tracedRegion(i%2, uintptr(i+1), clks[i%2], native(i))
			}
		}()
	}
	return &wg
}

// tracedRegion drives one target construct the way package target does
// with tracing: for each operation it asks whether the device traces
// before taking device timestamps, then captures the operation with Op
// after its end and records it with its device times. Native records
// (hostplugin.Record) are attached when native is set.
func tracedRegion(dev int, code uintptr, clk *tickDevice, native bool) {
	const host, dptr = 0x1000, 0xd000
	t := TargetBegin(ompt.KindTarget, dev, code)
	op := func(kind ompt.DataOpKind, src uintptr, sd int, dst uintptr, dd int, n uint64, final uintptr) {
		t.DataOpBegin(kind, src, sd, dst, dd, n)
		var b, e int64
		if t.Tracing() {
			b, e = clk.interval()
		}
		t.DataOpEnd(final)
		o := t.Op()
		var ni *NativeInfo
		if native {
			hn := hostplugin.Record{Start: b, End: e, Queue: 1}.Native("", 0, 0)
			ni = &NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent, Type: "host copy", HWID: 7, Start: uint64(b), End: uint64(e), Data: hn.Bytes()}
		}
		o.Record(b, e, 0, ni)
	}
	op(ompt.DataOpAlloc, host, ompt.InitialDevice, 0, dev, 64, dptr)
	op(ompt.DataOpTransferToDevice, host, ompt.InitialDevice, dptr, dev, 64, dptr)
	if t != nil {
		t.Map([]uintptr{host}, []uintptr{dptr}, []uint64{64}, []uint32{ompt.MapFlagTo | ompt.MapFlagFrom})
	}
	t.SubmitBegin(4)
	var b, e int64
	if t.Tracing() {
		b, e = clk.interval()
	}
	t.SubmitEnd()
	o := t.Op()
	o.Record(b, e, 8, nil)
	op(ompt.DataOpTransferFromDevice, dptr, dev, host, ompt.InitialDevice, 64, host)
	op(ompt.DataOpDelete, dptr, dev, 0, ompt.InitialDevice, 0, 0)
	t.End()
}

// withTrace starts a traceTool with n devices and initializes device 0
// (and 1 when n > 1) with tick clocks.
func withTrace(t *testing.T, tt *traceTool, n int) []*tickDevice {
	t.Helper()
	reset(t, nil)
	tt.install(t, n)
	var clks []*tickDevice
	for i := range n {
		c := newTick(ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution)
		require.NoError(t, DeviceInitialize(i, "tick", c))
		clks = append(clks, c)
	}
	return clks
}

// TestTraceRecordsMatchCallbacks: every record of a construct carries the
// ids of the callbacks of the same operation, in order: target begin,
// alloc, transfer to device, kernel, transfer from device, delete,
// target end; times are non-zero with end >= begin; thread ids are real.
func TestTraceRecordsMatchCallbacks(t *testing.T) {
	tt := &traceTool{r: &recorder{plain: true}}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 0x42, clks[0], false)
	require.Equal(t, 1, tt.flush(0), "flush")
	lines, parts := tt.got()
	want := []string{
		"dev0 rec target ompt_target begin dev=0 target_id=#1 code=0x42",
		"dev0 rec data_op target_id=#1 host_op_id=#2 ompt_target_data_alloc src=0x1000/1 dest=0xd000/0 bytes=64 code=0x42",
		"dev0 rec data_op target_id=#1 host_op_id=#3 ompt_target_data_transfer_to_device src=0x1000/1 dest=0xd000/0 bytes=64 code=0x42",
		"dev0 rec kernel target_id=#1 host_op_id=#4 requested=4 granted=8",
		"dev0 rec data_op target_id=#1 host_op_id=#5 ompt_target_data_transfer_from_device src=0xd000/0 dest=0x1000/1 bytes=64 code=0x42",
		"dev0 rec data_op target_id=#1 host_op_id=#6 ompt_target_data_delete src=0xd000/0 dest=0x0/1 bytes=0 code=0x42",
		"dev0 rec target ompt_target end dev=0 target_id=#1 code=0x42",
	}
	diffSeq(t, lines, want)
	// the callbacks name the same ids in the same order
	var cb []string
	for _, ev := range tt.r.got() {
		if strings.HasPrefix(ev, "target ") || strings.HasPrefix(ev, "data_op") || strings.HasPrefix(ev, "submit") {
			cb = append(cb, ev)
		}
	}
	diffSeq(t, cb, []string{
		"target ompt_target begin dev=0 task=d1 target_id=#1 code=0x42",
		"data_op target_id=#1 host_op_id=#2 ompt_target_data_alloc src=0x1000/1 dest=0xd000/0 bytes=64 code=0x42",
		"data_op target_id=#1 host_op_id=#3 ompt_target_data_transfer_to_device src=0x1000/1 dest=0xd000/0 bytes=64 code=0x42",
		"submit target_id=#1 host_op_id=#4 teams=4",
		"data_op target_id=#1 host_op_id=#5 ompt_target_data_transfer_from_device src=0xd000/0 dest=0x1000/1 bytes=64 code=0x42",
		"data_op target_id=#1 host_op_id=#6 ompt_target_data_delete src=0xd000/0 dest=0x0/1 bytes=0 code=0x42",
		"target ompt_target end dev=0 task=d1 target_id=#1 code=0x42",
	})
	if assert.Len(t, parts, 1, "parts %+v; want one flushed part", parts) {
		assert.False(t, parts[0].owned, "the flushed part's buffer_owned")
		assert.Equal(t, 0, parts[0].dev, "the flushed part's device")
		assert.Equal(t, 7, parts[0].n, "the flushed part's records")
	}
	checkTimes(t, tt)
}

// checkTimes: non-zero times, end >= begin, target end after target
// begin, and thread ids of threads of this process.
func checkTimes(t *testing.T, tt *traceTool) {
	t.Helper()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	begins := map[uint64]uint64{}
	for i, r := range tt.raw {
		assert.NotZero(t, r.Time, "record %d: time", i)
		assert.NotZero(t, r.ThreadID, "record %d: thread", i)
		if runtime.GOOS == "linux" {
			_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", r.ThreadID))
			assert.NoError(t, err, "record %d: thread_id %d is not a thread of this process", i, r.ThreadID)
		}
		switch { // a record has one body: data op, kernel or target
		case r.DataOp() != nil:
			assert.GreaterOrEqual(t, r.DataOp().EndTime, r.Time, "record %d: end_time before time", i)
		case r.Kernel() != nil:
			assert.GreaterOrEqual(t, r.Kernel().EndTime, r.Time, "record %d: end_time before time", i)
		case r.Target() != nil && ompt.Endpoint(r.Target().Endpoint) == ompt.ScopeBegin:
			begins[r.TargetID] = r.Time
		case r.Target() != nil:
			b, ok := begins[r.TargetID]
			assert.True(t, ok, "record %d: target end with no begin seen", i)
			assert.GreaterOrEqual(t, r.Time, b, "record %d: target end before its begin", i)
		}
	}
}

// TestTraceEMIIDs: with EMI callbacks, record host_op_ids are the values
// the runtime put in the host_op_id slots, and target_ids those that
// ompt_get_target_info reported inside the construct.
func TestTraceEMIIDs(t *testing.T) {
	var infoIDs []uint64
	r := &recorder{emi: true}
	r.inside = func(r *recorder, ev string) string {
		if strings.HasPrefix(ev, "target_emi") && strings.Contains(ev, " begin ") {
			_, tid, _, _ := r.lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)()
			infoIDs = append(infoIDs, tid)
		}
		return ""
	}
	tt := &traceTool{r: r}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 0x9, clks[0], false)
	tt.flush(0)
	lines, _ := tt.got()
	var hops []string
	for _, ev := range r.got() {
		if strings.HasPrefix(ev, "data_op_emi end") || strings.HasPrefix(ev, "submit_emi end") {
			i := strings.Index(ev, "hop=")
			hops = append(hops, ev[i:strings.Index(ev[i:], ")")+i+1])
		}
	}
	// hop=h1(#2): the slot named h1 held id #2; the records name the same ids
	var recHops []string
	for _, l := range lines {
		if i := strings.Index(l, "host_op_id="); i >= 0 {
			recHops = append(recHops, strings.Fields(l[i+len("host_op_id="):])[0])
		}
	}
	require.Len(t, hops, 5, "callback hops %v, record hops %v", hops, recHops)
	require.Len(t, recHops, 5, "callback hops %v, record hops %v", hops, recHops)
	for i := range hops {
		assert.Contains(t, hops[i], "("+recHops[i]+")", "op %d: callback against the record's host_op_id", i)
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if assert.Len(t, infoIDs, 1, "target_ids get_target_info said") {
		assert.Equal(t, infoIDs[0], tt.raw[0].TargetID, "record target_id against get_target_info's")
	}
	assert.NotZero(t, tt.raw[0].TargetID, "record target_id")
}

// TestTraceWithoutCallbacks: a tool that registers no target callback but
// traces still gets distinct non-zero target and host-op ids.
func TestTraceWithoutCallbacks(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	tracedRegion(0, 1, clks[0], false)
	tt.flush(0)
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.Len(t, tt.raw, 14, "records")
	seen := map[uint64]bool{}
	for _, r := range tt.raw {
		assert.NotZero(t, r.TargetID, "target_id inside a construct")
		var op uint64
		if d := r.DataOp(); d != nil {
			op = d.HostOpID
		} else if k := r.Kernel(); k != nil {
			op = k.HostOpID
		} else {
			continue
		}
		assert.NotZero(t, op, "host_op_id")
		assert.False(t, seen[op], "host_op_id %d repeated", op)
		seen[op] = true
	}
	assert.NotEqual(t, tt.raw[0].TargetID, tt.raw[7].TargetID, "two constructs share a target_id")
}

// TestTraceBufferParts: small buffers fill and are completed with
// buffer_owned 1; a flush completes a part with buffer_owned 0 and later
// records go on in the same buffer; stop hands the last buffer back.
func TestTraceBufferParts(t *testing.T) {
	tt := &traceTool{size: 3*ompt.RecordOMPTSize + 8}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false) // 7 records: 3 + 3 complete as full, 1 waits
	tt.flush(0)                        // 1 record: a part, owned 0 (room for more)
	tracedRegion(0, 1, clks[0], false)
	require.Equal(t, 1, tt.stop(0), "stop")
	_, parts := tt.got()
	var got []string
	for _, p := range parts {
		got = append(got, fmt.Sprintf("dev=%d n=%d owned=%v", p.dev, p.n, p.owned))
	}
	diffSeq(t, got, []string{
		"dev=0 n=3 owned=true", "dev=0 n=3 owned=true", "dev=0 n=1 owned=false",
		"dev=0 n=2 owned=true",                         // the rest of the flushed buffer
		"dev=0 n=3 owned=true", "dev=0 n=2 owned=true", // the last at stop
	})
	// the flushed part and the part after it are one buffer, contiguous
	assert.Equal(t, parts[2].base, parts[3].base, "part after a flush: base, against the flushed part's")
	assert.Equal(t, parts[2].bytes, parts[3].begin, "part after a flush: begin, against where the flushed part ended")
	lines, _ := tt.got()
	if assert.Len(t, lines, 14, "records out of order or missing:\n%s", strings.Join(lines, "\n")) {
		assert.Contains(t, lines[0], "begin", "records out of order:\n%s", strings.Join(lines, "\n"))
		assert.Contains(t, lines[13], "end", "records out of order:\n%s", strings.Join(lines, "\n"))
	}
}

// TestTraceNoBuffer: a request that yields nothing (nil, then 0 bytes)
// drops records, counted; a later successful request resumes recording.
// The worker asks again for each batch of queued records it takes, so
// how many records each failed request costs depends on batching; what
// is fixed: every record is written or lost, the lost ones come first,
// and one request succeeds after the two failures.
func TestTraceNoBuffer(t *testing.T) {
	var calls atomic.Int32
	tt := &traceTool{}
	tt.request = func(int) []byte {
		switch calls.Add(1) {
		case 1:
			return nil
		case 2:
			return []byte{}
		}
		return make([]byte, 1<<16)
	}
	clks := withTrace(t, tt, 1)
	for code := range uintptr(3) {
		tracedRegion(0, code+1, clks[0], false)
		tt.flush(0)
	}
	lines, _ := tt.got()
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(21), written+lost, "records written (%d) and lost (%d) in all", written, lost)
	assert.GreaterOrEqual(t, lost, uint64(2), "records lost")
	assert.Len(t, lines, int(written), "records delivered: want all written")
	if n := len(lines); assert.NotZero(t, n, "the last construct's records are not the ones delivered") {
		assert.Contains(t, lines[n-1], "rec target ompt_target end dev=0", "the last construct's records are not the ones delivered:\n%s", strings.Join(lines, "\n"))
		assert.True(t, strings.HasSuffix(lines[n-1], "code=0x3"), "the last construct's records are not the ones delivered:\n%s", strings.Join(lines, "\n"))
	}
	assert.Equal(t, int32(3), calls.Load(), "buffer requests: want nil, empty, then one that lasts")
}

// TestTraceLostLogged: the number of lost records is written to the
// OMP_TOOL_VERBOSE_INIT log when the session ends.
func TestTraceLostLogged(t *testing.T) {
	log := t.TempDir() + "/verbose.log"
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": log})
	tt := &traceTool{request: func(int) []byte { return nil }}
	tt.install(t, 1)
	clk := newTick(0)
	DeviceInitialize(0, "tick", clk)
	tracedRegion(0, 1, clk, false)
	Finalize()
	b, _ := os.ReadFile(log)
	assert.Contains(t, string(b), "Device 0: 7 trace records lost", "verbose log does not report the lost records")
}

// TestTraceTooSmallBuffer: a buffer smaller than one record goes back to
// the tool at once (bytes 0, owned) and its records are lost.
func TestTraceTooSmallBuffer(t *testing.T) {
	tt := &traceTool{size: 64}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	tt.flush(0)
	_, parts := tt.got()
	assert.NotEmpty(t, parts, "the small buffer was not handed back")
	for _, p := range parts { // one per batch the worker took: each handed back empty and owned
		assert.Zero(t, p.bytes, "part %+v: bytes", p)
		assert.Zero(t, p.begin, "part %+v: begin", p)
		assert.True(t, p.owned, "part %+v: owned", p)
		assert.Zero(t, p.n, "part %+v: records", p)
	}
	_, lost := TraceStats(0)
	assert.Equal(t, uint64(7), lost, "records lost")
}

// TestTraceFlush: flush returns after every record queued before it is
// delivered; flush with nothing recorded succeeds without a callback;
// flush without start fails.
func TestTraceFlush(t *testing.T) {
	tt := &traceTool{noStart: true}
	clks := withTrace(t, tt, 1)
	assert.Zero(t, tt.flush(0), "flush before start_trace succeeded")
	require.Equal(t, 1, tt.start(0), "start")
	assert.Equal(t, 1, tt.flush(0), "flush with nothing recorded")
	_, parts := tt.got()
	assert.Empty(t, parts, "flush with nothing recorded delivered parts")
	for i := range 50 {
		tracedRegion(0, 1, clks[0], false)
		require.Equal(t, 1, tt.flush(0), "flush")
		lines, _ := tt.got()
		require.Len(t, lines, 7*(i+1), "after flush %d: records delivered", i)
	}
}

// TestTraceStop: stop flushes and ends the session: nothing is delivered
// after it returns, records of later operations are not queued; bad
// sequences fail gently.
func TestTraceStop(t *testing.T) {
	tt := &traceTool{noStart: true}
	clks := withTrace(t, tt, 1)
	assert.Zero(t, tt.stop(0), "stop without start succeeded")
	assert.Zero(t, tt.pause(0, true), "pause while stopped succeeded")
	assert.Zero(t, tt.pause(0, false), "resume while stopped succeeded")
	assert.Equal(t, 1, tt.start(0), "start must succeed once")
	assert.Zero(t, tt.start(0), "start must fail the second time")
	tracedRegion(0, 1, clks[0], false)
	require.Equal(t, 1, tt.stop(0), "stop")
	lines, parts := tt.got()
	assert.Len(t, lines, 7, "records stop delivered")
	if assert.Len(t, parts, 1, "parts stop delivered: want one owned part") {
		assert.True(t, parts[0].owned, "the part stop delivered: owned")
	}
	assert.False(t, Tracing(0), "Tracing(0) after stop")
	tracedRegion(0, 1, clks[0], false)
	time.Sleep(10 * time.Millisecond)
	l2, p2 := tt.got()
	assert.Len(t, l2, 7, "delivery after stop: records")
	assert.Len(t, p2, 1, "delivery after stop: parts")
	assert.Zero(t, tt.stop(0), "second stop succeeded")
	// a new session works
	require.Equal(t, 1, tt.start(0), "restart")
	tracedRegion(0, 1, clks[0], false)
	tt.stop(0)
	l3, _ := tt.got()
	assert.Len(t, l3, 14, "records after restart")
}

// TestTracePauseResume: while paused nothing is recorded (and nothing is
// lost); after resume recording goes on.
func TestTracePauseResume(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	require.Equal(t, 1, tt.pause(0, true), "pause")
	require.False(t, Tracing(0), "Tracing after pause")
	tracedRegion(0, 1, clks[0], false)
	require.Equal(t, 1, tt.pause(0, false), "resume")
	require.True(t, Tracing(0), "Tracing after resume")
	tracedRegion(0, 2, clks[0], false)
	tt.flush(0)
	lines, _ := tt.got()
	if assert.Len(t, lines, 7, "records %v; want only the 7 of the construct after resume", lines) {
		assert.Contains(t, lines[0], "code=0x2", "records: want only the construct's after resume")
	}
	_, lost := TraceStats(0)
	assert.Zero(t, lost, "paused operations counted as lost")
}

// TestSetTraceOMPTResults: the set results are truthful, and only the
// enabled types are recorded.
func TestSetTraceOMPTResults(t *testing.T) {
	tt := &traceTool{types: []ompt.Callback{ompt.CallbackTargetDataOpEMI}}
	clks := withTrace(t, tt, 1)
	h := tt.handle(0)
	set := tt.entry(0, "ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)
	for _, c := range []struct {
		ev   ompt.Callback
		want ompt.SetResult
	}{
		{ompt.CallbackTarget, ompt.SetAlways}, {ompt.CallbackTargetDataOp, ompt.SetAlways}, {ompt.CallbackTargetSubmit, ompt.SetAlways},
		{ompt.CallbackTargetEMI, ompt.SetAlways}, {ompt.CallbackTargetDataOpEMI, ompt.SetAlways}, {ompt.CallbackTargetSubmitEMI, ompt.SetAlways},
		{ompt.CallbackTargetMap, ompt.SetNever}, {ompt.CallbackTargetMapEMI, ompt.SetNever}, {ompt.CallbackThreadBegin, ompt.SetNever},
		{ompt.CallbackDeviceInitialize, ompt.SetNever}, {0, ompt.SetSometimes}, {99, ompt.SetError}, {-1, ompt.SetError},
	} {
		assert.Equal(t, c.want, set(h, false, c.ev), "set_trace_ompt(%v)", c.ev)
	}
	assert.Equal(t, ompt.SetError, set(nil, true, 0), "set_trace_ompt on a nil device")
	assert.Equal(t, ompt.SetError, set(&ompt.DeviceHandle{}, true, 0), "set_trace_ompt on a never-initialized device")
	// everything was disabled by the loop; Tracing follows
	assert.False(t, Tracing(0), "Tracing(0) with no type enabled")
	set(h, true, ompt.CallbackTargetDataOpEMI) // data ops only
	tracedRegion(0, 1, clks[0], false)
	tt.flush(0)
	lines, _ := tt.got()
	assert.Len(t, lines, 4, "records: want the 4 data ops:\n%s", strings.Join(lines, "\n"))
	for _, l := range lines {
		assert.Contains(t, l, "data_op", "record of a disabled type")
	}
	DeviceFinalize(0)
	assert.Equal(t, ompt.SetError, set(h, true, 0), "set_trace_ompt on a finalized device must fail")
}

// TestTraceNative: set_trace_native answers per the device's abilities;
// native records follow their OMPT record, and get_record_native and
// get_record_abstract describe them.
func TestTraceNative(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	h := tt.handle(0)
	set := tt.entry(0, "ompt_set_trace_native").(ompt.SetTraceNativeFunc)
	for _, c := range []struct {
		flags uint32
		want  ompt.SetResult
	}{
		{ompt.NativeDataMotionExplicit, ompt.SetAlways},
		{ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution, ompt.SetAlways},
		{ompt.NativeDataMotionExplicit | ompt.NativeDriver, ompt.SetSometimes},
		{ompt.NativeDriver | ompt.NativeIdleness, ompt.SetNever},
		{0, ompt.SetError}, {0x100, ompt.SetError},
	} {
		assert.Equal(t, c.want, set(h, true, c.flags), "set_trace_native(%#x)", c.flags)
	}
	// a device whose plugin records nothing natively
	DeviceInitialize(1, "plain", &clockDevice{rate: 1})
	h1, l1, _ := GetDeviceInfo(1)
	assert.Equal(t, ompt.SetNever, l1("ompt_set_trace_native").(ompt.SetTraceNativeFunc)(h1, true, ompt.NativeDataMotionExplicit), "set_trace_native on a device without native records")

	tracedRegion(0, 1, clks[0], true)
	tt.flush(0)
	lines, _ := tt.got()
	require.Len(t, lines, 11, "entries: want 7 records and 4 native:\n%s", strings.Join(lines, "\n"))
	diffSeq(t, lines[1:3], []string{
		"dev0 rec data_op target_id=#1 host_op_id=#2 ompt_target_data_alloc src=0x1000/1 dest=0xd000/0 bytes=64 code=0x1",
		`dev0 native host_op_id=#2 type="host copy" class=2 hwid=7`,
	})
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for i, n := range tt.natives {
		a := tt.absts[i]
		assert.NotZero(t, n.Start, "native %d: %+v: start", i, n)
		assert.GreaterOrEqual(t, n.End, n.Start, "native %d: %+v: end before start", i, n)
		assert.Equal(t, uint64(n.Start), a.StartTime, "native %d: %+v: abstract %+v: start time", i, n, a)
		assert.Equal(t, uint64(n.End), a.EndTime, "native %d: %+v: abstract %+v: end time", i, n, a)
		assert.Equal(t, uint64(1), n.Queue, "native %d: %+v: queue", i, n)
	}
	assert.Equal(t, uint64(tt.natives[0].End), tt.raw[1].DataOp().EndTime, "native record and OMPT record of one operation disagree on the end time")
}

// TestTraceWantsNative: WantsNative follows set_trace_native, flag by
// flag, and is false for the zero TracedOp and an untraced device.
func TestTraceWantsNative(t *testing.T) {
	tt := &traceTool{native: ompt.NativeDataMotionExplicit}
	withTrace(t, tt, 1)
	assert.False(t, (&TracedOp{}).WantsNative(ompt.NativeDataMotionExplicit), "the zero TracedOp wants a native record")
	tgt := TargetBegin(ompt.KindTarget, 0, 1)
	tgt.SubmitBegin(1)
	tgt.SubmitEnd()
	op := tgt.Op()
	assert.True(t, op.WantsNative(ompt.NativeDataMotionExplicit), "with data motion enabled: WantsNative(data motion)")
	assert.False(t, op.WantsNative(ompt.NativeKernelExecution), "with data motion enabled: WantsNative(kernel execution)")
	set := tt.entry(0, "ompt_set_trace_native").(ompt.SetTraceNativeFunc)
	set(tt.handle(0), false, ompt.NativeDataMotionExplicit)
	assert.False(t, op.WantsNative(ompt.NativeDataMotionExplicit), "WantsNative after set_trace_native disabled the flag")
	tgt.End()
	tt.stop(0)
	assert.False(t, op.WantsNative(ompt.NativeDataMotionExplicit), "WantsNative(data motion) after stop_trace")
	assert.False(t, op.WantsNative(ompt.NativeKernelExecution), "WantsNative(kernel execution) after stop_trace")
}

// TestTraceBadCursors: cursors past the end, misaligned, in a foreign
// buffer, or beyond what a device delivered are refused.
func TestTraceBadCursors(t *testing.T) {
	var checks []string
	tt := &traceTool{}
	tt.complete = func(dev int, b []byte, bytes, begin uint64) {
		if dev != 0 || bytes == 0 { // an empty part (stop_trace's last) has no record to probe
			return
		}
		l := tt.l[0]
		advance := l("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
		typ := l("ompt_get_record_type").(ompt.GetRecordTypeFunc)
		getOMPT := l("ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)
		getNative := l("ompt_get_record_native").(ompt.GetRecordNativeFunc)
		abstract := l("ompt_get_record_abstract").(ompt.GetRecordAbstractFunc)
		h1 := tt.h[1]
		ok := func(cond bool, what string) {
			if !cond {
				checks = append(checks, what)
			}
		}
		last := bytes - uint64(ompt.RecordOMPTSize)
		_, adv := advance(nil, b, bytes, last)
		ok(!adv, "advance from the last record succeeded")
		_, adv = advance(nil, b, bytes, bytes+800)
		ok(!adv, "advance past the end succeeded")
		_, adv = advance(nil, b, bytes, begin+3)
		ok(!adv, "advance from a misaligned cursor succeeded")
		_, adv = advance(h1, b, bytes, begin)
		ok(!adv, "advance with device 1's handle on device 0's buffer succeeded")
		_, adv = advance(nil, make([]byte, 4096), 4096, 0)
		ok(!adv, "advance in a foreign buffer (zeros) succeeded")
		_, adv = advance(nil, b, bytes, begin)
		ok(adv, "advance from the first record failed")
		ok(typ(b, bytes) == ompt.RecordKindInvalid, "get_record_type beyond the delivered part is not invalid")
		ok(typ(b, begin+5) == ompt.RecordKindInvalid, "get_record_type of a misaligned cursor is not invalid")
		ok(typ(nil, 0) == ompt.RecordKindInvalid, "get_record_type of a nil buffer is not invalid")
		ok(getOMPT(b, bytes) == nil && getOMPT(b, begin) != nil, "get_record_ompt bounds")
		p, hop := getNative(b, begin)
		ok(p == nil && hop == 0, "get_record_native of an OMPT record")
		ok(abstract(nil) == nil, "get_record_abstract(nil)")
		rec := getOMPT(b, begin)
		ok(abstract(unsafe.Add(unsafe.Pointer(rec), ompt.RecordBodyOffset)) == nil, "get_record_abstract of a non-native pointer")
	}
	clks := withTrace(t, tt, 2)
	tracedRegion(0, 1, clks[0], false)
	tracedRegion(1, 1, clks[1], false)
	tracedRegion(1, 1, clks[1], false)
	tt.flush(1)
	tt.flush(0)
	assert.Empty(t, checks, "bad cursors accepted")
	// entry points on bad devices fail gently
	l := tt.l[0]
	assert.Zero(t, l("ompt_start_trace").(ompt.StartTraceFunc)(&ompt.DeviceHandle{}, tt.req, tt.done), "start_trace accepted a never-initialized device")
	assert.Zero(t, l("ompt_start_trace").(ompt.StartTraceFunc)(nil, tt.req, tt.done), "start_trace accepted a nil device")
	assert.Zero(t, l("ompt_flush_trace").(ompt.FlushTraceFunc)(nil), "flush_trace accepted a nil device")
	assert.Zero(t, l("ompt_stop_trace").(ompt.StopTraceFunc)(&ompt.DeviceHandle{}), "stop_trace accepted a never-initialized device")
	assert.Zero(t, l("ompt_pause_trace").(ompt.PauseTraceFunc)(nil, true), "pause_trace accepted a nil device")
	// a hand-made native header with no data after it, ending the buffer
	words := make([]uint64, ompt.NativeHeaderSize/8)
	hb := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), ompt.NativeHeaderSize)
	*(*int32)(unsafe.Pointer(&hb[0])) = ompt.NativeMarker
	*(*uint32)(unsafe.Pointer(&hb[4])) = uint32(ompt.NativeHeaderSize)
	p, hop := l("ompt_get_record_native").(ompt.GetRecordNativeFunc)(hb, 0)
	assert.Nil(t, p, "get_record_native accepted a native header with no record after it")
	assert.Zero(t, hop, "get_record_native accepted a native header with no record after it: host_op_id")
	assert.Equal(t, ompt.RecordKindInvalid, l("ompt_get_record_type").(ompt.GetRecordTypeFunc)(hb, 0), "get_record_type of a header-only native entry")
	tt.stop(0)
	assert.Zero(t, l("ompt_start_trace").(ompt.StartTraceFunc)(tt.h[0], nil, tt.done), "start_trace with a nil request callback succeeded")
}

// TestTraceCompleteRunsOffCaller: buffer_complete never runs on the
// application's goroutine, and a tool that is slow to complete never
// stalls it: records beyond the queue are dropped and counted.
func TestTraceCompleteRunsOffCaller(t *testing.T) {
	oldCap, oldMax := ringCap, ringMax
	ringCap, ringMax = 16*8, 16*8 // words: about 16 records
	defer func() { ringCap, ringMax = oldCap, oldMax }()
	release := make(chan struct{})
	var once sync.Once
	tt := &traceTool{size: ompt.RecordOMPTSize + 8}
	tt.complete = func(int, []byte, uint64, uint64) { once.Do(func() { <-release }) }
	clks := withTrace(t, tt, 1)
	me := getg()
	finished := make(chan struct{})
	go func() {
		for range 20 {
			tracedRegion(0, 1, clks[0], false) // 140 records, the tool blocked
		}
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		require.Fail(t, "the application stalled behind a blocked buffer_complete")
	}
	close(release)
	tt.flush(0)
	written, lost := TraceStats(0)
	assert.Equal(t, uint64(140), written+lost, "records written (%d) and lost (%d) in all", written, lost)
	assert.NotZero(t, lost, "records lost: want some")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	assert.False(t, tt.gs[me], "buffer_complete ran on the application goroutine")
}

// TestTraceRingGrows: while the tool is slow, the ring grows instead of
// dropping records, up to ringMax; then records are dropped and counted.
func TestTraceRingGrows(t *testing.T) {
	for _, tc := range []struct {
		max      int
		wantLoss bool
	}{{256 * 8, false}, {32 * 8, true}} { // words: about 256 and 32 records
		oldCap, oldMax := ringCap, ringMax
		ringCap, ringMax = 16*8, tc.max
		release := make(chan struct{})
		var once sync.Once
		tt := &traceTool{size: ompt.RecordOMPTSize + 8}
		tt.complete = func(int, []byte, uint64, uint64) { once.Do(func() { <-release }) }
		clks := withTrace(t, tt, 1)
		for range 20 {
			tracedRegion(0, 1, clks[0], false) // 140 records, the tool blocked
		}
		close(release)
		tt.flush(0)
		written, lost := TraceStats(0)
		assert.Equal(t, uint64(140), written+lost, "ringMax %d: records written (%d) and lost (%d) in all", tc.max, written, lost)
		assert.Equal(t, tc.wantLoss, lost > 0, "ringMax %d: records lost (%d) > 0", tc.max, lost)
		tt.stop(0)
		ringCap, ringMax = oldCap, oldMax
	}
}

// TestTraceCompletePanics: a complete callback that panics stops tracing
// on its device; the device keeps running and the log says why.
func TestTraceCompletePanics(t *testing.T) {
	log := t.TempDir() + "/v.log"
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": log})
	tt := &traceTool{}
	tt.complete = func(int, []byte, uint64, uint64) { panic("tool bug") }
	tt.install(t, 1)
	clk := newTick(0)
	DeviceInitialize(0, "tick", clk)
	tracedRegion(0, 1, clk, false)
	assert.Equal(t, 1, tt.flush(0), "flush")
	assert.False(t, Tracing(0), "still tracing after the complete callback panicked")
	tracedRegion(0, 1, clk, false) // the device keeps running
	assert.Zero(t, tt.stop(0), "stop of an aborted session succeeded")
	Finalize()
	b, _ := os.ReadFile(log)
	assert.Contains(t, string(b), "buffer_complete callback panicked: tool bug; tracing stopped", "verbose log")
}

// TestTraceFinalizeDelivers: records still queued at finalize are
// delivered before device_finalize, and nothing after it.
func TestTraceFinalizeDelivers(t *testing.T) {
	var order []string
	var omu sync.Mutex
	tt := &traceTool{}
	tt.complete = func(int, []byte, uint64, uint64) {
		omu.Lock()
		order = append(order, "complete")
		omu.Unlock()
	}
	tt.r = &recorder{extra: func(r *recorder) {
		r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackDeviceFinalize, ompt.DeviceFinalizeCallback(func(int) {
			omu.Lock()
			order = append(order, "device_finalize")
			omu.Unlock()
		}))
	}}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	Finalize()
	tracedRegion(0, 1, clks[0], false)
	time.Sleep(5 * time.Millisecond)
	omu.Lock()
	defer omu.Unlock()
	assert.Equal(t, "complete,device_finalize", strings.Join(order, ","), "order: want the records completed, then device_finalize, nothing after")
	lines, parts := tt.got()
	assert.Len(t, lines, 7, "records")
	if assert.NotEmpty(t, parts, "parts") {
		assert.True(t, parts[len(parts)-1].owned, "the last part's owned: parts %+v", parts)
	}
}

// TestTraceFlushFromCallback: flush and stop from inside the device's own
// buffer callback fail (they would wait for themselves) instead of
// deadlocking.
func TestTraceFlushFromCallback(t *testing.T) {
	var res []int
	tt := &traceTool{}
	tt.complete = func(dev int, _ []byte, _, _ uint64) {
		res = append(res, tt.flush(dev), tt.stop(dev))
	}
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	tt.flush(0)
	assert.Equal(t, []int{0, 0}, res, "flush, stop inside the callback")
}

// TestTraceRoutine: data operations of device memory routines are
// recorded on the device they touch, with target_id 0.
func TestTraceRoutine(t *testing.T) {
	tt := &traceTool{r: &recorder{plain: true}}
	clks := withTrace(t, tt, 2)
	r := RoutineBegin(0x77)
	assert.False(t, r.Tracing(), "a routine scope reports Tracing; the runtime asks Tracing(dev)")
	r.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 1, 16)
	b, e := clks[1].interval()
	r.DataOpEnd(0xd000)
	o := r.Op()
	o.Record(b, e, 0, nil)
	r.DataOpBegin(ompt.DataOpDelete, 0xd000, 1, 0, ompt.InitialDevice, 0)
	r.DataOpEnd(0)
	o = r.Op()
	o.Record(0, 0, 0, nil) // no times: the device clock is read
	r.End()
	tt.flush(1)
	lines, _ := tt.got()
	diffSeq(t, lines, []string{
		"dev1 rec data_op target_id=0 host_op_id=#1 ompt_target_data_transfer_to_device src=0x1000/2 dest=0xd000/1 bytes=16 code=0x77",
		"dev1 rec data_op target_id=0 host_op_id=#2 ompt_target_data_delete src=0xd000/1 dest=0x0/2 bytes=0 code=0x77",
	})
	checkTimes(t, tt)
}

// TestTraceConcurrent: constructs on two devices from several goroutines,
// with flushes from another: per device every record arrives once, and
// each construct's records are in order (begin, operations, end).
func TestTraceConcurrent(t *testing.T) {
	tt := &traceTool{size: 7 * ompt.RecordOMPTSize, native: ompt.NativeDataMotionExplicit}
	clks := withTrace(t, tt, 2)
	const G, N = 4, 50
	wg := tracedRegions(G, N, clks, func(g int) bool { return g%2 == 1 })
	stopFlush := make(chan struct{})
	var fw sync.WaitGroup
	fw.Add(1)
	go func() {
		defer fw.Done()
		for {
			select {
			case <-stopFlush:
				return
			default:
				tt.flush(0)
				tt.flush(1)
			}
		}
	}()
	wg.Wait()
	close(stopFlush)
	fw.Wait()
	tt.stop(0)
	tt.stop(1)
	w0, l0 := TraceStats(0)
	w1, l1 := TraceStats(1)
	require.Zero(t, l0+l1, "lost %d + %d records", l0, l1)
	tt.mu.Lock()
	defer tt.mu.Unlock()
	want := uint64(G / 2 * N * 7)
	assert.Equal(t, want, w0, "records written on device 0")
	assert.Equal(t, want+G/2*N*4, w1, "records written on device 1")
	assert.Len(t, tt.raw, G*N*7, "OMPT records delivered")
	// per construct: begin first, end last, 5 operations between
	state := map[uint64]int{}
	for _, r := range tt.raw {
		s := state[r.TargetID]
		switch {
		case r.Target() != nil && ompt.Endpoint(r.Target().Endpoint) == ompt.ScopeBegin:
			require.Zero(t, s, "target %d: records before its begin", r.TargetID)
		case r.Target() != nil:
			require.Equal(t, 6, s, "target %d: records before its end", r.TargetID)
		default:
			require.GreaterOrEqual(t, s, 1, "target %d: operation's position", r.TargetID)
			require.LessOrEqual(t, s, 5, "target %d: operation's position", r.TargetID)
		}
		state[r.TargetID] = s + 1
	}
	for id, s := range state {
		assert.Equal(t, 7, s, "target %d: records", id)
	}
}

// TestTraceNoAlloc: with tracing on, a construct with its records
// (native ones included, their data on the stack) allocates nothing.
func TestTraceNoAlloc(t *testing.T) {
	if !fastGetg || raceEnabled {
		t.Skip("getg allocates on this architecture, or the race detector's checkptr makes the native data escape")
	}
	tt := &traceTool{native: ompt.NativeDataMotionExplicit}
	clks := withTrace(t, tt, 1)
	clk := clks[0]
	allocs := testing.AllocsPerRun(200, func() { recordedConstruct(clk) })
	assert.Zero(t, allocs, "allocations per traced construct")
}

// recordedConstruct is an empty construct with one traced data operation
// and a traced kernel, as target makes it.
func recordedConstruct(clk *tickDevice) {
	t := TargetBegin(ompt.KindTarget, 0, 1)
	t.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
	var b, e int64
	if t.Tracing() {
		b, e = clk.interval()
	}
	t.DataOpEnd(0xd000)
	o := t.Op()
	hn := hostplugin.Record{Start: b, End: e, Queue: 1}.Native("", 0, 0)
	o.Record(b, e, 0, &NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent, Type: "host copy", Start: uint64(b), End: uint64(e), Data: hn.Bytes()})
	t.SubmitBegin(0)
	if t.Tracing() {
		b, e = clk.interval()
	}
	t.SubmitEnd()
	o = t.Op()
	o.Record(b, e, 1, nil)
	t.End()
}

// TestTraceTimesInsideCallbacks: on a device whose clock runs 100 ppm
// fast from its own epoch, every record's interval, translated with
// ompt_translate_time, lies inside the host times of its construct's
// begin and end callbacks (within 1 us), and the operations of one
// construct do not overlap.
func TestTraceTimesInsideCallbacks(t *testing.T) {
	type span struct{ b, e float64 }
	var mu sync.Mutex
	host := map[uint64]*span{}
	r := &recorder{extra: func(r *recorder) {
		r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, e ompt.Endpoint, _ int, _ *ompt.Data, id uint64, _ uintptr) {
			now := ompt.Wtime()
			mu.Lock()
			defer mu.Unlock()
			if e == ompt.ScopeBegin {
				host[id] = &span{b: now}
			} else {
				host[id].e = now
			}
		}))
	}}
	tt := &traceTool{r: r}
	reset(t, nil)
	tt.install(t, 1)
	dev := &clockDevice{offset: 5e12, rate: 1.0001}
	DeviceInitialize(0, "drift", dev)
	for range 40 {
		tc := TargetBegin(ompt.KindTarget, 0, 1)
		for range 3 {
			tc.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
			b, _ := dev.Now()
			e, _ := dev.Now()
			tc.DataOpEnd(0xd000)
			o := tc.Op()
			o.Record(b, e, 0, nil)
		}
		tc.End()
		time.Sleep(2 * time.Millisecond)
	}
	tt.flush(0)
	h := tt.handle(0)
	tr := tt.entry(0, "ompt_translate_time").(ompt.TranslateTimeFunc)
	tt.mu.Lock()
	defer tt.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, tt.raw, 40*5, "records")
	const tol = 1e-6
	var lastEnd uint64
	for i, rec := range tt.raw {
		s := host[rec.TargetID]
		require.NotNil(t, s, "record %d: no callbacks for target %d", i, rec.TargetID)
		end := rec.Time
		if d := rec.DataOp(); d != nil {
			end = d.EndTime
			assert.GreaterOrEqual(t, rec.Time, lastEnd, "record %d overlaps the previous operation", i)
			lastEnd = end
		}
		b, e := tr(h, rec.Time), tr(h, end)
		assert.GreaterOrEqual(t, b, s.b-tol, "record %d: [%.9f, %.9f] begins before its construct's callbacks [%.9f, %.9f]", i, b, e, s.b, s.e)
		assert.LessOrEqual(t, e, s.e+tol, "record %d: [%.9f, %.9f] ends after its construct's callbacks [%.9f, %.9f]", i, b, e, s.b, s.e)
		assert.GreaterOrEqual(t, e, b, "record %d: end before begin", i)
	}
}

// stuckRequestTool is a tracing tool whose buffer_request never returns
// (until the test ends; stuck closes at its first call), with StopTimeout
// 50 ms for the test.
func stuckRequestTool(t *testing.T) (tt *traceTool, stuck chan struct{}) {
	t.Helper()
	old := StopTimeout
	StopTimeout = 50 * time.Millisecond
	t.Cleanup(func() { StopTimeout = old })
	stuck, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	var once sync.Once
	tt = &traceTool{}
	tt.request = func(int) []byte {
		once.Do(func() { close(stuck) })
		<-release
		return nil
	}
	return tt, stuck
}

// TestTraceStopGivesUpOnStuckCallback: a tool whose buffer_request never
// returns does not hang DeviceFinalize (the runtime's Shutdown) silently:
// after StopTimeout it returns an error naming the device and the
// callback, and the device is finalized.
func TestTraceStopGivesUpOnStuckCallback(t *testing.T) {
	tt, stuck := stuckRequestTool(t)
	clks := withTrace(t, tt, 1)
	tracedRegion(0, 1, clks[0], false)
	<-stuck
	start := time.Now()
	err := DeviceFinalize(0)
	require.ErrorContains(t, err, "device 0", "DeviceFinalize: want an error naming device 0 and buffer_request")
	require.ErrorContains(t, err, "buffer_request callback has not returned", "DeviceFinalize: want an error naming device 0 and buffer_request")
	require.LessOrEqual(t, time.Since(start), 5*time.Second, "DeviceFinalize's time")
	assert.Error(t, DeviceFinalize(0), "second DeviceFinalize succeeded; the device should be finalized")
}

// TestFinalizeToolWarnsOfAStuckBufferCallback: a tool that calls
// ompt_finalize_tool while its buffer_request never returns is finalized
// after StopTimeout, and stderr names the device and the callback whose
// records were lost.
func TestFinalizeToolWarnsOfAStuckBufferCallback(t *testing.T) {
	tt, stuck := stuckRequestTool(t)
	clks := withTrace(t, tt, 1)
	warn, ok := stderr.(*bytes.Buffer)
	require.True(t, ok, "setup: stderr is not the test's buffer")
	tracedRegion(0, 1, clks[0], false)
	<-stuck
	require.NotNil(t, tt.r.lookup, "the tool was not initialized")
	tt.r.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	assert.Contains(t, warn.String(), "gompt: ompt: device 0 (tick): the tool's buffer_request callback has not returned", "stderr")
}

// TestRecordIDsFromEachEMIEvent: a tool that registers a single EMI
// target event and writes its ids there gets them in its records. Where
// no tool registered an EMI form, records skip the slots (idsFor); a
// tool with any one of the four must be seen as one that may write ids.
func TestRecordIDsFromEachEMIEvent(t *testing.T) {
	const toolTarget, toolOp = 0x7000, 0x7100
	for _, ev := range []ompt.Callback{ompt.CallbackTargetEMI, ompt.CallbackTargetDataOpEMI, ompt.CallbackTargetSubmitEMI, ompt.CallbackTargetMapEMI} {
		t.Run(fmt.Sprint(ev), func(t *testing.T) {
			tt := &traceTool{r: &recorder{extra: func(r *recorder) {
				set := r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)
				var f any
				switch ev {
				case ompt.CallbackTargetEMI:
					f = ompt.TargetEMICallback(func(_ ompt.TargetKind, _ ompt.Endpoint, _ int, _, _, td *ompt.Data, _ uintptr) { td.Value = toolTarget })
				case ompt.CallbackTargetDataOpEMI:
					f = ompt.TargetDataOpEMICallback(func(_ ompt.Endpoint, _, td *ompt.Data, hop *uint64, _ ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
						td.Value, *hop = toolTarget, toolOp
					})
				case ompt.CallbackTargetSubmitEMI:
					f = ompt.TargetSubmitEMICallback(func(_ ompt.Endpoint, td *ompt.Data, hop *uint64, _ uint32) { td.Value, *hop = toolTarget, toolOp })
				case ompt.CallbackTargetMapEMI:
					f = ompt.TargetMapEMICallback(func(td *ompt.Data, _, _ []uintptr, _ []uint64, _ []uint32, _ uintptr) { td.Value = toolTarget })
				}
				require.Equal(t, ompt.SetAlways, set(ev, f), "set_callback")
			}}}
			clks := withTrace(t, tt, 1)
			tracedRegion(0, 0x42, clks[0], false)
			require.Equal(t, 1, tt.flush(0), "flush")
			tt.mu.Lock()
			defer tt.mu.Unlock()
			var targets, ops int
			for i := range tt.raw {
				r := &tt.raw[i]
				if r.TargetID == toolTarget {
					targets++
				}
				if (r.DataOp() != nil && r.DataOp().HostOpID == toolOp) || (r.Kernel() != nil && r.Kernel().HostOpID == toolOp) {
					ops++
				}
			}
			assert.Positive(t, targets, "records with the tool's target_id, of %d", len(tt.raw))
			if ev == ompt.CallbackTargetDataOpEMI || ev == ompt.CallbackTargetSubmitEMI {
				assert.Positive(t, ops, "records with the tool's host_op_id, of %d", len(tt.raw))
			}
		})
	}
}
