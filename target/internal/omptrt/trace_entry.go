package omptrt

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
)

// The entry points.

func setTraceOMPT(dh *ompt.DeviceHandle, enable bool, etype ompt.Callback) ompt.SetResult {
	h := devOf(dh)
	if !traceable(h) {
		return ompt.SetError
	}
	var bits uint32
	res := ompt.SetAlways
	switch etype {
	case 0:
		bits, res = recordable, ompt.SetSometimes // target_map and host events are never recorded
	case ompt.CallbackTarget, ompt.CallbackTargetEMI:
		bits = 1 << ompt.CallbackTarget
	case ompt.CallbackTargetDataOp, ompt.CallbackTargetDataOpEMI:
		bits = 1 << ompt.CallbackTargetDataOp
	case ompt.CallbackTargetSubmit, ompt.CallbackTargetSubmitEMI:
		bits = 1 << ompt.CallbackTargetSubmit
	default:
		if etype > 0 && etype < numCallbacks {
			return ompt.SetNever
		}
		return ompt.SetError
	}
	tr := &h.tr
	tr.mu.Lock()
	if enable {
		tr.types.Store(tr.types.Load() | bits)
	} else {
		tr.types.Store(tr.types.Load() &^ bits)
	}
	tr.mu.Unlock()
	publishTrace()
	return res
}

func nativeCaps(h *devState) uint32 {
	if nd, ok := h.dev.(NativeDevice); ok {
		return nd.NativeFlags() & nativeAll
	}
	return 0
}

func setTraceNative(dh *ompt.DeviceHandle, enable bool, flags uint32) ompt.SetResult {
	h := devOf(dh)
	if !traceable(h) || flags == 0 || flags&^nativeAll != 0 {
		return ompt.SetError
	}
	got := flags & nativeCaps(h)
	tr := &h.tr
	tr.mu.Lock()
	if enable {
		tr.native.Store(tr.native.Load() | got)
	} else {
		tr.native.Store(tr.native.Load() &^ flags)
	}
	tr.mu.Unlock()
	publishTrace()
	switch got {
	case 0:
		return ompt.SetNever
	case flags:
		return ompt.SetAlways
	}
	return ompt.SetSometimes
}

func startTrace(dh *ompt.DeviceHandle, request ompt.BufferRequestFunc, complete ompt.BufferCompleteFunc) int {
	h := devOf(dh)
	return startTraceFor(nil, h, request, complete)
}

// startTraceFor starts a session for tool owner (nil when the lookup was
// not a tool's own, GetDeviceInfo's): its records carry the ids owner
// holds in its slots, the runtime's where it holds none.
func startTraceFor(owner *tool, h *devState, request ompt.BufferRequestFunc, complete ompt.BufferCompleteFunc) int {
	if !traceable(h) || request == nil || complete == nil {
		return 0
	}
	tr := &h.tr
	tr.mu.Lock()
	if tr.state != traceOff || h.isFinalized() {
		tr.mu.Unlock()
		return 0
	}
	tr.request, tr.complete = request, complete
	tr.owner.Store(owner)
	if cap(tr.fill) != ringCap {
		tr.fill, tr.spare = make([]uint64, 0, ringCap), make([]uint64, 0, ringCap)
	}
	tr.fill, tr.spare = tr.fill[:0], tr.spare[:0]
	tr.state = traceOn
	tr.flushReq, tr.flushDone, tr.lostAtStart, tr.untimedAtStart = 0, 0, tr.lost.Load(), tr.untimed.Load()
	tr.buf, tr.noBuf, tr.batches = nil, false, 0
	tr.done = make(chan struct{})
	done := tr.done
	tr.mu.Unlock()
	go tr.run()
	go tr.tick(done)
	publishTrace()
	return 1
}

func pauseTrace(dh *ompt.DeviceHandle, begin bool) int {
	h := devOf(dh)
	if !traceable(h) {
		return 0
	}
	tr := &h.tr
	tr.mu.Lock()
	switch {
	case tr.state == traceOn && begin:
		tr.state = tracePaused
	case tr.state == tracePaused && !begin:
		tr.state = traceOn
	case tr.state == traceOn || tr.state == tracePaused:
		// already where it was asked to be
	default:
		tr.mu.Unlock()
		return 0
	}
	tr.mu.Unlock()
	publishTrace()
	return 1
}

func flushTrace(dh *ompt.DeviceHandle) int {
	h := devOf(dh)
	if !traceable(h) {
		return 0
	}
	return h.tr.flush()
}

// flush waits until every record queued before the call is in a buffer
// handed to the tool. It cannot be done from the device's own buffer
// callbacks (the worker would wait for itself): that returns 0.
func (tr *tracer) flush() int {
	me, ok := waitOn(tr)
	if !ok {
		return 0
	}
	defer doneWaiting(me)
	tr.mu.Lock()
	if (tr.state != traceOn && tr.state != tracePaused) || tr.worker == getg() {
		tr.mu.Unlock()
		return 0
	}
	tr.flushReq++
	seq := tr.flushReq
	done := tr.done
	tr.wakeLocked()
	for tr.flushDone < seq && tr.done == done && tr.state != traceOff {
		tr.idle.Wait()
	}
	ended := tr.done != done || tr.state == traceOff
	tr.mu.Unlock()
	if ended {
		// The session ended meanwhile (a buffer callback panicked, or a
		// stop): return once its end is published, as stop does.
		<-done
	}
	return 1
}

// Waiting between delivery goroutines. A buffer callback may flush or
// stop any device's trace, and that waits for the device's delivery
// goroutine, which may itself be in a buffer callback that flushes
// another device, and so on. Each delivery goroutine that waits records
// whose worker it waits for (waitFor, under waitMu); a wait that would
// close a cycle (device A's callback flushing B while B's callback
// flushes A) is refused, and the flush or stop returns 0 at once, so
// every flush from a delivery callback either completes or returns 0.
// Waits from the application's goroutines are no part of a cycle: a
// delivery goroutine never waits for them.
var (
	waitMu  sync.Mutex
	workers = map[uintptr]*tracer{} // delivery goroutine (getg) -> its tracer; under waitMu
)

// setWorker records g as a delivery goroutine of tr; dropWorker(g)
// forgets it when it returns.
func setWorker(g uintptr, tr *tracer) {
	waitMu.Lock()
	workers[g] = tr
	waitMu.Unlock()
}

// dropWorker forgets delivery goroutine g, and only g: a session's
// goroutine returns after the session has ended (stop returned), and by
// then a new session of the same tracer may have its own goroutine. (It
// once forgot every goroutine of the tracer, the new session's too,
// whose buffer callbacks then flushed as the application's: a flush
// cycle between two devices was no longer refused, and deadlocked.)
func dropWorker(g uintptr) {
	waitMu.Lock()
	delete(workers, g)
	waitMu.Unlock()
}

// inDelivery reports whether the calling goroutine is a delivery
// goroutine (it is inside a buffer callback of some device).
func inDelivery() bool {
	g := getg()
	waitMu.Lock()
	defer waitMu.Unlock()
	return workers[g] != nil
}

// waitOn records that the calling goroutine is about to wait for tr's
// worker. For a delivery goroutine, ok is false when that wait would
// close a cycle of delivery goroutines waiting for each other (or for
// itself); me is the caller's tracer (nil for any other goroutine), for
// doneWaiting.
func waitOn(tr *tracer) (me *tracer, ok bool) {
	g := getg()
	waitMu.Lock()
	defer waitMu.Unlock()
	me = workers[g]
	if me == nil {
		return nil, true
	}
	for x := tr; x != nil; x = x.waitFor {
		if x == me {
			return nil, false
		}
	}
	me.waitFor = tr
	return me, true
}

func doneWaiting(me *tracer) {
	if me == nil {
		return
	}
	waitMu.Lock()
	me.waitFor = nil
	waitMu.Unlock()
}

func stopTrace(dh *ompt.DeviceHandle) int {
	h := devOf(dh)
	if !traceable(h) {
		return 0
	}
	n, err := h.tr.stop()
	if err != nil {
		fmt.Fprintf(stderr, "gompt: %v\n", err)
	}
	return n
}

// stop flushes and ends the session; when it returns, no callback of the
// session runs any more. From the device's own buffer callbacks it
// returns 0 and does nothing.
func (tr *tracer) stop() (int, error) {
	me, ok := waitOn(tr)
	if !ok {
		return 0, nil
	}
	defer doneWaiting(me)
	tr.mu.Lock()
	if tr.state == traceOff || tr.worker == getg() {
		tr.mu.Unlock()
		return 0, nil
	}
	done := tr.done
	first := tr.state != traceStopping
	tr.state = traceStopping
	tr.wakeLocked()
	tr.mu.Unlock()
	publishTrace()
	select {
	case <-done:
	case <-time.After(StopTimeout):
		what := "buffer callbacks"
		switch tr.calling.Load() {
		case callingRequest:
			what = "buffer_request callback"
		case callingComplete:
			what = "buffer_complete callback"
		}
		return 0, fmt.Errorf("ompt: device %d (%s): the tool's %s has not returned after %v; gave up on the device's trace (records not yet delivered are lost)",
			tr.h.num, tr.h.typ, what, StopTimeout)
	}
	if !first {
		return 0, nil // another goroutine stopped it
	}
	return 1, nil
}

func advanceBufferCursor(dh *ompt.DeviceHandle, b []byte, size, cur uint64) (uint64, bool) {
	h := devOf(dh)
	if dev, end, ok := lookupLive(b); ok {
		if h != nil && h.num != dev {
			return cur, false
		}
		size = min(size, end)
	}
	k, n := entryAt(b, size, cur)
	if k == ompt.RecordKindInvalid {
		return cur, false
	}
	next := cur + n
	if k2, _ := entryAt(b, size, next); k2 == ompt.RecordKindInvalid {
		return next, false
	}
	return next, true
}

func getRecordType(b []byte, cur uint64) ompt.RecordKind {
	k, _ := entryAt(b, limitFor(b), cur)
	return k
}

func getRecordOMPT(b []byte, cur uint64) *ompt.RecordOMPT { return ompt.RecordAt(b[:limitFor(b)], cur) }

func getRecordNative(b []byte, cur uint64) (unsafe.Pointer, uint64) {
	if k, _ := entryAt(b, limitFor(b), cur); k != ompt.RecordKindNative {
		return nil, 0
	}
	hdr := (*omptlink.Header)(unsafe.Pointer(&b[cur]))
	return unsafe.Pointer(&b[cur+uint64(ompt.NativeHeaderSize)]), hdr.HostOpID
}

func getRecordAbstract(p unsafe.Pointer) *ompt.RecordAbstract {
	if p == nil || uintptr(p)&7 != 0 {
		return nil
	}
	if off, ok := liveOffset(p); ok && off < uint64(ompt.NativeHeaderSize) {
		return nil // no header before it in its buffer
	}
	hdr := (*omptlink.Header)(unsafe.Add(p, -ompt.NativeHeaderSize))
	if hdr.Marker != ompt.NativeMarker {
		return nil
	}
	return &ompt.RecordAbstract{
		Class: ompt.NativeClass(hdr.Class), Type: nativeName(hdr.TypeIdx),
		StartTime: hdr.Start, EndTime: hdr.End, HWID: hdr.HWID,
	}
}

// The entry point values the device lookup returns.
var (
	setTraceOMPTEntry        = ompt.SetTraceOMPTFunc(setTraceOMPT)
	setTraceNativeEntry      = ompt.SetTraceNativeFunc(setTraceNative)
	startTraceEntry          = ompt.StartTraceFunc(startTrace)
	pauseTraceEntry          = ompt.PauseTraceFunc(pauseTrace)
	flushTraceEntry          = ompt.FlushTraceFunc(flushTrace)
	stopTraceEntry           = ompt.StopTraceFunc(stopTrace)
	advanceBufferCursorEntry = ompt.AdvanceBufferCursorFunc(advanceBufferCursor)
	getRecordTypeEntry       = ompt.GetRecordTypeFunc(getRecordType)
	getRecordOMPTEntry       = ompt.GetRecordOMPTFunc(getRecordOMPT)
	getRecordNativeEntry     = ompt.GetRecordNativeFunc(getRecordNative)
	getRecordAbstractEntry   = ompt.GetRecordAbstractFunc(getRecordAbstract)
)

func traceLookup(name string) any {
	switch name {
	case "ompt_set_trace_ompt":
		return setTraceOMPTEntry
	case "ompt_set_trace_native":
		return setTraceNativeEntry
	case "ompt_start_trace":
		return startTraceEntry
	case "ompt_pause_trace":
		return pauseTraceEntry
	case "ompt_flush_trace":
		return flushTraceEntry
	case "ompt_stop_trace":
		return stopTraceEntry
	case "ompt_advance_buffer_cursor":
		return advanceBufferCursorEntry
	case "ompt_get_record_type":
		return getRecordTypeEntry
	case "ompt_get_record_ompt":
		return getRecordOMPTEntry
	case "ompt_get_record_native":
		return getRecordNativeEntry
	case "ompt_get_record_abstract":
		return getRecordAbstractEntry
	}
	return nil
}

// deviceHandles returns the handles of every device initialized so far.
func deviceHandles() []*devState {
	devMu.Lock()
	defer devMu.Unlock()
	return slices.Collect(maps.Values(devices))
}

// stopAllTracing ends every device's session (Finalize, tests).
func stopAllTracing() {
	for _, h := range deviceHandles() {
		if _, err := h.tr.stop(); err != nil {
			fmt.Fprintf(stderr, "gompt: %v\n", err)
		}
	}
}

// entryAt classifies the entry at cursor in b[:limit] (omptlink.EntryAt).
func entryAt(b []byte, limit, cursor uint64) (ompt.RecordKind, uint64) {
	k, n := omptlink.EntryAt(b, limit, cursor)
	return ompt.RecordKind(k), n
}
