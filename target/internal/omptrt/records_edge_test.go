package omptrt

import (
	"testing"
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			require.Equal(t, ompt.RecordKindOMPT, kind, "record kind")
			k++
		}
		return k
	}
	assert.Equal(t, n, count(b, uint64(len(b))), "records in a part of exactly %d", n)
	assert.Equal(t, n-1, count(b, uint64(len(b)-8)), "records when the part ends 8 bytes into the last")
	last := uint64((n - 1) * size)
	assert.NotNil(t, ompt.RecordAt(b, last), "RecordAt of the record ending the buffer")
	assert.Nil(t, ompt.RecordAt(b[:len(b)-1], last), "RecordAt of a record the buffer cuts short by a byte")
	assert.Nil(t, ompt.RecordAt(b, uint64(len(b))), "RecordAt at the buffer's end")
	assert.Nil(t, ompt.RecordAt(b, uint64(len(b)-4)), "RecordAt just before the buffer's end")

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
		assert.Len(t, collect(ompt.Records(nb, uint64(len(nb)), 0)), c.want, "native entry %d bytes past the part's end", c.extra)
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
		s, name, ok := enum(bad)
		assert.False(t, ok, "enumerate_states(%#x) = %#x %q, true; want the end", bad, s, name)
	}
	assert.Zero(t, e["ompt_get_num_devices"].(ompt.GetNumDevicesFunc)(), "get_num_devices with no runtime")
}
