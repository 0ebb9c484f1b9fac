package omptrt

import (
	"github.com/gompt/gompt/internal/omptrt/link"
	"github.com/gompt/gompt/ompt"

	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// NativeDevice is implemented by a Device whose plugin attaches native
// records to its operations; NativeFlags returns the Native* monitoring
// flags it can honour. A Device without it honours none, and
// ompt_set_trace_native answers ompt_set_never for every flag.
type NativeDevice interface {
	NativeFlags() uint32
}

// ringCap is the size of a device's ring at first, in 8-byte words (an
// entry takes 5 to 13: about 2048 operations). When the application makes
// records faster than the tracing goroutine delivers them for a while (a
// GC cycle, a slow buffer callback, the goroutine not scheduled), the
// ring doubles, up to ringMax words (4 MiB, some 65536 operations); more
// records are dropped and counted as lost. Vars for tests.
var ringCap, ringMax = 2048 * 8, 65536 * 8

type traceState int32

const (
	traceOff traceState = iota
	traceOn
	tracePaused
	traceStopping
)

// recordable is the set of record types gompt writes, one bit per event
// number.
const recordable = 1<<ompt.CallbackTarget | 1<<ompt.CallbackTargetDataOp | 1<<ompt.CallbackTargetSubmit

// tracer is one device's tracing: what the tool enabled, the session's
// callbacks, the ring of records waiting for delivery, and the worker
// goroutine that delivers them.
type tracer struct {
	h      *device
	types  atomic.Uint32 // enabled record types (bits 8, 9, 10); written under mu
	native atomic.Uint32 // enabled native flags; written under mu

	mu        sync.Mutex
	work      sync.Cond // worker: records, a flush or a stop
	idle      sync.Cond // flushers: flushDone moved, or the session ended
	state     traceState
	request   ompt.BufferRequestFunc
	complete  ompt.BufferCompleteFunc
	owner     atomic.Pointer[tool] // the tool that started the session (nil: unknown); its ids go into the records
	fill      []uint64             // producers append entries (see encTarget); bounded by cap
	spare     []uint64
	waiting   bool // worker is in work.Wait
	kick      bool // a tick came: deliver whatever is queued
	flushReq  uint64
	flushDone uint64
	worker    uintptr // getg of the worker
	waitFor   *tracer // the tracer whose flush or stop this worker's callback waits for; under waitMu
	done      chan struct{}
	calling   atomic.Int32 // the buffer callback the worker is in (callingRequest...), for stop's report

	written, lost atomic.Uint64 // since DeviceInitialize
	lostAtStart   uint64        // lost when the session started; under mu

	// worker-owned: the buffer being filled
	buf       []byte
	live      *liveBuf // buf's registration
	part, end uint64   // the current part is buf[part:end]
	noBuf     bool     // a request failed during this batch
}

// The ring holds entries packed into 8-byte words, which the tracing
// goroutine unpacks into the tool's buffer: a construct's three records
// and a native record take some 30 words instead of four 104-byte
// records, and the ring's cache lines, which move from the application's
// core to the tracing goroutine's and back, are what a record costs.
// Word 0 of an entry is its kind (bits 0-7), its length in words (8-15),
// two small fields (16-23, 24-31) and a 32-bit field (32-63).
const (
	entTarget = 1 + iota // endpoint, target kind, device; time, thread, target_id, codeptr, task_id
	entDataOp            // op, -, src device; time, end, thread, target_id, host_op_id, src, dst, dst device, bytes, codeptr
	entKernel            // -, -, -; time, end, thread, target_id, host_op_id, requested | granted<<32
	entNative            // data length, class, type index; host_op_id, start, end, hwid, data words

	entTargetWords = 6
	entDataOpWords = 11
	entKernelWords = 7
	entNativeWords = 5 // plus the data
	entMaxWords    = entDataOpWords + entNativeWords + ompt.NativeMax/8
)

func entHeader(kind, words int, a, b uint8, c uint32) uint64 {
	return uint64(kind) | uint64(words)<<8 | uint64(a)<<16 | uint64(b)<<24 | uint64(c)<<32
}

func entKind(w0 uint64) int  { return int(uint8(w0)) }
func entWords(w0 uint64) int { return int(uint8(w0 >> 8)) }

// countEntries counts the entries in w.
func countEntries(w []uint64) uint64 {
	n := uint64(0)
	for off := 0; off < len(w); off += entWords(w[off]) {
		n++
	}
	return n
}

// encTarget writes the target record (begin or end of construct t) at
// w[0:] and returns its length.
func encTarget(w []uint64, t *Target, endpoint ompt.Endpoint, now int64, id uint64) int {
	w = w[:entTargetWords]
	w[0] = entHeader(entTarget, entTargetWords, uint8(endpoint), uint8(t.kind), uint32(int32(t.dev)))
	w[1], w[2], w[3], w[4], w[5] = uint64(now), t.tid, id, uint64(t.code), t.taskID
	return entTargetWords
}

// encOp writes the record(s) of one data operation or kernel at w[0:]:
// the OMPT record if rec, the native record if native is non-nil; it
// returns their length (at most entMaxWords).
func encOp(w []uint64, o *TracedOp, begin, end uint64, granted uint32, rec bool, native *ompt.NativeInfo) int {
	n := 0
	if rec {
		if o.event == ompt.CallbackTargetDataOp {
			e := w[:entDataOpWords]
			e[0] = entHeader(entDataOp, entDataOpWords, uint8(o.op), 0, uint32(int32(o.srcDev)))
			e[1], e[2], e[3], e[4], e[5] = begin, end, o.thread, o.targetID, o.hostOpID
			e[6], e[7], e[8], e[9], e[10] = uint64(o.src), uint64(o.dst), uint64(uint32(int32(o.dstDev))), o.bytes, uint64(o.code)
			n = entDataOpWords
		} else {
			e := w[:entKernelWords]
			e[0] = entHeader(entKernel, entKernelWords, 0, 0, 0)
			e[1], e[2], e[3], e[4], e[5] = begin, end, o.thread, o.targetID, o.hostOpID
			e[6] = uint64(o.teams) | uint64(granted)<<32
			n = entKernelWords
		}
	}
	if native != nil {
		data := native.Data[:min(len(native.Data), ompt.NativeMax)]
		dw := (len(data) + 7) / 8
		e := w[n : n+entNativeWords+dw]
		e[0] = entHeader(entNative, entNativeWords+dw, uint8(len(data)), uint8(native.Class), internNative(native.Type))
		e[1], e[2], e[3], e[4] = o.hostOpID, native.Start, native.End, native.HWID
		if dw > 0 {
			e[len(e)-1] = 0 // the last word's padding
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&e[entNativeWords])), dw*8), data)
		}
		n += len(e)
	}
	return n
}

func (tr *tracer) init(h *device) {
	tr.h = h
	tr.work.L = &tr.mu
	tr.idle.L = &tr.mu
}

// traceable reports whether h is a live device handle made by
// DeviceInitialize.
func traceable(h *device) bool {
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
	hs := deviceHandles()
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

// commitLocked wakes the worker if it sleeps and a batch of records is
// waiting; tr.mu must be held. Waking it for every record would cost the
// application a futex wake per operation, and a worker that took every
// record as it came would take tr.mu as often as the application does,
// moving its cache line between their cores each time; the ticker (tick)
// delivers smaller batches within tickEvery.
func (tr *tracer) commitLocked() {
	if tr.waiting && tr.batchReadyLocked() {
		tr.waiting = false
		tr.work.Signal()
	}
}

// batchReadyLocked reports whether a batch worth waking the worker for is
// queued: a quarter of the ring, or anything after a tick.
func (tr *tracer) batchReadyLocked() bool {
	return len(tr.fill) >= max(cap(tr.fill)/4, 1) || (tr.kick && len(tr.fill) > 0)
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
		if len(tr.fill) > 0 {
			tr.kick = true
			tr.wakeLocked()
		}
		tr.mu.Unlock()
	}
}

// push queues entries (made by encTarget and encOp), in order, in one
// critical section, unless the session does not accept records now (not
// started, paused, stopping). Entries the ring has no room for, even
// grown to ringMax, are lost.
func (tr *tracer) push(w []uint64) {
	tr.mu.Lock()
	if tr.state != traceOn {
		tr.mu.Unlock()
		return
	}
	n := len(tr.fill)
	if n+len(w) > cap(tr.fill) && cap(tr.fill) < ringMax {
		// The worker holds the other ring; it swaps this one in at its
		// next batch, so both grow to the largest size needed.
		grown := make([]uint64, n, min(max(2*cap(tr.fill), n+len(w)), ringMax))
		copy(grown, tr.fill)
		tr.fill = grown
	}
	if n+len(w) > cap(tr.fill) {
		k := 0 // whole entries that fit
		for k < len(w) && n+k+entWords(w[k]) <= cap(tr.fill) {
			k += entWords(w[k])
		}
		lost := countEntries(w[k:])
		tr.lost.Add(lost)
		w = w[:k]
	}
	tr.fill = append(tr.fill, w...)
	tr.commitLocked()
	tr.mu.Unlock()
}

// run is the worker goroutine of one tracing session: it takes the queued
// records in order, writes them into tool buffers, and calls the tool's
// buffer callbacks, never on the application's goroutines.
func (tr *tracer) run() {
	tr.mu.Lock()
	tr.worker = getg()
	setWorker(tr.worker, tr)
	defer setWorker(0, tr)
	for {
		for !tr.batchReadyLocked() && tr.flushReq == tr.flushDone && tr.state != traceStopping {
			tr.waiting = true
			tr.work.Wait()
		}
		tr.waiting, tr.kick = false, false
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
		for off := 0; off < len(batch); off += entWords(batch[off]) {
			if ok = tr.deliver(batch[off : off+entWords(batch[off])]); !ok {
				tr.lost.Add(countEntries(batch[off:]))
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
	lost := tr.lost.Load() - tr.lostAtStart
	tr.state = traceOff
	tr.request, tr.complete = nil, nil
	tr.buf = nil
	tr.worker = 0
	tr.fill = tr.fill[:0]
	done := tr.done
	tr.idle.Broadcast()
	tr.mu.Unlock()
	if lost > 0 {
		vlogf("Device %d: %d trace records lost (no buffer or too small a buffer from buffer_request, or the %d KiB record queue full: deliver faster, or give larger buffers).", tr.h.num, lost, ringMax*8/1024)
	}
	publishTrace()
	close(done)
}

// abortLocked ends the session after a tool buffer callback panicked:
// queued records are dropped (counted), no callback is called again.
func (tr *tracer) abortLocked() {
	lost := countEntries(tr.fill)
	tr.lost.Add(lost)
	tr.fill = tr.fill[:0]
	if tr.buf != nil {
		unregisterLive(tr.buf, tr.live)
	}
	tr.endLocked()
}

// deliver unpacks one entry of the ring into the tool's buffer; false
// when a callback panicked.
func (tr *tracer) deliver(e []uint64) bool {
	var r ompt.RecordOMPT
	switch entKind(e[0]) {
	case entTarget:
		r = ompt.RecordOMPT{Type: int32(ompt.CallbackTarget), Time: e[1], ThreadID: e[2], TargetID: e[3]}
		b := (*ompt.RecordTarget)(unsafe.Add(unsafe.Pointer(&r), ompt.RecordBodyOffset))
		b.Kind, b.Endpoint, b.DeviceNum = int32(uint8(e[0]>>24)), int32(uint8(e[0]>>16)), int32(e[0]>>32)
		b.TargetID, b.CodePtr, b.TaskID = e[3], uintptr(e[4]), e[5]
	case entDataOp:
		r = ompt.RecordOMPT{Type: int32(ompt.CallbackTargetDataOp), Time: e[1], ThreadID: e[3], TargetID: e[4]}
		b := (*ompt.RecordTargetDataOp)(unsafe.Add(unsafe.Pointer(&r), ompt.RecordBodyOffset))
		b.HostOpID, b.OpType = e[5], int32(uint8(e[0]>>16))
		b.SrcAddr, b.SrcDeviceNum = uintptr(e[6]), int32(e[0]>>32)
		b.DestAddr, b.DestDeviceNum = uintptr(e[7]), int32(e[8])
		b.Bytes, b.EndTime, b.CodePtr = e[9], e[2], uintptr(e[10])
	case entKernel:
		r = ompt.RecordOMPT{Type: int32(ompt.CallbackTargetSubmit), Time: e[1], ThreadID: e[3], TargetID: e[4]}
		b := (*ompt.RecordTargetKernel)(unsafe.Add(unsafe.Pointer(&r), ompt.RecordBodyOffset))
		b.HostOpID, b.RequestedNumTeams, b.GrantedNumTeams, b.EndTime = e[5], uint32(e[6]), uint32(e[6]>>32), e[2]
	case entNative:
		n := int(uint8(e[0] >> 16))
		h := link.Header{
			Marker: ompt.NativeMarker, HostOpID: e[1], Class: int32(uint8(e[0] >> 24)), TypeIdx: uint32(e[0] >> 32),
			Start: e[2], End: e[3], HWID: e[4],
			Size: uint32(ompt.NativeHeaderSize + (max(n, 1)+7)&^7),
		}
		var data []byte
		if n > 0 {
			data = unsafe.Slice((*byte)(unsafe.Pointer(&e[entNativeWords])), n)
		}
		return tr.put(unsafe.Pointer(&h), uint64(ompt.NativeHeaderSize), data, uint64(h.Size))
	default:
		return true
	}
	return tr.put(unsafe.Pointer(&r), uint64(ompt.RecordOMPTSize), nil, 0)
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

// The buffer callback a tracer's worker is in, for stop's report.
const (
	callingNone int32 = iota
	callingRequest
	callingComplete
)

// StopTimeout bounds how long ending a device's trace (ompt_stop_trace,
// and DeviceFinalize at the runtime's shutdown) waits for a buffer
// callback of the tool to return. Past it, the trace is abandoned with an
// error naming the device and the callback; records not delivered are
// lost, and the callback's goroutine is left where it is.
var StopTimeout = 10 * time.Second

// call runs one of the tool's buffer callbacks, recording which for stop.
func (tr *tracer) call(which int32, f func()) error {
	tr.calling.Store(which)
	err := catch(f)
	tr.calling.Store(callingNone)
	return err
}

// requestBuf asks the tool for a buffer that can hold at least need
// bytes. A buffer that is too small goes straight back to the tool
// (complete with bytes 0, owned). False when a callback panicked.
func (tr *tracer) requestBuf(need uint64) bool {
	var b []byte
	if err := tr.call(callingRequest, func() { b = tr.request(tr.h.num) }); err != nil {
		tr.toolPanic("buffer_request", err)
		return false
	}
	tr.buf = nil
	if len(b) == 0 {
		return true
	}
	off := link.FirstOffset(b)
	if uint64(len(b)) < off+need {
		if err := tr.call(callingComplete, func() { tr.complete(tr.h.num, b, 0, 0, true) }); err != nil {
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
	if !owned && uint64(len(b))-bytes < uint64(ompt.MaxEntrySize) {
		owned = true
	}
	if begin == bytes {
		if !owned {
			return true
		}
		begin, bytes = 0, 0
	}
	setLiveEnd(b, bytes)
	err := tr.call(callingComplete, func() { tr.complete(tr.h.num, b, bytes, begin, owned) })
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

func nativeCaps(h *device) uint32 {
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
func startTraceFor(owner *tool, h *device, request ompt.BufferRequestFunc, complete ompt.BufferCompleteFunc) int {
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
	tr.flushReq, tr.flushDone, tr.lostAtStart = 0, 0, tr.lost.Load()
	tr.buf, tr.noBuf = nil, false
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

func setWorker(g uintptr, tr *tracer) {
	waitMu.Lock()
	if g != 0 {
		workers[g] = tr
	} else {
		for k, v := range workers {
			if v == tr {
				delete(workers, k)
			}
		}
	}
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
	hdr := (*link.Header)(unsafe.Pointer(&b[cur]))
	return unsafe.Pointer(&b[cur+uint64(ompt.NativeHeaderSize)]), hdr.HostOpID
}

func getRecordAbstract(p unsafe.Pointer) *ompt.RecordAbstract {
	if p == nil || uintptr(p)&7 != 0 {
		return nil
	}
	if off, ok := liveOffset(p); ok && off < uint64(ompt.NativeHeaderSize) {
		return nil // no header before it in its buffer
	}
	hdr := (*link.Header)(unsafe.Add(p, -ompt.NativeHeaderSize))
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
func deviceHandles() []*device {
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

// TracedOp is one device operation (data operation or kernel) of a
// construct, captured by (*Target).Op for its trace record: its ids, its
// arguments and the host thread. The runtime keeps it until the
// operation's device times are known, then calls Record. The zero
// TracedOp records nothing.
type TracedOp struct {
	event              ompt.Callback // CallbackTargetDataOp or CallbackTargetSubmit; 0: nothing
	dev                int
	targetID, hostOpID uint64
	thread             uint64
	op                 ompt.DataOpKind
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

// WantsNative reports whether Record would keep a native record with
// monitoring flag flag (the tool enabled it on the operation's device),
// so the runtime can skip making one. One atomic load.
func (o *TracedOp) WantsNative(flag uint32) bool {
	if o.event == 0 {
		return false
	}
	tr := tracerOf(o.dev)
	return tr != nil && tr.native.Load()&flag != 0
}

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
func (o *TracedOp) Record(begin, end int64, grantedTeams uint32, native *ompt.NativeInfo) {
	if o.event == 0 {
		return
	}
	tr := tracerOf(o.dev)
	if tr == nil {
		return
	}
	rec := tr.types.Load()&(1<<o.event) != 0
	if native != nil && native.Flag&tr.native.Load() == 0 {
		native = nil
	}
	if !rec && native == nil {
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
	if t := o.t; t != nil && t.gen == o.gen {
		// staged in the construct, queued with its other records at End
		if t.nstaged+entMaxWords > len(t.stage) {
			t.flushStage()
		}
		t.nstaged += encOp(t.stage[t.nstaged:], o, uint64(begin), uint64(end), grantedTeams, rec, native)
		return
	}
	var w [entMaxWords]uint64
	tr.push(w[:encOp(w[:], o, uint64(begin), uint64(end), grantedTeams, rec, native)])
}

// Op captures the operation that the last DataOpEnd or SubmitEnd ended,
// with the OS thread id of the thread that ran its callbacks (the
// construct's goroutine holds its thread from its first event to its end,
// so the id is read once per scope and thread: where the runtime's
// m.procid cannot be used it is the gettid system call),
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
	tr := tracerOf(dev)
	if tr == nil {
		return TracedOp{}
	}
	if t.tid == 0 {
		t.tid = threadID() // once per scope: it may be the gettid system call
	}
	o := TracedOp{dev: dev, thread: t.tid, code: t.code}
	o.targetID, o.hostOpID = t.idsFor(tr.owner.Load(), t.lastID)
	if !t.routine {
		o.t, o.gen = t, t.gen
	}
	if t.lastOp == opSubmit {
		o.event = ompt.CallbackTargetSubmit
		o.teams = uint32(t.bytes)
		return o
	}
	o.event = ompt.CallbackTargetDataOp
	o.op, o.src, o.srcDev, o.dst, o.dstDev, o.bytes = t.op, t.src, t.srcDev, t.dst, t.dstDev, t.bytes
	return o
}

// Tracing reports whether the construct's device is tracing (false for a
// nil *Target and for a device memory routine, whose device the runtime
// checks with the package function Tracing). One atomic load.
func (t *Target) Tracing() bool { return t != nil && !t.routine && Tracing(t.dev) }

// stageWords is how many words of entries a construct stages before it
// queues them (its begin record, its operations, its end record): an
// empty target region makes about 25 with native records, a region with
// one mapped array about 90.
const stageWords = 128

// A construct's records are staged in the construct and queued together
// (one critical section on the device's ring instead of one per record)
// when it ends, or earlier when the stage fills. Records of one construct
// stay in order; records of constructs running at the same time on one
// device are queued in the order the constructs end.

// traceBegin stages the construct's begin target record, if its device
// traces target records; called by targetBegin after the fast check.
func (t *Target) traceBegin(tr *tracer) {
	if tr.types.Load()&(1<<ompt.CallbackTarget) == 0 {
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
	id, _ := t.idsFor(tr.owner.Load(), 0)
	t.nstaged = encTarget(t.stage[:], t, ompt.ScopeBegin, now, id)
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
	if t0 != 0 && tr.types.Load()&(1<<ompt.CallbackTarget) != 0 {
		now, err := tr.h.dev.Now()
		if err != nil || now < t0 {
			now = t0
		}
		if t.nstaged+entTargetWords > len(t.stage) {
			t.flushStage()
		}
		id, _ := t.idsFor(tr.owner.Load(), 0)
		t.nstaged += encTarget(t.stage[t.nstaged:], t, ompt.ScopeEnd, now, id)
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

// entryAt classifies the entry at cursor in b[:limit] (link.EntryAt).
func entryAt(b []byte, limit, cursor uint64) (ompt.RecordKind, uint64) {
	k, n := link.EntryAt(b, limit, cursor)
	return ompt.RecordKind(k), n
}
