package ompt

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Device tracing entry points: the Go forms of the omp-tools.h typedefs,
// resolved by each device's lookup. A buffer is a []byte (for a C tool,
// ompt/cabi's view of the C memory the tool gave: the same bytes); a
// cursor is a byte offset into it. Results that C returns through pointer
// arguments are Go results; C's int flags are Go bools where they are
// arguments. All are safe for concurrent use from any goroutine,
// including from inside callbacks; a nil, never-initialized or finalized
// device makes them fail (0, SetError, RecordKindInvalid, nil).
type (
	// BufferRequestFunc is ompt_callback_buffer_request_t: the tool returns
	// a buffer for device deviceNum's records (nil or empty: none). The
	// tool keeps ownership of the memory; the runtime writes into it
	// until it hands it back with buffer_owned = 1.
	BufferRequestFunc func(deviceNum int) (buffer []byte)
	// BufferCompleteFunc is ompt_callback_buffer_complete_t: records of
	// device deviceNum lie in buffer from cursor begin up to offset bytes
	// (bytes == 0: none). owned is buffer_owned: true on the last part of
	// a buffer, which is the tool's again; false on an earlier part (after
	// a flush), when the runtime keeps writing into the rest.
	BufferCompleteFunc func(deviceNum int, buffer []byte, bytes uint64, begin uint64, owned bool)

	// SetTraceOMPTFunc is ompt_set_trace_ompt_t; etype 0 means every type.
	SetTraceOMPTFunc func(device *DeviceHandle, enable bool, etype Callback) SetResult
	// SetTraceNativeFunc is ompt_set_trace_native_t; flags are Native* bits.
	SetTraceNativeFunc func(device *DeviceHandle, enable bool, flags uint32) SetResult
	// StartTraceFunc is ompt_start_trace_t: 1 on success.
	StartTraceFunc func(device *DeviceHandle, request BufferRequestFunc, complete BufferCompleteFunc) int
	// PauseTraceFunc is ompt_pause_trace_t: 1 on success.
	PauseTraceFunc func(device *DeviceHandle, beginPause bool) int
	// FlushTraceFunc is ompt_flush_trace_t: 1 on success.
	FlushTraceFunc func(device *DeviceHandle) int
	// StopTraceFunc is ompt_stop_trace_t: 1 on success.
	StopTraceFunc func(device *DeviceHandle) int
	// AdvanceBufferCursorFunc is ompt_advance_buffer_cursor_t: ok when the
	// entry after current lies within buffer[:size]. device may be nil.
	AdvanceBufferCursorFunc func(device *DeviceHandle, buffer []byte, size uint64, current uint64) (next uint64, ok bool)
	// GetRecordTypeFunc is ompt_get_record_type_t.
	GetRecordTypeFunc func(buffer []byte, current uint64) RecordKind
	// GetRecordOMPTFunc is ompt_get_record_ompt_t: a pointer into buffer,
	// nil if the entry is not an OMPT record.
	GetRecordOMPTFunc func(buffer []byte, current uint64) *RecordOMPT
	// GetRecordNativeFunc is ompt_get_record_native_t: a pointer to the
	// native record in buffer (the plugin's type: HostNative, ...) and
	// the host_op_id of its operation; nil if the entry is not native.
	GetRecordNativeFunc func(buffer []byte, current uint64) (native unsafe.Pointer, hostOpID uint64)
	// GetRecordAbstractFunc is ompt_get_record_abstract_t; native must be
	// a pointer get_record_native returned (nil gives nil).
	GetRecordAbstractFunc func(native unsafe.Pointer) *RecordAbstract
)

// NativeDevice is implemented by a Device whose plugin attaches native
// records to its operations; NativeFlags returns the Native* monitoring
// flags it can honour. A Device without it honours none, and
// ompt_set_trace_native answers ompt_set_never for every flag.
type NativeDevice interface {
	NativeFlags() uint32
}

// ringCap is the number of records a device's ring holds at first. When
// the application makes records faster than the tracing goroutine
// delivers them for a while (a GC cycle, a slow buffer callback, the
// goroutine not scheduled), the ring doubles, up to ringMax records
// (about 14 MiB); more are dropped and counted as lost. Vars for tests.
var ringCap, ringMax = 2048, 1 << 16

type traceState int32

const (
	traceOff traceState = iota
	traceOn
	tracePaused
	traceStopping
)

// recordable is the set of record types gompt writes, one bit per event
// number.
const recordable = 1<<CallbackTarget | 1<<CallbackTargetDataOp | 1<<CallbackTargetSubmit

// tracer is one device's tracing: what the tool enabled, the session's
// callbacks, the ring of records waiting for delivery, and the worker
// goroutine that delivers them.
type tracer struct {
	h      *DeviceHandle
	types  atomic.Uint32 // enabled record types (bits 8, 9, 10); written under mu
	native atomic.Uint32 // enabled native flags; written under mu

	mu        sync.Mutex
	work      sync.Cond // worker: records, a flush or a stop
	idle      sync.Cond // flushers: flushDone moved, or the session ended
	state     traceState
	request   BufferRequestFunc
	complete  BufferCompleteFunc
	fill      []pending // producers append; bounded by cap
	spare     []pending
	waiting   bool // worker is in work.Wait
	flushReq  uint64
	flushDone uint64
	worker    uintptr // getg of the worker
	done      chan struct{}

	written, lost atomic.Uint64 // since DeviceInitialize
	sessionLost   uint64        // worker-owned and under mu

	// worker-owned: the buffer being filled
	buf       []byte
	live      *liveBuf // buf's registration
	part, end uint64   // the current part is buf[part:end]
	noBuf     bool     // a request failed during this batch
}

// pending is one queued operation: an OMPT record, a native record, or
// both (written as two entries, OMPT first).
type pending struct {
	rec     RecordOMPT
	hasRec  bool
	hasNat  bool
	natLen  uint8
	nat     nativeHeader
	natData [NativeMax]byte
}

func (tr *tracer) init(h *DeviceHandle) {
	tr.h = h
	tr.work.L = &tr.mu
	tr.idle.L = &tr.mu
}

// traceable reports whether h is a live device handle made by
// DeviceInitialize.
func traceable(h *DeviceHandle) bool {
	return h != nil && h.dev != nil && h.tr.h == h && !h.isFinalized()
}

// The published set of devices that accept records: one atomic load
// answers Tracing. Rebuilt (copy on write) on every change of a device's
// tracing state or enabled types.
type traceTable struct{ t []*tracer }

var (
	traced  atomic.Pointer[traceTable]
	traceMu sync.Mutex // serialises publishTrace
)

func (tab *traceTable) get(dev int) *tracer {
	if tab == nil || uint(dev) >= uint(len(tab.t)) {
		return nil
	}
	return tab.t[dev]
}

func tracerOf(dev int) *tracer { return traced.Load().get(dev) }

// publishTrace rebuilds the table from the current state of every device.
// Callers must not hold any tracer's mu or devMu.
func publishTrace() {
	traceMu.Lock()
	defer traceMu.Unlock()
	devMu.Lock()
	hs := make([]*DeviceHandle, 0, len(devices))
	for _, h := range devices {
		hs = append(hs, h)
	}
	devMu.Unlock()
	var tab *traceTable
	for _, h := range hs {
		tr := &h.tr
		tr.mu.Lock()
		on := tr.state == traceOn && (tr.types.Load() != 0 || tr.native.Load() != 0)
		tr.mu.Unlock()
		if !on || h.num < 0 || h.num >= 1<<16 {
			continue
		}
		if tab == nil {
			tab = &traceTable{}
		}
		for len(tab.t) <= h.num {
			tab.t = append(tab.t, nil)
		}
		tab.t[h.num] = tr
	}
	traced.Store(tab)
}

// Tracing reports whether device deviceNum records trace records now
// (tracing started, not paused, some record type or native flag
// enabled). One atomic load, no allocation: the runtime calls it before
// each device operation and takes device timestamps (queue events) only
// when it is true.
func Tracing(deviceNum int) bool { return traced.Load().get(deviceNum) != nil }

// TraceStats reports for device deviceNum how many trace entries were
// written into tool buffers and how many were lost (queue full, no
// buffer or too small a buffer from buffer_request, a buffer callback
// that panicked) since the device was initialized; for the runtime's
// GOMPT_INFO. An unknown device reports 0, 0.
func TraceStats(deviceNum int) (written, lost uint64) {
	devMu.Lock()
	h := devices[deviceNum]
	devMu.Unlock()
	if h == nil {
		return 0, 0
	}
	return h.tr.written.Load(), h.tr.lost.Load()
}

// slotLocked returns the next free slot of the ring, or nil when the
// session does not accept records (not started, paused, stopping) or the
// ring is full (counted as lost). tr.mu must be held.
func (tr *tracer) slotLocked() *pending {
	if tr.state != traceOn {
		return nil
	}
	n := len(tr.fill)
	if n == cap(tr.fill) && n < ringMax {
		// The worker holds the other ring; it swaps this one in at its
		// next batch, so both grow to the largest size needed.
		tr.fill = append(tr.fill, make([]pending, min(n, ringMax-n))...)[:n]
	}
	if n == cap(tr.fill) {
		tr.lost.Add(1)
		tr.sessionLost++
		return nil
	}
	tr.fill = tr.fill[:n+1]
	p := &tr.fill[n]
	p.hasRec, p.hasNat = false, false
	return p
}

// commitLocked wakes the worker if it sleeps and a batch of records is
// waiting; tr.mu must be held. Waking it for every record would cost the
// application a futex wake per operation; the ticker (tick) delivers
// smaller batches within tickEvery.
func (tr *tracer) commitLocked() {
	if tr.waiting && len(tr.fill) >= max(cap(tr.fill)/4, 1) {
		tr.waiting = false
		tr.work.Signal()
	}
}

// wakeLocked wakes the worker if it sleeps, whatever is queued (flush,
// stop); tr.mu must be held.
func (tr *tracer) wakeLocked() {
	if tr.waiting {
		tr.waiting = false
		tr.work.Signal()
	}
}

// tickEvery bounds how long a record waits for delivery when records come
// too slowly to fill a batch.
const tickEvery = 2 * time.Millisecond

// tick wakes the worker for any waiting record every tickEvery, until the
// session ends (done is closed).
func (tr *tracer) tick(done <-chan struct{}) {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		tr.mu.Lock()
		if tr.waiting && len(tr.fill) > 0 {
			tr.waiting = false
			tr.work.Signal()
		}
		tr.mu.Unlock()
	}
}

// fillTarget makes p the target record (begin or end of construct t).
func fillTarget(p *pending, t *Target, endpoint Endpoint, now int64) {
	p.hasRec, p.hasNat = true, false
	p.rec = RecordOMPT{Type: int32(CallbackTarget), Time: uint64(now), ThreadID: t.tid, TargetID: t.id}
	b := (*RecordTarget)(unsafe.Pointer(&p.rec.body))
	b.Kind, b.Endpoint, b.DeviceNum = int32(t.kind), int32(endpoint), int32(t.dev)
	b.TargetID, b.CodePtr = t.id, t.code
}

// fillOp makes p the record(s) of one data operation or kernel: the OMPT
// record if rec, the native record if native is non-nil.
func fillOp(p *pending, o *TracedOp, begin, end uint64, granted uint32, rec bool, native *NativeInfo) {
	p.hasRec, p.hasNat = rec, native != nil
	if rec {
		p.rec = RecordOMPT{Type: int32(o.event), Time: begin, ThreadID: o.thread, TargetID: o.targetID}
		if o.event == CallbackTargetDataOp {
			b := (*RecordTargetDataOp)(unsafe.Pointer(&p.rec.body))
			b.HostOpID, b.OpType = o.hostOpID, int32(o.op)
			b.SrcAddr, b.SrcDeviceNum = o.src, int32(o.srcDev)
			b.DestAddr, b.DestDeviceNum = o.dst, int32(o.dstDev)
			b.Bytes, b.EndTime, b.CodePtr = o.bytes, end, o.code
		} else {
			b := (*RecordTargetKernel)(unsafe.Pointer(&p.rec.body))
			b.HostOpID, b.RequestedNumTeams, b.GrantedNumTeams, b.EndTime = o.hostOpID, o.teams, granted, end
		}
	}
	if native != nil {
		n := copy(p.natData[:], native.Data)
		clear(p.natData[n:])
		p.natLen = uint8(n)
		p.nat = nativeHeader{
			marker: NativeMarker, hostOpID: o.hostOpID, class: int32(native.Class),
			typeIdx: internNative(native.Type), start: native.Start, end: native.End, hwid: native.HWID,
		}
		p.nat.size = uint32(NativeHeaderSize + (max(n, 1)+7)&^7)
	}
}

// push queues records (made by fillTarget and fillOp), in order, in one
// critical section. Those the ring has no room for are lost.
func (tr *tracer) push(recs []pending) {
	tr.mu.Lock()
	for i := range recs {
		p := tr.slotLocked()
		if p == nil {
			if tr.state == traceOn && i+1 < len(recs) { // slotLocked counted one
				tr.lost.Add(uint64(len(recs) - i - 1))
				tr.sessionLost += uint64(len(recs) - i - 1)
			}
			break
		}
		r := &recs[i]
		p.hasRec, p.hasNat = r.hasRec, r.hasNat
		if r.hasRec {
			p.rec = r.rec
		}
		if r.hasNat {
			p.nat, p.natLen, p.natData = r.nat, r.natLen, r.natData
		}
	}
	tr.commitLocked()
	tr.mu.Unlock()
}

// run is the worker goroutine of one tracing session: it takes the queued
// records in order, writes them into tool buffers, and calls the tool's
// buffer callbacks, never on the application's goroutines.
func (tr *tracer) run() {
	tr.mu.Lock()
	tr.worker = getg()
	for {
		for len(tr.fill) == 0 && tr.flushReq == tr.flushDone && tr.state != traceStopping {
			tr.waiting = true
			tr.work.Wait()
		}
		tr.waiting = false
		batch := tr.fill
		tr.fill = tr.spare[:0]
		flush, flushed := tr.flushReq, tr.flushDone
		stopping := tr.state == traceStopping
		tr.mu.Unlock()

		if len(batch) > 0 {
			tr.h.resampleIfStale()
		}
		ok := true
		tr.noBuf = false
		for i := range batch {
			if ok = tr.deliver(&batch[i]); !ok {
				tr.lost.Add(uint64(len(batch) - i))
				break
			}
		}
		if ok && (stopping || flush != flushed) {
			ok = tr.completePart(stopping)
		}

		tr.mu.Lock()
		tr.spare = batch[:0]
		if !ok {
			tr.abortLocked()
			return
		}
		tr.flushDone = flush
		tr.idle.Broadcast()
		if stopping {
			tr.endLocked()
			return
		}
	}
}

// endLocked closes the session after its last delivery; tr.mu is held and
// released.
func (tr *tracer) endLocked() {
	lost := tr.sessionLost
	tr.state = traceOff
	tr.request, tr.complete = nil, nil
	tr.buf = nil
	tr.worker = 0
	tr.fill = tr.fill[:0]
	done := tr.done
	tr.idle.Broadcast()
	tr.mu.Unlock()
	if lost > 0 {
		vlogf("Device %d: %d trace records lost (no buffer or too small a buffer from buffer_request, or more than %d records waiting).", tr.h.num, lost, ringMax)
	}
	publishTrace()
	close(done)
}

// abortLocked ends the session after a tool buffer callback panicked:
// queued records are dropped (counted), no callback is called again.
func (tr *tracer) abortLocked() {
	tr.lost.Add(uint64(len(tr.fill)))
	tr.sessionLost += uint64(len(tr.fill))
	tr.fill = tr.fill[:0]
	if tr.buf != nil {
		unregisterLive(tr.buf, tr.live)
	}
	tr.endLocked()
}

// deliver writes one queued operation; false when a callback panicked.
func (tr *tracer) deliver(p *pending) bool {
	if p.hasRec {
		if !tr.put(unsafe.Pointer(&p.rec), uint64(RecordOMPTSize), nil, 0) {
			return false
		}
	}
	if p.hasNat {
		if !tr.put(unsafe.Pointer(&p.nat), uint64(NativeHeaderSize), p.natData[:p.natLen], uint64(p.nat.size)) {
			return false
		}
	}
	return true
}

// put writes one entry of size n (or total, if larger: a native header of
// n bytes followed by data, zero-padded) at the end of the current
// buffer, completing it and requesting a new one when it is full. A
// record that finds no buffer is lost. False when a callback panicked.
func (tr *tracer) put(src unsafe.Pointer, n uint64, data []byte, total uint64) bool {
	total = max(total, n)
	if tr.buf == nil || uint64(len(tr.buf))-tr.end < total {
		if tr.buf != nil && !tr.completePart(true) {
			return false
		}
		if !tr.noBuf && !tr.requestBuf(total) {
			return false
		}
		if tr.buf == nil {
			tr.noBuf = true
			tr.lost.Add(1)
			tr.sessionLost++
			return true
		}
	}
	dst := tr.buf[tr.end : tr.end+total]
	k := copy(dst, unsafe.Slice((*byte)(src), n))
	k += copy(dst[k:], data)
	clear(dst[k:])
	tr.end += total
	tr.written.Add(1)
	return true
}

// requestBuf asks the tool for a buffer that can hold at least need
// bytes. A buffer that is too small goes straight back to the tool
// (complete with bytes 0, owned). False when a callback panicked.
func (tr *tracer) requestBuf(need uint64) bool {
	var b []byte
	if err := catch(func() { b = tr.request(tr.h.num) }); err != nil {
		tr.toolPanic("buffer_request", err)
		return false
	}
	tr.buf = nil
	if len(b) == 0 {
		return true
	}
	off := firstOffset(b)
	if uint64(len(b)) < off+need {
		if err := catch(func() { tr.complete(tr.h.num, b, 0, 0, true) }); err != nil {
			tr.toolPanic("buffer_complete", err)
			return false
		}
		return true
	}
	tr.buf, tr.part, tr.end = b, off, off
	tr.live = registerLive(b, tr.h.num)
	return true
}

// completePart hands the current part of the buffer to the tool. owned:
// the buffer goes back to the tool (it is full, or the session stops);
// otherwise (a flush) the runtime keeps writing after the part, unless
// no record fits any more. An empty part is not delivered unless the
// buffer goes back (then bytes and begin are 0). False when the callback
// panicked.
func (tr *tracer) completePart(owned bool) bool {
	b := tr.buf
	if b == nil {
		return true
	}
	begin, bytes := tr.part, tr.end
	if !owned && uint64(len(b))-bytes < uint64(MaxEntrySize) {
		owned = true
	}
	if begin == bytes {
		if !owned {
			return true
		}
		begin, bytes = 0, 0
	}
	setLiveEnd(b, bytes)
	err := catch(func() { tr.complete(tr.h.num, b, bytes, begin, owned) })
	if owned {
		unregisterLive(b, tr.live)
		tr.buf, tr.live = nil, nil
	} else {
		tr.part = tr.end
	}
	if err != nil {
		tr.toolPanic("buffer_complete", err)
		return false
	}
	return true
}

func (tr *tracer) toolPanic(what string, err error) {
	vlogf("Device %d: the tool's %s callback panicked: %v; tracing stopped on this device.", tr.h.num, what, err)
	fmt.Fprintf(stderr, "gompt: OMPT tool %s callback panicked on device %d: %v; tracing stopped on this device\n", what, tr.h.num, err)
}

// Buffers the runtime holds or is completing, so the entry points can
// refuse cursors beyond what was delivered or a buffer of another device.
type liveBuf struct {
	b   []byte
	dev int
	end uint64
}

var (
	liveMu sync.Mutex
	live   = map[uintptr]*liveBuf{}
)

func bufKey(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

func registerLive(b []byte, dev int) *liveBuf {
	l := &liveBuf{b: b, dev: dev}
	liveMu.Lock()
	live[bufKey(b)] = l
	liveMu.Unlock()
	return l
}

func setLiveEnd(b []byte, end uint64) {
	liveMu.Lock()
	if l := live[bufKey(b)]; l != nil {
		l.end = end
	}
	liveMu.Unlock()
}

// unregisterLive forgets b, if it is still the registration l: by the time
// its owned completion returns, the tool may have freed the memory and
// another device may have been handed the same address.
func unregisterLive(b []byte, l *liveBuf) {
	liveMu.Lock()
	if k := bufKey(b); live[k] == l {
		delete(live, k)
	}
	liveMu.Unlock()
}

// lookupLive returns the device and delivered extent of a buffer the
// runtime holds; ok is false for a buffer it does not know (already
// handed back, or not a trace buffer).
func lookupLive(b []byte) (dev int, end uint64, ok bool) {
	k := bufKey(b)
	if k == 0 {
		return 0, 0, false
	}
	liveMu.Lock()
	defer liveMu.Unlock()
	if l := live[k]; l != nil {
		return l.dev, l.end, true
	}
	return 0, 0, false
}

// LiveBuffer returns the whole buffer the runtime holds at address p (the
// start of a buffer a tool's buffer_request returned), or nil. ompt/cabi
// uses it to give C entry points that receive no size (get_record_type,
// get_record_ompt, get_record_native) the buffer's real extent.
func LiveBuffer(p unsafe.Pointer) []byte {
	liveMu.Lock()
	defer liveMu.Unlock()
	if l := live[uintptr(p)]; l != nil {
		return l.b
	}
	return nil
}

// liveOffset returns p's offset in the live buffer that holds it.
func liveOffset(p unsafe.Pointer) (uint64, bool) {
	liveMu.Lock()
	defer liveMu.Unlock()
	for k, l := range live {
		if uintptr(p) >= k && uintptr(p) < k+uintptr(len(l.b)) {
			return uint64(uintptr(p) - k), true
		}
	}
	return 0, false
}

// limitFor is how far entry points may read in b: the delivered extent
// for a buffer the runtime holds, the whole slice otherwise.
func limitFor(b []byte) uint64 {
	if _, end, ok := lookupLive(b); ok {
		return end
	}
	return uint64(len(b))
}

// The entry points.

func setTraceOMPT(h *DeviceHandle, enable bool, etype Callback) SetResult {
	if !traceable(h) {
		return SetError
	}
	var bits uint32
	res := SetAlways
	switch etype {
	case 0:
		bits, res = recordable, SetSometimes // target_map and host events are never recorded
	case CallbackTarget, CallbackTargetEMI:
		bits = 1 << CallbackTarget
	case CallbackTargetDataOp, CallbackTargetDataOpEMI:
		bits = 1 << CallbackTargetDataOp
	case CallbackTargetSubmit, CallbackTargetSubmitEMI:
		bits = 1 << CallbackTargetSubmit
	default:
		if etype > 0 && etype < numCallbacks {
			return SetNever
		}
		return SetError
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

func nativeCaps(h *DeviceHandle) uint32 {
	if nd, ok := h.dev.(NativeDevice); ok {
		return nd.NativeFlags() & nativeAll
	}
	return 0
}

func setTraceNative(h *DeviceHandle, enable bool, flags uint32) SetResult {
	if !traceable(h) || flags == 0 || flags&^nativeAll != 0 {
		return SetError
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
		return SetNever
	case flags:
		return SetAlways
	}
	return SetSometimes
}

func startTrace(h *DeviceHandle, request BufferRequestFunc, complete BufferCompleteFunc) int {
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
	if cap(tr.fill) != ringCap {
		tr.fill, tr.spare = make([]pending, 0, ringCap), make([]pending, 0, ringCap)
	}
	tr.fill, tr.spare = tr.fill[:0], tr.spare[:0]
	tr.state = traceOn
	tr.flushReq, tr.flushDone, tr.sessionLost = 0, 0, 0
	tr.buf, tr.noBuf = nil, false
	tr.done = make(chan struct{})
	done := tr.done
	tr.mu.Unlock()
	go tr.run()
	go tr.tick(done)
	publishTrace()
	return 1
}

func pauseTrace(h *DeviceHandle, begin bool) int {
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

func flushTrace(h *DeviceHandle) int {
	if !traceable(h) {
		return 0
	}
	return h.tr.flush()
}

// flush waits until every record queued before the call is in a buffer
// handed to the tool. It cannot be done from the device's own buffer
// callbacks (the worker would wait for itself): that returns 0.
func (tr *tracer) flush() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if (tr.state != traceOn && tr.state != tracePaused) || tr.worker == getg() {
		return 0
	}
	tr.flushReq++
	seq := tr.flushReq
	done := tr.done
	tr.wakeLocked()
	for tr.flushDone < seq && tr.done == done && tr.state != traceOff {
		tr.idle.Wait()
	}
	return 1
}

func stopTrace(h *DeviceHandle) int {
	if h == nil || h.dev == nil || h.tr.h != h {
		return 0
	}
	return h.tr.stop()
}

// stop flushes and ends the session; when it returns, no callback of the
// session runs any more. From the device's own buffer callbacks it
// returns 0 and does nothing.
func (tr *tracer) stop() int {
	tr.mu.Lock()
	if tr.state == traceOff || tr.worker == getg() {
		tr.mu.Unlock()
		return 0
	}
	done := tr.done
	first := tr.state != traceStopping
	tr.state = traceStopping
	tr.wakeLocked()
	tr.mu.Unlock()
	publishTrace()
	<-done
	if !first {
		return 0 // another goroutine stopped it
	}
	return 1
}

func advanceBufferCursor(h *DeviceHandle, b []byte, size, cur uint64) (uint64, bool) {
	if dev, end, ok := lookupLive(b); ok {
		if h != nil && h.num != dev {
			return cur, false
		}
		size = min(size, end)
	}
	k, n := entryAt(b, size, cur)
	if k == RecordKindInvalid {
		return cur, false
	}
	next := cur + n
	if k2, _ := entryAt(b, size, next); k2 == RecordKindInvalid {
		return next, false
	}
	return next, true
}

func getRecordType(b []byte, cur uint64) RecordKind {
	k, _ := entryAt(b, limitFor(b), cur)
	return k
}

func getRecordOMPT(b []byte, cur uint64) *RecordOMPT {
	if k, _ := entryAt(b, limitFor(b), cur); k != RecordKindOMPT {
		return nil
	}
	return (*RecordOMPT)(unsafe.Pointer(&b[cur]))
}

func getRecordNative(b []byte, cur uint64) (unsafe.Pointer, uint64) {
	if k, _ := entryAt(b, limitFor(b), cur); k != RecordKindNative {
		return nil, 0
	}
	hdr := (*nativeHeader)(unsafe.Pointer(&b[cur]))
	return unsafe.Pointer(&b[cur+uint64(NativeHeaderSize)]), hdr.hostOpID
}

func getRecordAbstract(p unsafe.Pointer) *RecordAbstract {
	if p == nil || uintptr(p)&7 != 0 {
		return nil
	}
	if off, ok := liveOffset(p); ok && off < uint64(NativeHeaderSize) {
		return nil // no header before it in its buffer
	}
	hdr := (*nativeHeader)(unsafe.Add(p, -NativeHeaderSize))
	if hdr.marker != NativeMarker {
		return nil
	}
	return &RecordAbstract{
		Class: NativeClass(hdr.class), Type: nativeName(hdr.typeIdx),
		StartTime: hdr.start, EndTime: hdr.end, HWID: hdr.hwid,
	}
}

// The entry point values the device lookup returns.
var (
	setTraceOMPTEntry        = SetTraceOMPTFunc(setTraceOMPT)
	setTraceNativeEntry      = SetTraceNativeFunc(setTraceNative)
	startTraceEntry          = StartTraceFunc(startTrace)
	pauseTraceEntry          = PauseTraceFunc(pauseTrace)
	flushTraceEntry          = FlushTraceFunc(flushTrace)
	stopTraceEntry           = StopTraceFunc(stopTrace)
	advanceBufferCursorEntry = AdvanceBufferCursorFunc(advanceBufferCursor)
	getRecordTypeEntry       = GetRecordTypeFunc(getRecordType)
	getRecordOMPTEntry       = GetRecordOMPTFunc(getRecordOMPT)
	getRecordNativeEntry     = GetRecordNativeFunc(getRecordNative)
	getRecordAbstractEntry   = GetRecordAbstractFunc(getRecordAbstract)
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

// stopAllTracing ends every device's session (Finalize, tests).
func stopAllTracing() {
	devMu.Lock()
	hs := make([]*DeviceHandle, 0, len(devices))
	for _, h := range devices {
		hs = append(hs, h)
	}
	devMu.Unlock()
	for _, h := range hs {
		h.tr.stop()
	}
}

// TracedOp is one device operation (data operation or kernel) of a
// construct, captured by (*Target).Op for its trace record: its ids, its
// arguments and the host thread. The runtime keeps it until the
// operation's device times are known, then calls Record. The zero
// TracedOp records nothing.
type TracedOp struct {
	event              Callback // CallbackTargetDataOp or CallbackTargetSubmit; 0: nothing
	dev                int
	targetID, hostOpID uint64
	thread             uint64
	op                 DataOpKind
	src, dst           uintptr
	srcDev, dstDev     int
	bytes              uint64
	code               uintptr
	teams              uint32
	t                  *Target // the construct that stages the record, if any
	gen                uint32  // t.gen when captured
}

// HostOpID returns the operation's host_op_id (0 for the zero TracedOp).
func (o *TracedOp) HostOpID() uint64 { return o.hostOpID }

// Valid reports whether Record would record anything (the operation's
// device was tracing when it was captured).
func (o *TracedOp) Valid() bool { return o.event != 0 }

// Record queues the operation's trace record(s) on its device: an OMPT
// record (target_data_op or target_submit/kernel) if the tool enabled the
// type, and a native record if native is non-nil and the tool enabled
// native.Flag. begin and end are device times (Device.Now's clock, ns)
// of the operation's start and completion; grantedTeams is the number of
// teams launched (kernels; ignored for data operations). A begin <= 0 is
// replaced by end, an end < begin by begin, and both, if still <= 0, by
// the device clock read now, so records always carry non-zero times with
// end >= begin. native is read during the call only (its Data may live
// on the caller's stack). Called by the goroutine that owns the
// construct, before the construct's End, in the order the operations were
// issued. Never blocks on the tool: the record is queued (or dropped and
// counted when the queue is full) and delivered by the device's tracing
// goroutine. No allocation.
func (o *TracedOp) Record(begin, end int64, grantedTeams uint32, native *NativeInfo) {
	if o.event == 0 {
		return
	}
	tr := tracerOf(o.dev)
	if tr == nil {
		return
	}
	if begin <= 0 {
		begin = end
	}
	if end < begin {
		end = begin
	}
	if begin <= 0 {
		now, err := tr.h.dev.Now()
		if err != nil || now <= 0 {
			now = 1
		}
		begin, end = now, now
	}
	rec := tr.types.Load()&(1<<o.event) != 0
	if native != nil && native.Flag&tr.native.Load() == 0 {
		native = nil
	}
	if !rec && native == nil {
		return
	}
	if t := o.t; t != nil && t.gen == o.gen {
		// staged in the construct, queued with its other records at End
		if t.nstaged == len(t.stage) {
			t.flushStage()
		}
		fillOp(&t.stage[t.nstaged], o, uint64(begin), uint64(end), grantedTeams, rec, native)
		t.nstaged++
		return
	}
	var p [1]pending
	fillOp(&p[0], o, uint64(begin), uint64(end), grantedTeams, rec, native)
	tr.push(p[:])
}

// Op captures the operation that the last DataOpEnd or SubmitEnd ended,
// with the OS thread id of the goroutine that captures the scope's first
// record (gettid is a system call, so it is read once per scope),
// for its trace record, if its device is tracing (one atomic load);
// otherwise, or on a nil *Target, it returns the zero TracedOp. The
// operation's device is the construct's; for a device memory routine it
// is the destination device, or the source device when the destination
// is the host. Call it after DataOpEnd/SubmitEnd and before the next
// DataOpBegin/SubmitBegin/End of the same scope.
func (t *Target) Op() TracedOp {
	if t == nil || t.lastOp == opNone {
		return TracedOp{}
	}
	dev := t.dev
	if t.routine {
		dev = t.dstDev
		if dev < 0 {
			dev = t.srcDev
		}
	}
	if !Tracing(dev) {
		return TracedOp{}
	}
	if t.tid == 0 {
		t.tid = threadID() // once per scope: gettid is a system call
	}
	o := TracedOp{dev: dev, targetID: t.id, hostOpID: t.lastID, thread: t.tid, code: t.code}
	if !t.routine {
		o.t, o.gen = t, t.gen
	}
	if t.lastOp == opSubmit {
		o.event = CallbackTargetSubmit
		o.teams = uint32(t.bytes)
		return o
	}
	o.event = CallbackTargetDataOp
	o.op, o.src, o.srcDev, o.dst, o.dstDev, o.bytes = t.op, t.src, t.srcDev, t.dst, t.dstDev, t.bytes
	return o
}

// Tracing reports whether the construct's device is tracing (false for a
// nil *Target and for a device memory routine, whose device the runtime
// checks with the package function Tracing). One atomic load.
func (t *Target) Tracing() bool { return t != nil && !t.routine && Tracing(t.dev) }

// stageCap is how many records a construct stages before it queues them
// (its begin record, its operations, its end record): an empty target
// region makes 3, a region with one mapped array 7.
const stageCap = 8

// A construct's records are staged in the construct and queued together
// (one critical section on the device's ring instead of one per record)
// when it ends, or earlier when the stage fills. Records of one construct
// stay in order; records of constructs running at the same time on one
// device are queued in the order the constructs end.

// traceBegin stages the construct's begin target record, if its device
// traces target records; called by targetBegin after the fast check.
func (t *Target) traceBegin(tr *tracer) {
	if tr.types.Load()&(1<<CallbackTarget) == 0 {
		return
	}
	now, err := tr.h.dev.Now()
	if err != nil || now <= 0 {
		return
	}
	if t.tid == 0 {
		t.tid = threadID()
	}
	t.traceT0 = now
	fillTarget(&t.stage[0], t, ScopeBegin, now)
	t.nstaged = 1
}

// traceEnd stages the end target record of a construct whose begin was
// recorded and queues the construct's staged records.
func (t *Target) traceEnd() {
	t0 := t.traceT0
	t.traceT0 = 0
	tr := tracerOf(t.dev)
	if tr == nil {
		t.nstaged = 0
		return
	}
	if t0 != 0 && tr.types.Load()&(1<<CallbackTarget) != 0 {
		now, err := tr.h.dev.Now()
		if err != nil || now < t0 {
			now = t0
		}
		if t.nstaged == len(t.stage) {
			t.flushStage()
		}
		fillTarget(&t.stage[t.nstaged], t, ScopeEnd, now)
		t.nstaged++
	}
	t.flushStage()
}

// flushStage queues the construct's staged records on its device (if it
// still traces; otherwise they are dropped, as records made while tracing
// is paused or stopped are).
func (t *Target) flushStage() {
	n := t.nstaged
	t.nstaged = 0
	if n == 0 {
		return
	}
	if tr := tracerOf(t.dev); tr != nil {
		tr.push(t.stage[:n])
	}
}
