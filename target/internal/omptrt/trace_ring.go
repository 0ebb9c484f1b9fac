package omptrt

import (
	"unsafe"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
)

// The ring holds entries packed into 8-byte words, which the tracing
// goroutine unpacks into the tool's buffer: a construct's three records
// and a native record take some 30 words instead of four 104-byte
// records, and the ring's cache lines, which move from the application's
// core to the tracing goroutine's and back, are what a record costs.
//
// Word 0 of an entry is its header: its kind (bits 0-7), its length in
// words (8-15), and three fields whose meaning is the kind's: a (16-23),
// b (24-31) and c (32-63). The other words are named below, per kind,
// each kind's encoder beside its decoder (which writes the entry in the
// tool's buffer format: ompt.RecordOMPT, or a omptlink.Header and the native
// bytes); TestRingCodecsRoundTrip sends every field through both.
const (
	entTarget = 1 + iota
	entDataOp
	entKernel
	entNative

	entMaxWords = dataOpWords + nativeWords + omptlink.NativeMax/8
)

func entHeader(kind, words int, a, b uint8, c uint32) uint64 {
	return uint64(kind) | uint64(words)<<8 | uint64(a)<<16 | uint64(b)<<24 | uint64(c)<<32
}

func entKind(w0 uint64) int   { return int(uint8(w0)) }
func entWords(w0 uint64) int  { return int(uint8(w0 >> 8)) }
func entA(w0 uint64) uint8    { return uint8(w0 >> 16) }
func entB(w0 uint64) uint8    { return uint8(w0 >> 24) }
func entC(w0 uint64) uint32   { return uint32(w0 >> 32) }
func entCInt(w0 uint64) int32 { return int32(w0 >> 32) }

// countEntries counts the entries in w.
func countEntries(w []uint64) uint64 {
	n := uint64(0)
	for off := 0; off < len(w); off += entWords(w[off]) {
		n++
	}
	return n
}

// decOMPT writes entry e, of an OMPT record's kind, into r (all of it).
func decOMPT(e []uint64, r *ompt.RecordOMPT) {
	switch entKind(e[0]) {
	case entTarget:
		decTarget(e, r)
	case entDataOp:
		decDataOp(e, r)
	case entKernel:
		decKernel(e, r)
	}
}

// The target entry: one end of a construct, ompt_record_target_t.
// Header: a the endpoint, b the target kind, c the device number.
const (
	targetTime     = 1 // device time of this end
	targetThread   = 2 // OS thread id
	targetTargetID = 3
	targetCodePtr  = 4
	targetTaskID   = 5
	targetWords    = 6
)

// encTarget writes the target record (begin or end of construct t) at
// w[0:] and returns its length.
func encTarget(w []uint64, t *Target, endpoint ompt.Endpoint, now int64, id uint64) int {
	w = w[:targetWords]
	w[0] = entHeader(entTarget, targetWords, uint8(endpoint), uint8(t.kind), uint32(int32(t.dev)))
	w[targetTime] = uint64(now)
	w[targetThread] = t.tid
	w[targetTargetID] = id
	w[targetCodePtr] = uint64(t.code)
	w[targetTaskID] = t.taskID()
	return targetWords
}

func decTarget(e []uint64, r *ompt.RecordOMPT) {
	*r = ompt.RecordOMPT{Type: int32(ompt.CallbackTarget), Time: e[targetTime], ThreadID: e[targetThread], TargetID: e[targetTargetID]}
	b := (*ompt.RecordTarget)(unsafe.Add(unsafe.Pointer(r), ompt.RecordBodyOffset))
	b.Endpoint, b.Kind, b.DeviceNum = int32(entA(e[0])), int32(entB(e[0])), entCInt(e[0])
	b.TargetID, b.CodePtr, b.TaskID = e[targetTargetID], uintptr(e[targetCodePtr]), e[targetTaskID]
}

// The data operation entry, ompt_record_target_data_op_t. Header: a the
// operation (ompt.DataOpKind), c the source device number.
const (
	dataOpTime     = 1 // device time at the begin
	dataOpEndTime  = 2
	dataOpThread   = 3
	dataOpTargetID = 4
	dataOpHostOpID = 5
	dataOpSrcAddr  = 6
	dataOpDestAddr = 7
	dataOpDestDev  = 8 // the destination device number, as uint32
	dataOpBytes    = 9
	dataOpCodePtr  = 10
	dataOpWords    = 11
)

// The kernel entry, ompt_record_target_kernel_t. Header: none.
const (
	kernelTime     = 1 // device time at the begin
	kernelEndTime  = 2
	kernelThread   = 3
	kernelTargetID = 4
	kernelHostOpID = 5
	kernelTeams    = 6 // requested | granted<<32
	kernelWords    = 7
)

// The native entry: a native record's header fields and its bytes.
// Header: a the record's length in bytes, b the class
// (ompt.NativeClass), c the index of its type name (internNative).
const (
	nativeHostOpID = 1
	nativeStart    = 2
	nativeEnd      = 3
	nativeHWID     = 4
	nativeWords    = 5 // then the record's bytes, in whole words
)

// encOp writes the record(s) of one data operation or kernel at w[0:]:
// the OMPT record if rec, the native record if native is non-nil; it
// returns their length (at most entMaxWords).
func encOp(w []uint64, o *TracedOp, begin, end uint64, granted uint32, rec bool, native *NativeInfo) int {
	n := 0
	if rec {
		if o.event == ompt.CallbackTargetDataOp {
			e := w[:dataOpWords]
			e[0] = entHeader(entDataOp, dataOpWords, uint8(o.op), 0, uint32(int32(o.srcDev)))
			e[dataOpTime] = begin
			e[dataOpEndTime] = end
			e[dataOpThread] = o.thread
			e[dataOpTargetID] = o.targetID
			e[dataOpHostOpID] = o.hostOpID
			e[dataOpSrcAddr] = uint64(o.src)
			e[dataOpDestAddr] = uint64(o.dst)
			e[dataOpDestDev] = uint64(uint32(int32(o.dstDev)))
			e[dataOpBytes] = o.bytes
			e[dataOpCodePtr] = uint64(o.code)
			n = dataOpWords
		} else {
			e := w[:kernelWords]
			e[0] = entHeader(entKernel, kernelWords, 0, 0, 0)
			e[kernelTime] = begin
			e[kernelEndTime] = end
			e[kernelThread] = o.thread
			e[kernelTargetID] = o.targetID
			e[kernelHostOpID] = o.hostOpID
			e[kernelTeams] = uint64(o.teams) | uint64(granted)<<32
			n = kernelWords
		}
	}
	if native != nil {
		data := native.Data[:min(len(native.Data), omptlink.NativeMax)]
		dw := (len(data) + 7) / 8
		e := w[n : n+nativeWords+dw]
		e[0] = entHeader(entNative, nativeWords+dw, uint8(len(data)), uint8(native.Class), internNative(native.Type))
		e[nativeHostOpID] = o.hostOpID
		e[nativeStart] = native.Start
		e[nativeEnd] = native.End
		e[nativeHWID] = native.HWID
		if dw > 0 { // the last word's padding is never read: decNative takes len(data) bytes
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&e[nativeWords])), dw*8), data)
		}
		n += len(e)
	}
	return n
}

func decDataOp(e []uint64, r *ompt.RecordOMPT) {
	*r = ompt.RecordOMPT{Type: int32(ompt.CallbackTargetDataOp), Time: e[dataOpTime], ThreadID: e[dataOpThread], TargetID: e[dataOpTargetID]}
	b := (*ompt.RecordTargetDataOp)(unsafe.Add(unsafe.Pointer(r), ompt.RecordBodyOffset))
	b.HostOpID, b.OpType = e[dataOpHostOpID], int32(entA(e[0]))
	b.SrcAddr, b.SrcDeviceNum = uintptr(e[dataOpSrcAddr]), entCInt(e[0])
	b.DestAddr, b.DestDeviceNum = uintptr(e[dataOpDestAddr]), int32(e[dataOpDestDev])
	b.Bytes, b.EndTime, b.CodePtr = e[dataOpBytes], e[dataOpEndTime], uintptr(e[dataOpCodePtr])
}

func decKernel(e []uint64, r *ompt.RecordOMPT) {
	*r = ompt.RecordOMPT{Type: int32(ompt.CallbackTargetSubmit), Time: e[kernelTime], ThreadID: e[kernelThread], TargetID: e[kernelTargetID]}
	b := (*ompt.RecordTargetKernel)(unsafe.Add(unsafe.Pointer(r), ompt.RecordBodyOffset))
	b.HostOpID, b.EndTime = e[kernelHostOpID], e[kernelEndTime]
	b.RequestedNumTeams, b.GrantedNumTeams = uint32(e[kernelTeams]), uint32(e[kernelTeams]>>32)
}

// decNative fills the buffer header of native entry e and returns the
// record's bytes (aliasing e; nil for an empty record). h.Size covers the
// header and the record padded to whole words, at least one.
func decNative(e []uint64, h *omptlink.Header) []byte {
	n := int(entA(e[0]))
	*h = omptlink.Header{
		Marker: omptlink.Marker, HostOpID: e[nativeHostOpID], Class: int32(entB(e[0])), TypeIdx: entC(e[0]),
		Start: e[nativeStart], End: e[nativeEnd], HWID: e[nativeHWID],
		Size: uint32(omptlink.HeaderSize + (max(n, 1)+7)&^7),
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&e[nativeWords])), n)
}
