package omptrt

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
)

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
	defer dropWorker(tr.worker)
	var lastFull time.Time
	want := 0 // the rings' capacity from now on, when larger than theirs
	for {
		for !tr.batchReadyLocked() && tr.flushReq == tr.flushDone && tr.state != traceStopping {
			tr.waiting = true
			tr.work.Wait()
		}
		full := len(tr.fill) >= max(cap(tr.fill)/4, 1)
		tr.waiting, tr.kick = false, false
		batch := tr.fill
		tr.fill = tr.spare[:0]
		flush, flushed := tr.flushReq, tr.flushDone
		stopping := tr.state == traceStopping
		tr.mu.Unlock()
		if len(batch) > 0 {
			tr.batches++
		}
		if full {
			// Woken by the records themselves: if that came sooner than a
			// tick, the rings grow (each as it comes back to this
			// goroutine), so that a fast stream of records wakes it about
			// once a tick, not once per few hundred constructs.
			now := time.Now()
			if now.Sub(lastFull) < tickEvery {
				want = min(2*cap(batch), ringMax)
			}
			lastFull = now
		}

		if len(batch) > 0 {
			tr.h.resampleIfStale()
		}
		tr.noBuf = false
		ok := tr.deliverBatch(batch)
		tr.countPuts()
		if ok && (stopping || flush != flushed) {
			ok = tr.completePart(stopping)
		}

		if cap(batch) < want {
			batch = make([]uint64, 0, want)
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
// released. The ring is empty here (push takes no record once the
// session stops, and abortLocked empties it); start resets it anyway.
func (tr *tracer) endLocked() {
	lost := tr.lost.Load() - tr.lostAtStart
	untimed := tr.untimed.Load() - tr.untimedAtStart
	tr.state = traceOff
	tr.request, tr.complete = nil, nil
	tr.buf = nil
	tr.worker = 0
	done := tr.done
	tr.idle.Broadcast()
	tr.mu.Unlock()
	if lost > untimed {
		vlogf("Device %d: %d trace records lost (no buffer or too small a buffer from buffer_request, or the %d KiB record queue full: deliver faster, or give larger buffers).", tr.h.num, lost-untimed, ringMax*8/1024)
	}
	if untimed > 0 {
		vlogf("Device %d: %d trace records lost: the device could not tell the operation's times (its clock, event or timing failed).", tr.h.num, untimed)
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

// deliverBatch unpacks a batch's entries, in order, into the tool's
// buffers; false when a callback panicked (the entries from the one it
// panicked on are counted lost). An OMPT record where the buffer has
// room, nearly every record, is decoded here; deliver takes the rest.
func (tr *tracer) deliverBatch(batch []uint64) bool {
	const size = uint64(ompt.RecordOMPTSize)
	for off := 0; off < len(batch); {
		e := batch[off : off+entWords(batch[off])]
		switch entKind(e[0]) {
		case entTarget, entDataOp, entKernel:
			if tr.buf != nil && uint64(len(tr.buf))-tr.end >= size {
				decOMPT(e, (*ompt.RecordOMPT)(unsafe.Pointer(&tr.buf[tr.end])))
				tr.end += size
				tr.puts++
				off += len(e)
				continue
			}
		}
		if !tr.deliver(e) {
			tr.lost.Add(countEntries(batch[off:]))
			return false
		}
		off += len(e)
	}
	return true
}

// deliver unpacks one entry of the ring into the tool's buffer; false
// when a callback panicked. An OMPT record is decoded in the buffer
// itself: records lie at multiples of 8 bytes there (omptlink.FirstOffset,
// and every record is whole words), as a RecordOMPT needs.
func (tr *tracer) deliver(e []uint64) bool {
	switch entKind(e[0]) {
	case entNative:
		var h omptlink.Header
		data := decNative(e, &h)
		return tr.put(unsafe.Pointer(&h), uint64(omptlink.HeaderSize), data, uint64(h.Size))
	case entTarget, entDataOp, entKernel:
		dst, ok := tr.room(uint64(ompt.RecordOMPTSize))
		if dst != nil {
			decOMPT(e, (*ompt.RecordOMPT)(unsafe.Pointer(&dst[0])))
		}
		return ok
	}
	return true
}

// put writes one entry of size n (or total, if larger: a native header of
// n bytes followed by data, zero-padded) at the end of the current
// buffer (room). False when a callback panicked.
func (tr *tracer) put(src unsafe.Pointer, n uint64, data []byte, total uint64) bool {
	dst, ok := tr.room(max(total, n))
	if dst != nil {
		k := copy(dst, unsafe.Slice((*byte)(src), n))
		k += copy(dst[k:], data)
		clear(dst[k:])
	}
	return ok
}

// room takes the next total bytes of the current buffer for one record,
// which the caller writes whole, completing the buffer and requesting a
// new one when it is full. A record that finds no buffer is lost (nil
// and true); nil and false when a callback panicked.
func (tr *tracer) room(total uint64) ([]byte, bool) {
	if tr.buf == nil || uint64(len(tr.buf))-tr.end < total {
		if tr.buf != nil && !tr.completePart(true) {
			return nil, false
		}
		if !tr.noBuf && !tr.requestBuf(total) {
			return nil, false
		}
		if tr.buf == nil {
			tr.noBuf = true
			tr.lost.Add(1)
			return nil, true
		}
	}
	dst := tr.buf[tr.end : tr.end+total]
	tr.end += total
	tr.puts++
	return dst, true
}

// countPuts adds the records put since the last call to written: at the
// end of each batch and before each buffer goes to the tool.
func (tr *tracer) countPuts() {
	if tr.puts > 0 {
		tr.written.Add(tr.puts)
		tr.puts = 0
	}
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
	off := omptlink.FirstOffset(b)
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
	tr.countPuts()
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
