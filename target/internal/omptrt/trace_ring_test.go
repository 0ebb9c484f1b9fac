package omptrt

import (
	"testing"
	"unsafe"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRingCodecsRoundTrip sends every field of every ring entry through
// its encoder and decode, with values that fill their fields (negative
// device numbers, 64-bit addresses and ids, both halves of the teams
// word), and checks that the tool's buffer format carries each one back.
func TestRingCodecsRoundTrip(t *testing.T) {
	var w [entMaxWords]uint64
	var r ompt.RecordOMPT
	var h omptlink.Header

	tg := &Target{kind: ompt.KindTargetUpdate, dev: -1, tid: 0x1111_2222_3333_4444, code: 0x7fff_0000_1234, th: &threadRec{taskID: 0x5555_6666_7777_8888}}
	n := encTarget(w[:], tg, ompt.ScopeEnd, 0x0123_4567_89ab_cdef, 0x9999_aaaa_bbbb_cccc)
	require.Equal(t, targetWords, n, "target entry words")
	require.Equal(t, n, entWords(w[0]), "target entry: header length")
	_, ok, native := decode(w[:n], &r, &h)
	require.True(t, ok && !native, "target entry decodes as an OMPT record")
	assert.Equal(t, int32(ompt.CallbackTarget), r.Type, "target: event")
	assert.Equal(t, uint64(0x0123_4567_89ab_cdef), r.Time, "target: time")
	assert.Equal(t, uint64(0x1111_2222_3333_4444), r.ThreadID, "target: thread")
	assert.Equal(t, uint64(0x9999_aaaa_bbbb_cccc), r.TargetID, "target: target_id")
	if b := r.Target(); assert.NotNil(t, b, "target body") {
		assert.Equal(t, ompt.RecordTarget{Kind: int32(ompt.KindTargetUpdate), Endpoint: int32(ompt.ScopeEnd), DeviceNum: -1,
			TaskID: 0x5555_6666_7777_8888, TargetID: 0x9999_aaaa_bbbb_cccc, CodePtr: 0x7fff_0000_1234}, *b, "target body")
	}

	op := &TracedOp{event: ompt.CallbackTargetDataOp, thread: 0x0a0b_0c0d_0e0f_1011, targetID: 0x1213_1415_1617_1819, hostOpID: 0x2021_2223_2425_2627,
		op: ompt.DataOpTransferFromDevice, src: 0x7e00_0000_1000, dst: 0xc000_1234_5678, srcDev: 3, dstDev: -1, bytes: 1<<40 + 3, code: 0x4000_1000}
	nat := NativeInfo{Class: ompt.NativeRecordEvent, Type: "ring test native", HWID: 0xfeed_beef_0000_0001,
		Start: 0x3031_3233_3435_3637, End: 0x4041_4243_4445_4647, Data: []byte("thirteen byte")}
	n = encOp(w[:], op, 0x5051_5253_5455_5657, 0x6061_6263_6465_6667, 0, true, &nat)
	require.Equal(t, dataOpWords+nativeWords+2, n, "data op and native entries: words")
	_, ok, native = decode(w[:dataOpWords], &r, &h)
	require.True(t, ok && !native, "data op entry decodes as an OMPT record")
	assert.Equal(t, int32(ompt.CallbackTargetDataOp), r.Type, "data op: event")
	assert.Equal(t, uint64(0x5051_5253_5455_5657), r.Time, "data op: time")
	assert.Equal(t, uint64(0x0a0b_0c0d_0e0f_1011), r.ThreadID, "data op: thread")
	assert.Equal(t, uint64(0x1213_1415_1617_1819), r.TargetID, "data op: target_id")
	if b := r.DataOp(); assert.NotNil(t, b, "data op body") {
		assert.Equal(t, ompt.RecordTargetDataOp{HostOpID: 0x2021_2223_2425_2627, OpType: int32(ompt.DataOpTransferFromDevice),
			SrcAddr: 0x7e00_0000_1000, SrcDeviceNum: 3, DestAddr: 0xc000_1234_5678, DestDeviceNum: -1,
			Bytes: 1<<40 + 3, EndTime: 0x6061_6263_6465_6667, CodePtr: 0x4000_1000}, *b, "data op body")
	}
	e := w[dataOpWords:n]
	require.Equal(t, len(e), entWords(e[0]), "native entry: header length")
	data, ok, native := decode(e, &r, &h)
	require.True(t, native && !ok, "native entry decodes as a native record")
	assert.Equal(t, "thirteen byte", string(data), "native record bytes")
	assert.Equal(t, omptlink.Header{Marker: omptlink.Marker, Size: uint32(omptlink.HeaderSize + 16), HostOpID: 0x2021_2223_2425_2627,
		Class: int32(ompt.NativeRecordEvent), TypeIdx: internNative("ring test native"),
		Start: 0x3031_3233_3435_3637, End: 0x4041_4243_4445_4647, HWID: 0xfeed_beef_0000_0001}, h, "native header")
	assert.Equal(t, "ring test native", nativeName(h.TypeIdx), "native type name")

	kop := &TracedOp{event: ompt.CallbackTargetSubmit, thread: 7, targetID: 8, hostOpID: 9, teams: 0xffff_fff0}
	n = encOp(w[:], kop, 10, 11, 0xffff_fffe, true, nil)
	require.Equal(t, kernelWords, n, "kernel entry words")
	_, ok, _ = decode(w[:n], &r, &h)
	require.True(t, ok, "kernel entry decodes as an OMPT record")
	assert.Equal(t, int32(ompt.CallbackTargetSubmit), r.Type, "kernel: event")
	assert.Equal(t, uint64(10), r.Time, "kernel: time")
	assert.Equal(t, uint64(7), r.ThreadID, "kernel: thread")
	assert.Equal(t, uint64(8), r.TargetID, "kernel: target_id")
	if b := r.Kernel(); assert.NotNil(t, b, "kernel body") {
		assert.Equal(t, ompt.RecordTargetKernel{HostOpID: 9, RequestedNumTeams: 0xffff_fff0, GrantedNumTeams: 0xffff_fffe, EndTime: 11}, *b, "kernel body")
	}

	// A native record alone, empty: its entry still holds a word of data
	// in the buffer (EntryAt's rule), and no bytes.
	n = encOp(w[:], kop, 1, 2, 0, false, &NativeInfo{Class: ompt.NativeRecordInfo})
	require.Equal(t, nativeWords, n, "empty native entry words")
	data, _, native = decode(w[:n], &r, &h)
	assert.True(t, native, "empty native entry")
	assert.Nil(t, data, "empty native record bytes")
	assert.Equal(t, uint32(omptlink.HeaderSize+8), h.Size, "empty native entry's size in the buffer")
	assert.Equal(t, "native", nativeName(h.TypeIdx), "an unnamed native type")

	// The longest native record is cut at NativeMax.
	big := make([]byte, omptlink.NativeMax+9)
	for i := range big {
		big[i] = byte(i)
	}
	n = encOp(w[:], op, 1, 2, 0, true, &NativeInfo{Data: big})
	require.Equal(t, entMaxWords, n, "the longest entries: entMaxWords")
	data, _, _ = decode(w[dataOpWords:n], &r, &h)
	assert.Equal(t, big[:omptlink.NativeMax], data, "a record past NativeMax: its first NativeMax bytes")
}

// TestLinkEventsAreOMPTs: the event numbers link's EntryAt recognises are
// the Callback constants of the records the ring writes, and the native
// header's size is ompt's.
func TestLinkEventsAreOMPTs(t *testing.T) {
	assert.Equal(t, int(ompt.CallbackTarget), omptlink.EventTarget, "target")
	assert.Equal(t, int(ompt.CallbackTargetDataOp), omptlink.EventDataOp, "target_data_op")
	assert.Equal(t, int(ompt.CallbackTargetSubmit), omptlink.EventSubmit, "target_submit")
	assert.Equal(t, ompt.RecordOMPTSize, omptlink.OMPTSize, "ompt_record_ompt_t")
	assert.Equal(t, 48, ompt.NativeHeaderSize, "native header (ompt/record.go's comment)")
	assert.Equal(t, uintptr(ompt.NativeHeaderSize), unsafe.Sizeof(omptlink.Header{}), "native header")
}

// decode writes entry e into the tool's buffer format, as the tracing
// goroutine does (deliver): an OMPT record in r (ok), or, for a native
// entry, its header in h and its record's bytes in data, which alias e
// (native).
func decode(e []uint64, r *ompt.RecordOMPT, h *omptlink.Header) (data []byte, ok, native bool) {
	switch entKind(e[0]) {
	case entTarget, entDataOp, entKernel:
		decOMPT(e, r)
	case entNative:
		return decNative(e, h), false, true
	default:
		return nil, false, false
	}
	return nil, true, false
}
