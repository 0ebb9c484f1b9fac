package device

import (
	"bytes"
	"testing"
	"unsafe"
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
	if hn.Kind != NativeHost || on.Kind != NativeOpenCL || cn.Kind != NativeCUDA {
		t.Errorf("kinds %v %v %v", hn.Kind, on.Kind, cn.Kind)
	}
	if hn.Type != "host copy in" || hn.HWID != 3 || on.Teams != 8 {
		t.Errorf("fields not kept: %+v %+v", hn, on)
	}
	if r, ok := RecordOf[HostRecord](hn); !ok || r != h {
		t.Errorf("RecordOf[HostRecord] = %+v, %v; want %+v", r, ok, h)
	}
	if r, ok := RecordOf[OpenCLRecord](on); !ok || r != o {
		t.Errorf("RecordOf[OpenCLRecord] = %+v, %v; want %+v", r, ok, o)
	}
	if r, ok := RecordOf[CUDARecord](cn); !ok || r != c {
		t.Errorf("RecordOf[CUDARecord] = %+v, %v; want %+v", r, ok, c)
	}
	if _, ok := RecordOf[CUDARecord](hn); ok {
		t.Error("a host record read as a CUDA record")
	}
	want := unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h))
	if got := hn.Bytes(); !bytes.Equal(got, want) {
		t.Errorf("Bytes = %x, want the HostRecord's %x", got, want)
	}
	if len(on.Bytes()) != int(unsafe.Sizeof(o)) || len(cn.Bytes()) != int(unsafe.Sizeof(c)) {
		t.Errorf("Bytes lengths %d %d, want the records' sizes", len(on.Bytes()), len(cn.Bytes()))
	}
	var none Native
	if none.Bytes() != nil {
		t.Error("Bytes of no record is not nil")
	}
	if _, ok := RecordOf[HostRecord](none); ok {
		t.Error("RecordOf found a record in an empty Native")
	}
}
