// Package timeline is gompt's timeline tool. Run any gompt program with
// GOMPT_TRACE=FILE and, when the program shuts the runtime down
// (target.Shutdown), FILE holds a Chrome trace-event JSON of the whole run,
// which Perfetto (ui.perfetto.dev) and chrome://tracing open:
//
//	GOMPT_TRACE=trace.json go run ./examples/jacobi
//
// The file has one process per device, with one track per device queue
// (every transfer and kernel, from the device's own trace records, named
// with the operation and bytes, or the kernel's name and teams:
// "saxpy teams=512", the name from the launch's native record, see
// ompt/doc.go "Which kernel ran"), and a host process with one track per
// host thread (each target construct, named with its kind and Go call
// site, "target main.run main.go:42", from codeptr_ra through
// runtime.CallersFrames, with its data operations and kernel submits
// inside it, from the callbacks). A flow arrow joins each
// host operation to its device work; both carry the construct's target_id
// and the operation's host_op_id. Spans that would overlap without
// nesting on one track (nowait constructs, several queues reported as
// one) are spread over extra lanes named "thread 1234 (2)".
//
// It is an ordinary OMPT tool on the public interface of package ompt
// (with gompt's count of lost records, ompt.DeviceHandle.TraceStats, for
// its closing note): importing this package registers it (ompt.RegisterTool, from init) only
// when GOMPT_TRACE is set, so a program without GOMPT_TRACE pays nothing.
// Package target imports it, so every gompt program honours the variable.
// It registers target_emi, target_data_op_emi and target_submit_emi
// (host times from ompt.Wtime, the omp_get_wtime base) and
// device_initialize, where it starts tracing every device through the
// device's lookup (ompt_start_trace, then ompt_set_trace_ompt for all
// record types and ompt_set_trace_native for data motion and kernel
// execution); completed buffers are read through ompt_advance_buffer_cursor,
// ompt_get_record_type, ompt_get_record_ompt, ompt_get_record_native and
// ompt_get_record_abstract, and device times become host seconds through
// ompt_translate_time (which stays valid through device finalization, so
// the tool keeps no clock of its own). It runs beside other tools; but ompt has one
// tracing session per device, so a device another tool already traces is
// missing from the timeline (a one-line warning says which).
//
// In the file name, %r is the process's MPI or Slurm rank (Rank), %p its
// pid, %h its host and %% a percent sign, so that each process of a job
// writes its own file. Every file records in otherData its rank, host, pid
// and clock anchor (the wall-clock time of its time zero);
// cmd/timeline-merge (Merge) puts such files into one timeline, a process
// group per rank, on one time base.
//
// The file is created when the runtime starts (a path that cannot be
// created gives a one-line warning on standard error, and the tool stays
// off) and holds a placeholder until the tool's finalizer, which
// omptrt.Finalize calls after every device is finalized and its last
// buffers delivered, writes the trace. Nothing here panics into the
// program: errors are one-line warnings prefixed "gompt: GOMPT_TRACE".
package timeline

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/gompt/gompt/ompt"
)

// EnvVar names the environment variable that turns the tool on.
const EnvVar = "GOMPT_TRACE"

// BufferSize is the size of each trace buffer the tool gives the runtime
// (about 1400 operations with their native records).
const BufferSize = 256 << 10

// stderr receives the tool's warnings.
var stderr io.Writer = os.Stderr

func warnf(format string, args ...any) {
	fmt.Fprintf(stderr, "gompt: "+EnvVar+": "+format+"\n", args...)
}

func init() {
	raw := os.Getenv(EnvVar)
	path, bad := ExpandPath(strings.TrimSpace(raw), os.Getenv)
	if path == "" {
		return
	}
	if len(bad) > 0 {
		warnf("%q: %s left as is (want %%r rank, %%p pid, %%h host, %%%% a percent sign)", raw, strings.Join(bad, ", "))
	}
	ompt.RegisterTool("timeline", func(int, string) *ompt.StartResult {
		f, err := os.Create(path)
		if err != nil {
			warnf("%v (want a file name the program can create); no timeline is written", err)
			return nil
		}
		io.WriteString(f, placeholder)
		t := &tool{path: path, file: f}
		return &ompt.StartResult{Initialize: t.initialize, Finalize: t.finalize}
	})
}

// placeholder is the file's content until the trace is written: valid
// JSON that says why it is empty.
const placeholder = `{"traceEvents":[],"otherData":{"incomplete":"the program did not shut the gompt runtime down (target.Shutdown), so no trace was written"}}` + "\n"

// tool is the state of one timeline run. Callbacks come from any
// goroutine at once, buffer callbacks from each device's tracing
// goroutine; mu guards everything below it. Entry points of ompt are
// never called with mu held.
type tool struct {
	path string
	file *os.File

	getTargetInfo ompt.GetTargetInfoFunc

	mu         sync.Mutex
	devs       map[int]*devState
	devOrder   []devInfo
	constructs []*construct
	hostOps    map[uint64]*hostOp
	opOrder    []*hostOp
	devOps     []devOp
	records    int // OMPT records read
	natives    int // native records read
	warned     map[string]bool
}

// devState is one traced device: its handle and entry points.
type devState struct {
	num       int
	h         *ompt.DeviceHandle
	translate ompt.TranslateTimeFunc
	advance   ompt.AdvanceBufferCursorFunc
	recType   ompt.GetRecordTypeFunc
	recOMPT   ompt.GetRecordOMPTFunc
	recNative ompt.GetRecordNativeFunc
	recAbst   ompt.GetRecordAbstractFunc
	tracing   bool
}

func (t *tool) initialize(lookup ompt.LookupFunc, initialDevice int, _ *ompt.Data) int {
	set, ok := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
	if !ok {
		warnf("the runtime has no ompt_set_callback; no timeline is written")
		return 0
	}
	t.getTargetInfo, _ = lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)
	t.devs = map[int]*devState{}
	t.hostOps = map[uint64]*hostOp{}
	t.warned = map[string]bool{}
	for _, r := range []struct {
		ev ompt.Callback
		f  any
	}{
		{ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(t.deviceInitialize)},
		{ompt.CallbackTargetEMI, ompt.TargetEMICallback(t.target)},
		{ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(t.dataOp)},
		{ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(t.submit)},
	} {
		if res := set(r.ev, r.f); res != ompt.SetAlways {
			warnf("ompt_set_callback(%v) = %v; the timeline may miss those events", r.ev, res)
		}
	}
	return 1
}

// resolve sets *dst to the entry point lookup gives for name, or calls
// missing(name) when it gives none of dst's type.
func resolve[F any](lookup ompt.LookupFunc, name string, dst *F, missing func(string)) {
	if f, ok := lookup(name).(F); ok {
		*dst = f
		return
	}
	missing(name)
}

// deviceInitialize starts tracing device num through its lookup.
func (t *tool) deviceInitialize(num int, typ string, h *ompt.DeviceHandle, lookup ompt.LookupFunc, _ string) {
	d := &devState{num: num, h: h}
	var (
		setOMPT   ompt.SetTraceOMPTFunc
		setNative ompt.SetTraceNativeFunc
		start     ompt.StartTraceFunc
	)
	ok := true
	warn := func(name string) { // the first missing entry point only
		if ok {
			warnf("device %d: its lookup has no %s; its device work is missing from the timeline", num, name)
		}
		ok = false
	}
	resolve(lookup, "ompt_translate_time", &d.translate, warn)
	resolve(lookup, "ompt_set_trace_ompt", &setOMPT, warn)
	resolve(lookup, "ompt_set_trace_native", &setNative, warn)
	resolve(lookup, "ompt_start_trace", &start, warn)
	resolve(lookup, "ompt_advance_buffer_cursor", &d.advance, warn)
	resolve(lookup, "ompt_get_record_type", &d.recType, warn)
	resolve(lookup, "ompt_get_record_ompt", &d.recOMPT, warn)
	resolve(lookup, "ompt_get_record_native", &d.recNative, warn)
	resolve(lookup, "ompt_get_record_abstract", &d.recAbst, warn)
	t.mu.Lock()
	t.devOrder = append(t.devOrder, devInfo{num, typ})
	t.devs[num] = d
	t.mu.Unlock()
	if !ok {
		return
	}
	// start first: if another tool traces this device, leave its
	// session's settings alone
	if start(h, t.request, t.complete) != 1 {
		warnf("device %d: ompt_start_trace failed (another tool traces it?); its device work is missing from the timeline", num)
		return
	}
	d.tracing = true
	if res := setOMPT(h, true, 0); res == ompt.SetError || res == ompt.SetNever {
		warnf("device %d: ompt_set_trace_ompt = %v; its device work is missing from the timeline", num, res)
	}
	// native records name the queue each operation ran on; devices
	// without them answer never, and their work shares one track
	setNative(h, true, ompt.NativeDataMotionExplicit|ompt.NativeKernelExecution)
}

func (t *tool) target(kind ompt.TargetKind, ep ompt.Endpoint, dev int, _, _, targetData *ompt.Data, code uintptr) {
	now := ompt.Wtime()
	switch ep {
	case ompt.ScopeBegin:
		var id uint64
		if t.getTargetInfo != nil {
			_, id, _, _ = t.getTargetInfo()
		}
		c := &construct{id: id, kind: kind, dev: dev, thread: threadID(), code: code, begin: now, end: -1}
		targetData.Ptr = c
		t.mu.Lock()
		t.constructs = append(t.constructs, c)
		t.mu.Unlock()
	case ompt.ScopeEnd:
		c, _ := targetData.Ptr.(*construct)
		if c == nil {
			return
		}
		t.mu.Lock()
		c.end = now
		t.mu.Unlock()
	}
}

func targetID(td *ompt.Data) uint64 {
	if td != nil {
		if c, _ := td.Ptr.(*construct); c != nil {
			return c.id
		}
	}
	return 0
}

func (t *tool) dataOp(ep ompt.Endpoint, _, targetData *ompt.Data, hostOpID *uint64, op ompt.DataOpKind, _ uintptr, srcDev int, _ uintptr, dstDev int, bytes uint64, _ uintptr) {
	now := ompt.Wtime()
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ep {
	case ompt.ScopeBegin:
		o := &hostOp{id: *hostOpID, target: targetID(targetData), thread: threadID(), begin: now, end: -1,
			op: op, bytes: bytes, srcDev: srcDev, dstDev: dstDev}
		t.hostOps[o.id] = o
		t.opOrder = append(t.opOrder, o)
	case ompt.ScopeEnd:
		if o := t.hostOps[*hostOpID]; o != nil {
			o.end = now
		}
	}
}

func (t *tool) submit(ep ompt.Endpoint, targetData *ompt.Data, hostOpID *uint64, teams uint32) {
	now := ompt.Wtime()
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ep {
	case ompt.ScopeBegin:
		o := &hostOp{id: *hostOpID, target: targetID(targetData), thread: threadID(), begin: now, end: -1,
			submit: true, teams: teams}
		t.hostOps[o.id] = o
		t.opOrder = append(t.opOrder, o)
	case ompt.ScopeEnd:
		if o := t.hostOps[*hostOpID]; o != nil {
			o.end = now
		}
	}
}

// request is the buffer_request callback of every device.
func (t *tool) request(int) []byte { return make([]byte, BufferSize) }

// complete is the buffer_complete callback of every device: it reads the
// part's records through the device's entry points and keeps the device
// operations, translated to host seconds.
func (t *tool) complete(dev int, buf []byte, bytes, begin uint64, _ bool) {
	t.mu.Lock()
	d := t.devs[dev]
	t.mu.Unlock()
	if d == nil || bytes <= begin {
		return
	}
	ops := make([]devOp, 0, (bytes-begin)/uint64(ompt.RecordOMPTSize))
	var nrec, nnat int
	for cur := begin; ; {
		switch d.recType(buf, cur) {
		case ompt.RecordKindOMPT:
			nrec++
			if o, ok := readOMPT(d.recOMPT(buf, cur), dev); ok {
				ops = append(ops, o)
			}
		case ompt.RecordKindNative:
			nnat++
			p, hop := d.recNative(buf, cur)
			// a native record follows the OMPT record of its operation
			if n := len(ops); n > 0 && ops[n-1].hostOp == hop {
				if a := d.recAbst(p); a != nil {
					ops[n-1].queue, ops[n-1].native = a.HWID, a.Type
				}
			}
		default:
			t.warnOnce("bad-record", "device %d: an entry of a completed buffer is not a record; the rest of that buffer is skipped", dev)
		}
		next, ok := d.advance(d.h, buf, bytes, cur)
		if !ok || next >= bytes {
			break
		}
		cur = next
	}
	if len(ops) == 0 {
		t.mu.Lock()
		t.records += nrec
		t.natives += nnat
		t.mu.Unlock()
		return
	}
	// Device times become host seconds through ompt_translate_time, which
	// stays valid after the device is finalized (its last buffers come
	// during finalization) and is monotonic, so a record's end never
	// translates before its begin.
	for i := range ops {
		o := &ops[i]
		b, e := d.translate(d.h, o.rawBegin), d.translate(d.h, o.rawEnd)
		if b == 0 || e == 0 {
			continue
		}
		o.begin, o.end = b, max(e, b)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.records += nrec
	t.natives += nnat
	for i := range ops {
		o := &ops[i]
		if o.begin == 0 {
			t.warnOnceLocked("no-clock", "device %d: device times could not be translated; some device work is missing from the timeline", dev)
			continue
		}
		t.devOps = append(t.devOps, *o)
	}
}

// readOMPT turns a data-op or kernel record into a devOp; target records
// (construct begin and end on the device clock) are not drawn.
func readOMPT(r *ompt.RecordOMPT, dev int) (devOp, bool) {
	if r == nil {
		return devOp{}, false
	}
	o := devOp{dev: dev, target: r.TargetID, thread: r.ThreadID, rawBegin: r.Time}
	switch {
	case r.DataOp() != nil:
		b := r.DataOp()
		o.hostOp, o.op, o.bytes, o.rawEnd = b.HostOpID, ompt.DataOpKind(b.OpType), b.Bytes, b.EndTime
	case r.Kernel() != nil:
		k := r.Kernel()
		o.submit = true
		o.hostOp, o.reqTeams, o.teams, o.rawEnd = k.HostOpID, k.RequestedNumTeams, k.GrantedNumTeams, k.EndTime
	default:
		return devOp{}, false
	}
	o.rawEnd = max(o.rawEnd, o.rawBegin)
	return o, true
}

func (t *tool) warnOnce(key, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.warnOnceLocked(key, format, args...)
}

func (t *tool) warnOnceLocked(key, format string, args ...any) {
	if !t.warned[key] {
		t.warned[key] = true
		warnf(format, args...)
	}
}

// finalize writes the trace. omptrt.Finalize calls it after every device
// is finalized, so every record has been delivered.
func (t *tool) finalize(*ompt.Data) {
	t.mu.Lock()
	s := snapshot{
		devs:       append([]devInfo(nil), t.devOrder...),
		constructs: append([]*construct(nil), t.constructs...),
		hostOps:    append([]*hostOp(nil), t.opOrder...),
		devOps:     append([]devOp(nil), t.devOps...),
	}
	other := map[string]any{
		"tool": "gompt tools/timeline", "runtime": ompt.RuntimeVersion(),
		"time_base": "ompt.Wtime (omp_get_wtime) microseconds",
		"records":   t.records, "native_records": t.natives,
	}
	for k, v := range processInfo(os.Getenv) {
		other[k] = v
	}
	var lostAll uint64
	for _, di := range t.devOrder {
		if _, lost := t.devs[di.num].h.TraceStats(); lost > 0 {
			other[fmt.Sprintf("device_%d_lost_records", di.num)] = lost
			lostAll += lost
		}
	}
	t.mu.Unlock()
	s.other = other
	if lostAll > 0 {
		warnf("%d device trace records were lost; the timeline misses some device work", lostAll)
	}
	f := build(s)
	if err := t.writeFile(f); err != nil {
		warnf("writing %s: %v", t.path, err)
	}
}

func (t *tool) writeFile(f File) error {
	if err := t.file.Truncate(0); err != nil {
		t.file.Close()
		return err
	}
	if _, err := t.file.Seek(0, io.SeekStart); err != nil {
		t.file.Close()
		return err
	}
	if err := write(t.file, f); err != nil {
		t.file.Close()
		return err
	}
	return t.file.Close()
}
