//go:build cgo

package cabi

/*
#include <stdlib.h>
#include "cabi.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gompt/gompt/ompt"
)

// Device tracing for C tools. ompt's tracing core writes records into
// []byte buffers; for a C tool each is a Go view (unsafe.Slice) of the C
// memory its buffer_request returned, so the records the core lays out as
// ompt_record_ompt_t are read by the tool in place, and buffer_complete
// hands the same C pointer back.
//
// The getters of omp-tools.h that receive only a pointer
// (get_record_type, get_record_ompt, get_record_native,
// get_record_abstract) need the buffer's length to check bounds: cabi
// remembers every buffer from the buffer_request that returned it until
// the buffer_complete with buffer_owned = 1 that hands it back has
// returned. A pointer that is not the start of such a buffer is answered
// with ompt_record_invalid or NULL, never dereferenced. advance_cursor
// reads at most min(size, the buffer's length).

// maxBufferBytes bounds the length of a C buffer as Go sees it (a larger
// *bytes from buffer_request is taken as this many).
const maxBufferBytes = 1 << 40

// cbuf is one C trace buffer the runtime holds.
type cbuf struct {
	p   unsafe.Pointer // the tool's memory
	n   uint64         // its length (buffer_request's *bytes)
	abs map[unsafe.Pointer]*C.ompt_record_abstract_t
}

var (
	bufMu sync.Mutex
	bufs  = map[unsafe.Pointer]*cbuf{}
)

func registerBuf(p unsafe.Pointer, n uint64) {
	bufMu.Lock()
	bufs[p] = &cbuf{p: p, n: n} // replaces one of the same address that is being handed back
	bufMu.Unlock()
}

// bufAt returns the registered buffer that starts at p, or nil.
func bufAt(p unsafe.Pointer) *cbuf {
	if p == nil {
		return nil
	}
	bufMu.Lock()
	defer bufMu.Unlock()
	return bufs[p]
}

// dropBuf forgets b (if still registered as itself: once the tool has
// freed it, another device's buffer may already have its address) and
// frees the abstract records handed out for it.
func dropBuf(b *cbuf) {
	bufMu.Lock()
	if bufs[b.p] == b {
		delete(bufs, b.p)
	}
	abs := b.abs
	b.abs = nil
	bufMu.Unlock()
	for _, a := range abs {
		C.free(unsafe.Pointer(a))
	}
}

// view returns the Go view of a registered buffer.
func (b *cbuf) view() []byte { return unsafe.Slice((*byte)(b.p), b.n) }

// getters are the tracing entry points that take no device; the same for
// every device, bound from the first device lookup that resolves them.
type getters struct {
	advance  ompt.AdvanceBufferCursorFunc
	typ      ompt.GetRecordTypeFunc
	rec      ompt.GetRecordOMPTFunc
	native   ompt.GetRecordNativeFunc
	abstract ompt.GetRecordAbstractFunc
}

var theGetters atomic.Pointer[getters]

func bindGetters(lookup ompt.LookupFunc) {
	if theGetters.Load() != nil {
		return
	}
	g := &getters{}
	g.advance, _ = lookup("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	g.typ, _ = lookup("ompt_get_record_type").(ompt.GetRecordTypeFunc)
	g.rec, _ = lookup("ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)
	g.native, _ = lookup("ompt_get_record_native").(ompt.GetRecordNativeFunc)
	g.abstract, _ = lookup("ompt_get_record_abstract").(ompt.GetRecordAbstractFunc)
	if g.advance != nil || g.typ != nil || g.rec != nil || g.native != nil || g.abstract != nil {
		theGetters.CompareAndSwap(nil, g)
	}
}

// traceDevice returns the device at p for a tracing entry point: ok is
// false for a pointer gompt did not hand out; NULL gives a nil handle
// (which ompt's entry points refuse, except advance_buffer_cursor).
func traceDevice(p C.uintptr_t) (d *cdevice, ok bool) {
	if p == 0 {
		return nil, true
	}
	d = deviceAt(p)
	return d, d != nil
}

//export gomptSetTraceOMPT
func gomptSetTraceOMPT(p C.uintptr_t, enable, etype C.uint) C.int {
	d := deviceAt(p)
	if d == nil || d.setTraceOMPT == nil {
		return C.int(ompt.SetError)
	}
	return C.int(d.setTraceOMPT(d.h, enable != 0, ompt.Callback(etype)))
}

//export gomptSetTraceNative
func gomptSetTraceNative(p C.uintptr_t, enable, flags C.int) C.int {
	d := deviceAt(p)
	if d == nil || d.setTraceNative == nil {
		return C.int(ompt.SetError)
	}
	return C.int(d.setTraceNative(d.h, enable != 0, uint32(flags)))
}

// gomptStartTrace starts a session whose Go buffer callbacks call the
// tool's C ones (requestBuffer, completeBuffer).
//
//export gomptStartTrace
func gomptStartTrace(p, request, complete C.uintptr_t) C.int {
	d := deviceAt(p)
	if d == nil || d.startTrace == nil || request == 0 || complete == 0 {
		return 0
	}
	req := func(dev int) []byte { return requestBuffer(request, dev) }
	done := func(dev int, b []byte, bytes, begin uint64, owned bool) {
		completeBuffer(complete, dev, b, bytes, begin, owned)
	}
	return C.int(d.startTrace(d.h, req, done))
}

// requestBuffer calls the C buffer_request and registers what it gives.
func requestBuffer(fn C.uintptr_t, dev int) []byte {
	var n C.size_t
	p := C.gompt_cabi_call_buffer_request(fn, C.int(dev), &n)
	if p == nil || n == 0 {
		return nil
	}
	size := min(uint64(n), maxBufferBytes)
	registerBuf(p, size)
	return unsafe.Slice((*byte)(p), size)
}

// completeBuffer calls the C buffer_complete with the C pointer behind b
// and, when the buffer goes back to the tool, forgets it after the call.
func completeBuffer(fn C.uintptr_t, dev int, b []byte, bytes, begin uint64, owned bool) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(unsafe.SliceData(b))
	}
	cb := bufAt(p) // before the call: once freed, the address may be reused
	o := C.int(0)
	if owned {
		o = 1
	}
	C.gompt_cabi_call_buffer_complete(fn, C.int(dev), p, C.size_t(bytes), C.ompt_buffer_cursor_t(begin), o)
	if owned && cb != nil {
		dropBuf(cb)
	}
}

//export gomptPauseTrace
func gomptPauseTrace(p C.uintptr_t, begin C.int) C.int {
	d := deviceAt(p)
	if d == nil || d.pauseTrace == nil {
		return 0
	}
	return C.int(d.pauseTrace(d.h, begin != 0))
}

//export gomptFlushTrace
func gomptFlushTrace(p C.uintptr_t) C.int {
	d := deviceAt(p)
	if d == nil || d.flushTrace == nil {
		return 0
	}
	return C.int(d.flushTrace(d.h))
}

//export gomptStopTrace
func gomptStopTrace(p C.uintptr_t) C.int {
	d := deviceAt(p)
	if d == nil || d.stopTrace == nil {
		return 0
	}
	return C.int(d.stopTrace(d.h))
}

//export gomptAdvanceBufferCursor
func gomptAdvanceBufferCursor(p C.uintptr_t, buf unsafe.Pointer, size C.size_t, cur C.ompt_buffer_cursor_t) (C.int, C.ompt_buffer_cursor_t) {
	g := theGetters.Load()
	d, ok := traceDevice(p)
	b := bufAt(buf)
	if g == nil || g.advance == nil || !ok || b == nil {
		return 0, 0
	}
	var h *ompt.DeviceHandle
	if d != nil {
		h = d.h
	}
	next, adv := g.advance(h, b.view(), min(uint64(size), b.n), uint64(cur))
	if !adv {
		return 0, 0
	}
	return 1, C.ompt_buffer_cursor_t(next)
}

//export gomptGetRecordType
func gomptGetRecordType(buf unsafe.Pointer, cur C.ompt_buffer_cursor_t) C.int {
	g := theGetters.Load()
	b := bufAt(buf)
	if g == nil || g.typ == nil || b == nil {
		return C.int(ompt.RecordKindInvalid)
	}
	return C.int(g.typ(b.view(), uint64(cur)))
}

//export gomptGetRecordOMPT
func gomptGetRecordOMPT(buf unsafe.Pointer, cur C.ompt_buffer_cursor_t) *C.ompt_record_ompt_t {
	g := theGetters.Load()
	b := bufAt(buf)
	if g == nil || g.rec == nil || b == nil {
		return nil
	}
	// A pointer into the C buffer: the record is laid out as
	// ompt_record_ompt_t already (TestABI checks RecordOMPT against it).
	return (*C.ompt_record_ompt_t)(unsafe.Pointer(g.rec(b.view(), uint64(cur))))
}

//export gomptGetRecordNative
func gomptGetRecordNative(buf unsafe.Pointer, cur C.ompt_buffer_cursor_t) (unsafe.Pointer, C.ompt_id_t) {
	g := theGetters.Load()
	b := bufAt(buf)
	if g == nil || g.native == nil || b == nil {
		return nil, 0
	}
	p, hop := g.native(b.view(), uint64(cur))
	return p, C.ompt_id_t(hop)
}

// gomptGetRecordAbstract answers get_record_abstract for a native record
// pointer inside a registered buffer (after room for its header) with a
// C copy of the abstract record: one per record, made on first call,
// the same pointer on later calls, freed when the buffer goes back to the
// tool (the owned buffer_complete has returned). Its type string is a
// static C string (one per type name, never freed).
//
//export gomptGetRecordAbstract
func gomptGetRecordAbstract(p unsafe.Pointer) *C.ompt_record_abstract_t {
	g := theGetters.Load()
	if g == nil || g.abstract == nil || p == nil {
		return nil
	}
	bufMu.Lock()
	defer bufMu.Unlock()
	var b *cbuf
	for _, c := range bufs {
		off := uintptr(p) - uintptr(c.p)
		if uintptr(p) >= uintptr(c.p) && off >= uintptr(ompt.NativeHeaderSize) && uint64(off) < c.n {
			b = c
			break
		}
	}
	if b == nil {
		return nil // not in a buffer the runtime holds: never dereferenced
	}
	if a := b.abs[p]; a != nil {
		return a
	}
	ga := g.abstract(p)
	if ga == nil {
		return nil
	}
	a := (*C.ompt_record_abstract_t)(C.calloc(1, C.sizeof_ompt_record_abstract_t))
	if a == nil {
		return nil
	}
	a.rclass = C.ompt_record_native_t(ga.Class)
	a._type = cstring(ga.Type)
	a.start_time = C.ompt_device_time_t(ga.StartTime)
	a.end_time = C.ompt_device_time_t(ga.EndTime)
	a.hwid = C.ompt_hwid_t(ga.HWID)
	if b.abs == nil {
		b.abs = map[unsafe.Pointer]*C.ompt_record_abstract_t{}
	}
	b.abs[p] = a
	return a
}
