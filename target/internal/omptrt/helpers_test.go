package omptrt

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
)

// reset puts the package back to its state at program start, with env as
// the environment and warnings going to the returned buffer.
func reset(t testing.TB, env map[string]string) *bytes.Buffer {
	t.Helper()
	Finalize()
	// a test's goroutine may run on the main thread: none is main to
	// the tests but the one that says so
	mainThread = 0
	stopAllTracing()
	mu.Lock()
	omptlink.Reset()
	finders = nil
	started, finalized, starting = false, false, false
	setMode(Mode52, 0)
	active, runtimeIfc = nil, nil
	cur.Store(nil)
	state.Store(int32(StateInactive))
	mu.Unlock()
	devMu.Lock()
	devices = map[int]*devState{}
	handles.Store(nil)
	devMu.Unlock()
	traced.Store(nil)
	threadMu.Lock()
	for i := range threadTab {
		threadTab[i].Store(nil)
	}
	threadList, threadMore = nil, map[uint64]*threadRec{}
	threadFull.Store(false)
	threadMu.Unlock()
	hostClock = ompt.Wtime
	var warn bytes.Buffer
	stderr = &warn
	getenv = func(k string) string { return env[k] }
	t.Cleanup(func() {
		Finalize()
		getenv = func(string) string { return "" }
	})
	return &warn
}

type fakeRuntime struct{ n int }

func (r fakeRuntime) NumDevices() int { return r.n }

// clockDevice is a device whose clock runs at rate device-ns per host-ns
// from offset, read from the host monotonic clock.
type clockDevice struct {
	procs  int
	offset int64
	rate   float64
	fail   bool
}

func (d *clockDevice) NumProcs() int { return d.procs }
func (d *clockDevice) Now() (int64, error) {
	if d.fail {
		return 0, fmt.Errorf("clock broken")
	}
	return d.offset + int64(float64(time.Duration(ompt.Wtime()*1e9))*d.rate), nil
}

// recorder is a Go tool that records every event it gets, as one line
// each, with ids and slot pointers renamed in order of first appearance
// (#1, #2 ... for ids; d1, d2 ... for *Data slots; h1 ... for host_op_id
// slots), so tests can compare whole ordered sequences.
type recorder struct {
	mu      sync.Mutex
	events  []string
	names   map[any]string
	lookup  ompt.LookupFunc
	initial int
	data    *ompt.Data

	emi, plain bool            // register EMI / non-EMI target callbacks
	extra      func(*recorder) // called in initialize after registering
	inside     func(r *recorder, ev string) string
	finalized  int
}

func (r *recorder) name(k any) string {
	switch v := k.(type) {
	case uint64:
		if v == 0 {
			return "0"
		}
	case *ompt.Data:
		if v == nil {
			return "nil"
		}
	case *uint64:
		if v == nil {
			return "nil"
		}
	default:
		panic(fmt.Sprintf("recorder: cannot name %T", k))
	}
	if r.names == nil {
		r.names = map[any]string{}
	}
	if n, ok := r.names[k]; ok {
		return n
	}
	var n string
	switch k.(type) {
	case uint64:
		n = fmt.Sprintf("#%d", countPrefix(r.names, "#")+1)
	case *ompt.Data:
		n = fmt.Sprintf("d%d", countPrefix(r.names, "d")+1)
	case *uint64:
		n = fmt.Sprintf("h%d", countPrefix(r.names, "h")+1)
	}
	r.names[k] = n
	return n
}

func countPrefix(m map[any]string, p string) int {
	c := 0
	for _, v := range m {
		if strings.HasPrefix(v, p) {
			c++
		}
	}
	return c
}

func (r *recorder) add(format string, args ...any) {
	ev := fmt.Sprintf(format, args...)
	if r.inside != nil {
		ev += r.inside(r, ev)
	}
	r.events = append(r.events, ev)
}

func (r *recorder) start(int, string) *ompt.StartResult {
	return &ompt.StartResult{
		Initialize: func(lookup ompt.LookupFunc, initial int, data *ompt.Data) int {
			r.lookup, r.initial, r.data = lookup, initial, data
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			r.register(set)
			if r.extra != nil {
				r.extra(r)
			}
			return 1
		},
		Finalize: func(*ompt.Data) {
			r.mu.Lock()
			r.finalized++
			r.add("finalize")
			r.mu.Unlock()
		},
	}
}

func (r *recorder) register(set ompt.SetCallbackFunc) {
	must := func(ev ompt.Callback, f any) {
		if res := set(ev, f); res != ompt.SetAlways {
			panic(fmt.Sprintf("set_callback(%v) = %v", ev, res))
		}
	}
	must(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(n int, typ string, h *ompt.DeviceHandle, lookup ompt.LookupFunc, doc string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.add("device_initialize dev=%d type=%s handle=%v lookup=%v doc=%v", n, typ, h != nil && h.Num() == n, lookup != nil, doc != "")
	}))
	must(ompt.CallbackDeviceFinalize, ompt.DeviceFinalizeCallback(func(n int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.add("device_finalize dev=%d", n)
	}))
	must(ompt.CallbackDeviceLoad, ompt.DeviceLoadCallback(func(n int, file string, off int64, vma uintptr, bytes uint64, host, dev uintptr, mod uint64) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.add("device_load dev=%d file=%q bytes=%d module=%s", n, file, bytes, r.name(mod))
	}))
	must(ompt.CallbackDeviceUnload, ompt.DeviceUnloadCallback(func(n int, mod uint64) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.add("device_unload dev=%d module=%s", n, r.name(mod))
	}))
	if r.plain {
		must(ompt.CallbackTarget, ompt.TargetCallback(func(k ompt.TargetKind, e ompt.Endpoint, dev int, task *ompt.Data, tid uint64, code uintptr) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.add("target %v %v dev=%d task=%s target_id=%s code=%#x", k, e, dev, r.name(task), r.name(tid), code)
		}))
		must(ompt.CallbackTargetDataOp, ompt.TargetDataOpCallback(func(tid, hop uint64, op ompt.DataOpKind, src uintptr, sd int, dst uintptr, dd int, n uint64, code uintptr) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.add("data_op target_id=%s host_op_id=%s %v src=%#x/%d dest=%#x/%d bytes=%d code=%#x", r.name(tid), r.name(hop), op, src, sd, dst, dd, n, code)
		}))
		must(ompt.CallbackTargetSubmit, ompt.TargetSubmitCallback(func(tid, hop uint64, teams uint32) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.add("submit target_id=%s host_op_id=%s teams=%d", r.name(tid), r.name(hop), teams)
		}))
		must(ompt.CallbackTargetMap, ompt.TargetMapCallback(func(tid uint64, h, d []uintptr, n []uint64, f []uint32, code uintptr) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.add("map target_id=%s host=%#x dev=%#x bytes=%v flags=%v code=%#x", r.name(tid), h, d, n, f, code)
		}))
	}
	if r.emi {
		must(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(k ompt.TargetKind, e ompt.Endpoint, dev int, task, ttd, td *ompt.Data, code uintptr) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if e == ompt.ScopeBegin {
				td.Value = 0xAB00 + uint64(len(r.events)) // what the tool writes at begin ...
			}
			r.add("target_emi %v %v dev=%d task=%s ttd=%s td=%s(%#x) code=%#x", k, e, dev, r.name(task), r.name(ttd), r.name(td), td.Value, code)
		}))
		must(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(e ompt.Endpoint, ttd, td *ompt.Data, hop *uint64, op ompt.DataOpKind, src uintptr, sd int, dst uintptr, dd int, n uint64, code uintptr) {
			r.mu.Lock()
			defer r.mu.Unlock()
			tdv := "-"
			if td != nil {
				tdv = fmt.Sprintf("%#x", td.Value) // ... is still there at every later event
			}
			r.add("data_op_emi %v ttd=%s td=%s(%s) hop=%s(%s) %v src=%#x/%d dest=%#x/%d bytes=%d code=%#x", e, r.name(ttd), r.name(td), tdv, r.name(hop), r.name(*hop), op, src, sd, dst, dd, n, code)
		}))
		must(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(e ompt.Endpoint, td *ompt.Data, hop *uint64, teams uint32) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.add("submit_emi %v td=%s(%#x) hop=%s(%s) teams=%d", e, r.name(td), td.Value, r.name(hop), r.name(*hop), teams)
		}))
		must(ompt.CallbackTargetMapEMI, ompt.TargetMapEMICallback(func(td *ompt.Data, h, d []uintptr, n []uint64, f []uint32, code uintptr) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.add("map_emi td=%s(%#x) host=%#x dev=%#x bytes=%v flags=%v code=%#x", r.name(td), td.Value, h, d, n, f, code)
		}))
	}
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func diffSeq(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return
	}
	var b strings.Builder
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if g != w {
			mark = "!!"
		}
		fmt.Fprintf(&b, "%s %2d got:  %s\n%s    want: %s\n", mark, i, g, mark, w)
	}
	assert.Fail(t, "event sequence differs", b.String())
}

// region drives one target construct the way package target does:
// alloc + copy in for a new item, map, submit, copy out, delete.
func region(kind ompt.TargetKind, dev int, code uintptr) {
	const host, dptr = 0x1000, 0xd000
	t := TargetBegin(kind, dev, code)
	t.DataOpBegin(ompt.DataOpAlloc, host, ompt.InitialDevice, 0, dev, 64)
	t.DataOpEnd(dptr)
	t.DataOpBegin(ompt.DataOpTransferToDevice, host, ompt.InitialDevice, dptr, dev, 64)
	t.DataOpEnd(dptr)
	if t != nil { // the slices escape: build them only when a tool listens
		t.Map([]uintptr{host}, []uintptr{dptr}, []uint64{64}, []uint32{ompt.MapFlagTo | ompt.MapFlagFrom})
	}
	t.SubmitBegin(4)
	t.SubmitEnd()
	t.DataOpBegin(ompt.DataOpTransferFromDevice, dptr, dev, host, ompt.InitialDevice, 64)
	t.DataOpEnd(host)
	t.DataOpBegin(ompt.DataOpDelete, dptr, dev, 0, ompt.InitialDevice, 0)
	t.DataOpEnd(0)
	t.End()
}
