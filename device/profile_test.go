package device

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestNativeRecords: each plugin's record goes into a Native and comes
// back out as the same value and as its own bytes (what a tool reads);
// asking for another plugin's type, or for the bytes of no record, gives
// nothing.
func TestNativeRecords(t *testing.T) {
	h := HostRecord{Start: 10, End: 20, Queue: 3}
	o := OpenCLRecord{Queued: 1, Submit: 2, Start: 3, End: 4}
	c := CUDARecord{Start: 5, End: 6, Stream: 0xabc, Context: 0xdef}
	hn, on, cn := h.Native("host copy in", 3, 0), o.Native("opencl kernel", 1, 8), c.Native("cuda memcpy HtoD", 2, 0)
	assert.Equal(t, NativeHost, hn.Kind, "kinds %v %v %v", hn.Kind, on.Kind, cn.Kind)
	assert.Equal(t, NativeOpenCL, on.Kind, "kinds %v %v %v", hn.Kind, on.Kind, cn.Kind)
	assert.Equal(t, NativeCUDA, cn.Kind, "kinds %v %v %v", hn.Kind, on.Kind, cn.Kind)
	assert.Equal(t, "host copy in", hn.Type, "fields not kept: %+v %+v", hn, on)
	assert.EqualValues(t, 3, hn.HWID, "fields not kept: %+v %+v", hn, on)
	assert.EqualValues(t, 8, on.Teams, "fields not kept: %+v %+v", hn, on)
	if r, ok := RecordOf[HostRecord](hn); assert.True(t, ok, "RecordOf[HostRecord] = %+v, %v; want %+v", r, ok, h) {
		assert.Equal(t, h, r, "RecordOf[HostRecord] = %+v", r)
	}
	if r, ok := RecordOf[OpenCLRecord](on); assert.True(t, ok, "RecordOf[OpenCLRecord] = %+v, %v; want %+v", r, ok, o) {
		assert.Equal(t, o, r, "RecordOf[OpenCLRecord] = %+v", r)
	}
	if r, ok := RecordOf[CUDARecord](cn); assert.True(t, ok, "RecordOf[CUDARecord] = %+v, %v; want %+v", r, ok, c) {
		assert.Equal(t, c, r, "RecordOf[CUDARecord] = %+v", r)
	}
	_, ok := RecordOf[CUDARecord](hn)
	assert.False(t, ok, "a host record read as a CUDA record")
	want := unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h))
	got := hn.Bytes()
	assert.True(t, bytes.Equal(got, want), "Bytes = %x, want the HostRecord's %x", got, want)
	assert.Len(t, on.Bytes(), int(unsafe.Sizeof(o)), "Bytes lengths %d %d, want the records' sizes", len(on.Bytes()), len(cn.Bytes()))
	assert.Len(t, cn.Bytes(), int(unsafe.Sizeof(c)), "Bytes lengths %d %d, want the records' sizes", len(on.Bytes()), len(cn.Bytes()))
	var none Native
	assert.Nil(t, none.Bytes(), "Bytes of no record is not nil")
	_, ok = RecordOf[HostRecord](none)
	assert.False(t, ok, "RecordOf found a record in an empty Native")
}
