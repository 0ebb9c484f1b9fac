package omptrt

import (
	"github.com/gompt/gompt/ompt"
	"testing"
	"unsafe"
)

// alignedBytes returns n bytes (a multiple of 8) starting 8-byte aligned,
// as a trace buffer is.
func alignedBytes(n int) []byte {
	w := make([]uint64, n/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

// TestRecordsToTheLastByte: a Go tool walking a completed buffer part
// sees every record, including one that ends exactly at the part's end,
// and nothing of a record that the part cuts short.
func TestRecordsToTheLastByte(t *testing.T) {
	const n = 3
	size := ompt.RecordOMPTSize
	b := alignedBytes(n * size)
	for i := range n {
		*(*int32)(unsafe.Pointer(&b[i*size])) = int32(ompt.CallbackTargetDataOp)
	}
	count := func(b []byte, bytes uint64) int {
		k := 0
		for _, kind := range ompt.Records(b, bytes, 0) {
			if kind != ompt.RecordKindOMPT {
				t.Fatalf("kind %v", kind)
			}
			k++
		}
		return k
	}
	if got := count(b, uint64(len(b))); got != n {
		t.Errorf("%d records in a part of exactly %d", got, n)
	}
	if got := count(b, uint64(len(b)-8)); got != n-1 {
		t.Errorf("%d records when the part ends 8 bytes into the last; want %d", got, n-1)
	}
	last := uint64((n - 1) * size)
	if ompt.RecordAt(b, last) == nil {
		t.Error("RecordAt of the record ending the buffer: nil")
	}
	if ompt.RecordAt(b[:len(b)-1], last) != nil {
		t.Error("RecordAt of a record the buffer cuts short by a byte: not nil")
	}
	if ompt.RecordAt(b, uint64(len(b))) != nil || ompt.RecordAt(b, uint64(len(b)-4)) != nil {
		t.Error("RecordAt at or just before the buffer's end: not nil")
	}

	// A native entry filling the rest of the part exactly, then one a
	// word longer than the part.
	for _, c := range []struct {
		extra uint32
		want  int
	}{{0, 2}, {8, 1}} {
		nb := alignedBytes(size + ompt.NativeHeaderSize + 16)
		*(*int32)(unsafe.Pointer(&nb[0])) = int32(ompt.CallbackTarget)
		*(*int32)(unsafe.Pointer(&nb[size])) = ompt.NativeMarker
		*(*uint32)(unsafe.Add(unsafe.Pointer(&nb[size]), 4)) = uint32(ompt.NativeHeaderSize+16) + c.extra
		if got := len(collect(ompt.Records(nb, uint64(len(nb)), 0))); got != c.want {
			t.Errorf("native entry %d bytes past the part's end: %d entries, want %d", c.extra, got, c.want)
		}
	}
}

func collect(seq func(func(uint64, ompt.RecordKind) bool)) []ompt.RecordKind {
	var ks []ompt.RecordKind
	for _, k := range seq {
		ks = append(ks, k)
	}
	return ks
}

// TestEntryPointsBeforeAndBeyond: ompt_enumerate_states given a value
// that is no state ends the enumeration (it does not panic), and
// ompt_get_num_devices answers 0 while no runtime has registered.
func TestEntryPointsBeforeAndBeyond(t *testing.T) {
	reset(t, nil)
	e := hostEntries(&tool{})
	enum := e["ompt_enumerate_states"].(ompt.EnumerateStatesFunc)
	for _, bad := range []int{-5, 0x7fff, 1 << 20} {
		if s, name, ok := enum(bad); ok {
			t.Errorf("enumerate_states(%#x) = %#x %q, true; want the end", bad, s, name)
		}
	}
	if n := e["ompt_get_num_devices"].(ompt.GetNumDevicesFunc)(); n != 0 {
		t.Errorf("get_num_devices with no runtime: %d, want 0", n)
	}
}
