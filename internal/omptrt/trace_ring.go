package omptrt

import (
	"unsafe"

	"github.com/gompt/gompt/ompt"
)

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
	w[1], w[2], w[3], w[4], w[5] = uint64(now), t.tid, id, uint64(t.code), t.taskID()
	return entTargetWords
}

// encOp writes the record(s) of one data operation or kernel at w[0:]:
// the OMPT record if rec, the native record if native is non-nil; it
// returns their length (at most entMaxWords).
func encOp(w []uint64, o *TracedOp, begin, end uint64, granted uint32, rec bool, native *NativeInfo) int {
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
		if dw > 0 { // the last word's padding is never read: deliver takes len(data) bytes
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&e[entNativeWords])), dw*8), data)
		}
		n += len(e)
	}
	return n
}
