package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/gompt/gompt/ompt"
)

// Event is one Chrome trace event, as the Trace Event Format document
// describes it ("JSON Object Format"): complete events (Ph "X", with Dur),
// flow events ("s" and "f", with ID and, for "f", BP "e"), and metadata
// ("M": process_name, thread_name, process_sort_index,
// thread_sort_index). TS and Dur are microseconds on the ompt.Wtime base
// (omp_get_wtime: seconds since the runtime's start, times 1e6).
type Event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	ID   uint64         `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// File is the whole JSON document the tool writes.
type File struct {
	TraceEvents     []Event        `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit,omitempty"`
	OtherData       map[string]any `json:"otherData,omitempty"`
}

// Process ids of the tracks: the host (every host thread) is HostPID;
// device n is DevicePID+n.
const (
	HostPID   = 1
	DevicePID = 100
)

// What the tool collected, in seconds on the ompt.Wtime base.
type construct struct {
	id         uint64
	kind       ompt.TargetKind
	dev        int
	thread     int
	code       uintptr
	begin, end float64
}

type hostOp struct {
	id, target     uint64
	thread         int
	begin, end     float64
	submit         bool
	op             ompt.DataOpKind
	bytes          uint64
	srcDev, dstDev int
	teams          uint32
}

type devOp struct {
	dev              int
	queue            uint64 // the native record's hardware id (queue); 0 if none
	native           string // the native record's type name
	submit           bool
	op               ompt.DataOpKind
	bytes            uint64
	target, hostOp   uint64
	thread           uint64
	reqTeams, teams  uint32
	rawBegin, rawEnd uint64
	begin, end       float64
}

type devInfo struct {
	num int
	typ string
}

// span is one complete event before it is placed on a lane.
type span struct {
	begin, end float64
	group      uint64 // target_id of the construct it belongs to; 0 for none
	ev         Event
}

// track is one named row group: a host thread, or a device queue.
type track struct {
	pid   int
	name  string
	spans []span
}

// pack places the spans on lanes so that on each lane every two spans
// either nest or do not overlap: what one Chrome trace thread (tid) must
// hold. A span goes inside the most recently begun open span that holds
// it, on whatever lane that is (so a construct's operations stay under
// it, preferring an open span of its own construct (group); otherwise
// on the first lane with nothing open; otherwise on a new
// lane. Equal begins are taken longest first. It returns each span's
// lane.
func pack(spans []span) []int {
	idx := make([]int, len(spans))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		sa, sb := spans[idx[a]], spans[idx[b]]
		if sa.begin != sb.begin {
			return sa.begin < sb.begin
		}
		return sa.end > sb.end
	})
	lane := make([]int, len(spans))
	var stacks [][]span // per lane: the open spans, innermost last
	for _, i := range idx {
		s := spans[i]
		in, free := -1, -1
		for l := range stacks {
			st := stacks[l]
			for len(st) > 0 && st[len(st)-1].end <= s.begin {
				st = st[:len(st)-1]
			}
			stacks[l] = st
			switch {
			case len(st) == 0:
				if free < 0 {
					free = l
				}
			case st[len(st)-1].end >= s.end:
				top := st[len(st)-1]
				if in < 0 {
					in = l
					break
				}
				cur := stacks[in][len(stacks[in])-1]
				mine, curMine := s.group != 0 && top.group == s.group, s.group != 0 && cur.group == s.group
				if (mine && !curMine) || (mine == curMine && top.begin > cur.begin) {
					in = l
				}
			}
		}
		l := in
		if l < 0 {
			l = free
		}
		if l < 0 {
			l = len(stacks)
			stacks = append(stacks, nil)
		}
		stacks[l] = append(stacks[l], s)
		lane[i] = l
	}
	return lane
}

func us(s float64) float64 { return s * 1e6 }

func dur(s float64) *float64 {
	d := max(us(s), 0)
	return &d
}

var kindNames = map[ompt.TargetKind]string{
	ompt.KindTarget: "target", ompt.KindTargetEnterData: "target enter data",
	ompt.KindTargetExitData: "target exit data", ompt.KindTargetUpdate: "target update",
	ompt.KindTargetNowait: "target nowait", ompt.KindTargetEnterDataNowait: "target enter data nowait",
	ompt.KindTargetExitDataNowait: "target exit data nowait", ompt.KindTargetUpdateNowait: "target update nowait",
}

var opNames = map[ompt.DataOpKind]string{
	ompt.DataOpAlloc: "alloc", ompt.DataOpTransferToDevice: "to device",
	ompt.DataOpTransferFromDevice: "from device", ompt.DataOpDelete: "delete",
	ompt.DataOpAssociate: "associate", ompt.DataOpDisassociate: "disassociate",
	ompt.DataOpMemset: "memset", ompt.DataOpAllocAsync: "alloc async",
	ompt.DataOpTransferToDeviceAsync: "to device async", ompt.DataOpTransferFromDeviceAsync: "from device async",
	ompt.DataOpDeleteAsync: "delete async",
}

func kindName(k ompt.TargetKind) string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return k.String()
}

func opName(k ompt.DataOpKind) string {
	if s, ok := opNames[k]; ok {
		return s
	}
	return k.String()
}

// size formats a byte count for an event name: "4000 B", "64 KiB",
// "1.5 MiB".
func size(n uint64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatUint(n, 10) + " B"
	case n < 1<<20:
		return trim(float64(n)/(1<<10)) + " KiB"
	case n < 1<<30:
		return trim(float64(n)/(1<<20)) + " MiB"
	}
	return trim(float64(n)/(1<<30)) + " GiB"
}

// trim formats v with at most one decimal, none if it is whole.
func trim(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s
}

func opLabel(op ompt.DataOpKind, bytes uint64) string {
	switch op {
	case ompt.DataOpDelete, ompt.DataOpDeleteAsync, ompt.DataOpDisassociate:
		return opName(op)
	}
	return opName(op) + " " + size(bytes)
}

// kernelName returns the kernel's name from a launch's native record
// type, "PLUGIN kernel: NAME" (ompt/doc.go, "Which kernel ran"), or "".
func kernelName(native string) string {
	if i := strings.Index(native, "kernel: "); i >= 0 {
		return native[i+len("kernel: "):]
	}
	return ""
}

// kernelLabel names a kernel slice: the kernel's name when its native
// record gives it ("saxpy teams=512"), else "kernel teams=512".
func kernelLabel(native string, teams uint32) string {
	name := kernelName(native)
	if name == "" {
		name = "kernel"
	}
	return name + " teams=" + strconv.FormatUint(uint64(teams), 10)
}

// callSite is a construct's Go call site, from its codeptr_ra.
type callSite struct {
	fn   string // the function's full name: "main.main", "example.com/p.(*T).run"
	file string
	line int
}

// short is the call site as a label: the function without its package
// path, then the file's base name and line: "main.main main.go:42".
func (c callSite) short() string {
	fn := c.fn
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		fn = fn[i+1:]
	}
	return fn + " " + filepath.Base(c.file) + ":" + strconv.Itoa(c.line)
}

// callSites resolves codeptr_ra values (return addresses in the program,
// as package target passes them) to Go call sites with
// runtime.CallersFrames, once each; ok is false for 0 and for addresses
// outside Go code.
type callSites map[uintptr]*callSite

func (m callSites) at(code uintptr) (callSite, bool) {
	if code == 0 {
		return callSite{}, false
	}
	c, seen := m[code]
	if !seen {
		f, _ := runtime.CallersFrames([]uintptr{code}).Next()
		if f.Function != "" && f.File != "" {
			c = &callSite{f.Function, f.File, f.Line}
		}
		m[code] = c
	}
	if c == nil {
		return callSite{}, false
	}
	return *c, true
}

// snapshot is what build turns into events: copies of the collected data.
type snapshot struct {
	devs       []devInfo
	constructs []*construct
	hostOps    []*hostOp
	devOps     []devOp
	other      map[string]any
}

// build makes the Chrome trace of a snapshot: one track per host thread
// (constructs, and their data operations and submits inside them), one per
// device queue (every transfer and kernel), and one flow from each host
// operation (or, if it has none, its construct) to its device work.
func build(s snapshot) File {
	tracks := map[string]*track{}
	var order []string
	get := func(pid int, name string) *track {
		key := strconv.Itoa(pid) + "/" + name
		if tr := tracks[key]; tr != nil {
			return tr
		}
		tr := &track{pid: pid, name: name}
		tracks[key] = tr
		order = append(order, key)
		return tr
	}
	threadName := func(tid int) string { return "thread " + strconv.Itoa(tid) }

	type where struct {
		tr *track
		i  int // the span's index in tr.spans
		ts float64
	}
	consAt := map[uint64]where{}
	sites := callSites{}
	for _, c := range s.constructs {
		if c.end < c.begin {
			continue // never ended (the program did not shut down)
		}
		tr := get(HostPID, threadName(c.thread))
		consAt[c.id] = where{tr, len(tr.spans), c.begin}
		ev := Event{
			Name: kindName(c.kind), Cat: "target", Ph: "X", TS: us(c.begin), Dur: dur(c.end - c.begin),
			Args: map[string]any{"target_id": c.id, "device": c.dev, "kind": c.kind.String(), "code_ptr": fmt.Sprintf("%#x", c.code)},
		}
		// Named after its Go call site: "target main.run main.go:42".
		if cs, ok := sites.at(c.code); ok {
			ev.Name += " " + cs.short()
			ev.Args["function"] = cs.fn
			ev.Args["file"] = cs.file + ":" + strconv.Itoa(cs.line)
		}
		tr.spans = append(tr.spans, span{c.begin, c.end, c.id, ev})
	}
	hostAt := map[uint64]where{} // host_op_id: where its flow starts
	for _, o := range s.hostOps {
		if o.end < o.begin {
			continue
		}
		tr := get(HostPID, threadName(o.thread))
		ev := Event{Ph: "X", TS: us(o.begin), Dur: dur(o.end - o.begin),
			Args: map[string]any{"host_op_id": o.id, "target_id": o.target}}
		if o.submit {
			ev.Name, ev.Cat = "submit", "target_submit"
			ev.Args["requested_teams"] = o.teams
		} else {
			ev.Name, ev.Cat = opLabel(o.op, o.bytes), "target_data_op"
			ev.Args["op"] = o.op.String()
			ev.Args["bytes"] = o.bytes
			ev.Args["src_device"] = o.srcDev
			ev.Args["dest_device"] = o.dstDev
		}
		hostAt[o.id] = where{tr, len(tr.spans), o.begin}
		tr.spans = append(tr.spans, span{o.begin, o.end, o.target, ev})
	}
	type flow struct {
		id       uint64
		from, to where
		target   uint64
	}
	var flows []flow
	devName := map[int]string{}
	for _, d := range s.devs {
		devName[d.num] = d.typ
	}
	for _, o := range s.devOps {
		name := "device " + strconv.Itoa(o.dev)
		if o.queue != 0 {
			name = "queue " + strconv.FormatUint(o.queue, 10)
		}
		tr := get(DevicePID+o.dev, name)
		ev := Event{Ph: "X", TS: us(o.begin), Dur: dur(o.end - o.begin),
			Args: map[string]any{"target_id": o.target, "host_op_id": o.hostOp, "device": o.dev,
				"thread_id": o.thread, "device_begin_ns": o.rawBegin, "device_end_ns": o.rawEnd}}
		if o.native != "" {
			ev.Args["native"] = o.native
		}
		if o.submit {
			ev.Name, ev.Cat = kernelLabel(o.native, o.teams), "kernel"
			if k := kernelName(o.native); k != "" {
				ev.Args["kernel"] = k
			}
			ev.Args["requested_teams"] = o.reqTeams
			ev.Args["granted_teams"] = o.teams
		} else {
			ev.Name, ev.Cat = opLabel(o.op, o.bytes), "data_op"
			ev.Args["op"] = o.op.String()
			ev.Args["bytes"] = o.bytes
		}
		to := where{tr, len(tr.spans), o.begin}
		tr.spans = append(tr.spans, span{o.begin, o.end, o.target, ev})
		from, ok := hostAt[o.hostOp]
		if !ok && o.target != 0 {
			from, ok = consAt[o.target]
		}
		if ok {
			flows = append(flows, flow{o.hostOp, from, to, o.target})
		}
	}

	// lanes: each track becomes one tid per lane
	var evs []Event
	type laneKey struct {
		tr   *track
		lane int
	}
	tids := map[laneKey]int{}
	sort.SliceStable(order, func(a, b int) bool {
		ta, tb := tracks[order[a]], tracks[order[b]]
		if ta.pid != tb.pid {
			return ta.pid < tb.pid
		}
		return ta.name < tb.name
	})
	nextTID := 1
	pids := map[int]bool{}
	var laneOf = map[*track][]int{}
	for _, key := range order {
		tr := tracks[key]
		pids[tr.pid] = true
		lanes := pack(tr.spans)
		laneOf[tr] = lanes
		n := 0
		for _, l := range lanes {
			n = max(n, l+1)
		}
		for l := range n {
			tid := nextTID
			nextTID++
			tids[laneKey{tr, l}] = tid
			name := tr.name
			if l > 0 {
				name += " (" + strconv.Itoa(l+1) + ")"
			}
			evs = append(evs,
				Event{Name: "thread_name", Ph: "M", PID: tr.pid, TID: tid, Args: map[string]any{"name": name}},
				Event{Name: "thread_sort_index", Ph: "M", PID: tr.pid, TID: tid, Args: map[string]any{"sort_index": tid}})
		}
	}
	var pidList []int
	for p := range pids {
		pidList = append(pidList, p)
	}
	sort.Ints(pidList)
	for _, p := range pidList {
		name := "host"
		if p >= DevicePID {
			n := p - DevicePID
			name = "device " + strconv.Itoa(n)
			if t := devName[n]; t != "" {
				name += ": " + t
			}
		}
		evs = append(evs,
			Event{Name: "process_name", Ph: "M", PID: p, Args: map[string]any{"name": name}},
			Event{Name: "process_sort_index", Ph: "M", PID: p, Args: map[string]any{"sort_index": p}})
	}
	var body []Event
	for _, key := range order {
		tr := tracks[key]
		for i, sp := range tr.spans {
			ev := sp.ev
			ev.PID, ev.TID = tr.pid, tids[laneKey{tr, laneOf[tr][i]}]
			body = append(body, ev)
		}
	}
	// a flow starts on the host span it comes from and ends on the device
	// span (bp "e": bound to the enclosing slice)
	for _, f := range flows {
		args := map[string]any{"target_id": f.target, "host_op_id": f.id}
		name := "target " + strconv.FormatUint(f.target, 10)
		body = append(body,
			Event{Name: name, Cat: "flow", Ph: "s", TS: us(f.from.ts), PID: f.from.tr.pid,
				TID: tids[laneKey{f.from.tr, laneOf[f.from.tr][f.from.i]}], ID: f.id, Args: args},
			Event{Name: name, Cat: "flow", Ph: "f", BP: "e", TS: us(f.to.ts), PID: f.to.tr.pid,
				TID: tids[laneKey{f.to.tr, laneOf[f.to.tr][f.to.i]}], ID: f.id, Args: args})
	}
	sort.SliceStable(body, func(a, b int) bool { return body[a].TS < body[b].TS })
	return File{TraceEvents: append(evs, body...), DisplayTimeUnit: "ns", OtherData: s.other}
}

// write encodes f as JSON, one event per line.
func write(w io.Writer, f File) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("{\"traceEvents\":[\n")
	for i, ev := range f.TraceEvents {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		bw.Write(b)
		if i < len(f.TraceEvents)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("],\n\"displayTimeUnit\":")
	b, _ := json.Marshal(f.DisplayTimeUnit)
	bw.Write(b)
	if f.OtherData != nil {
		b, err := json.Marshal(f.OtherData)
		if err != nil {
			return err
		}
		bw.WriteString(",\n\"otherData\":")
		bw.Write(b)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}
